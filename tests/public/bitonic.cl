/* Bitonic sort in __local memory (the AMD APP SDK / NVIDIA sample shape): each work-group of
   CHUNK/2 work-items sorts its CHUNK keys ascending, every work-item doing one compare-exchange
   per stage, barriers between stages. */
#define CHUNK 64

__kernel void bitonic_local(__global uint *keys)
{
    __local uint s[CHUNK];
    int lid = get_local_id(0);
    int base = get_group_id(0) * CHUNK;
    s[lid] = keys[base + lid];
    s[lid + CHUNK / 2] = keys[base + lid + CHUNK / 2];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int size = 2; size <= CHUNK; size <<= 1) {
        for (int stride = size / 2; stride > 0; stride >>= 1) {
            int pos = 2 * lid - (lid & (stride - 1));       /* first of the pair this work-item owns */
            bool up = (pos & size) == 0;
            uint a = s[pos], b = s[pos + stride];
            if ((a > b) == up) {
                s[pos] = b;
                s[pos + stride] = a;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    keys[base + lid] = s[lid];
    keys[base + lid + CHUNK / 2] = s[lid + CHUNK / 2];
}
