/* Bitonic sort of each work-group's slice in __local memory: barriers inside nested loops. */
__kernel void bitonic_local(__global const float *in, __global float *out, __local float *s)
{
    int lid = get_local_id(0);
    int n = get_local_size(0);
    int base = get_group_id(0) * n;
    s[lid] = in[base + lid];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 2; k <= n; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            int partner = lid ^ j;
            if (partner > lid) {
                bool up = (lid & k) == 0;
                float a = s[lid], b = s[partner];
                if ((a > b) == up) {
                    s[lid] = b;
                    s[partner] = a;
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    out[base + lid] = s[lid];
}
