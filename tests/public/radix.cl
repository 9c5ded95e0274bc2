/* A radix-ish sort (the shape of SHOC's and the SDK samples' radix sorts, without atomics): one
   launch per 4-bit digit, least significant first.  Each work-item ranks its key among all keys by
   the digit (stably, staging tiles of keys through __local memory) and scatters key and value to
   that rank.  The pass number picks which of two buffer pairs to read with `p = cond ? a : b`. */
#define TILE 64

__kernel void radix_pass(__global uint *keys_a, __global uint *vals_a,
                         __global uint *keys_b, __global uint *vals_b, int n, int pass)
{
    __local uint tile[TILE];
    __global const uint *src = (pass & 1) ? keys_b : keys_a;
    __global const uint *src_val = (pass & 1) ? vals_b : vals_a;
    __global uint *dst = (pass & 1) ? keys_a : keys_b;
    __global uint *dst_val = (pass & 1) ? vals_a : vals_b;
    int i = get_global_id(0);
    int lid = get_local_id(0);
    int shift = 4 * pass;
    uint key = i < n ? src[i] : 0;
    uint digit = (key >> shift) & 15u;
    int rank = 0;
    for (int base = 0; base < n; base += TILE) {
        tile[lid] = base + lid < n ? src[base + lid] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TILE && base + k < n; k++) {
            uint d = (tile[k] >> shift) & 15u;
            rank += (d < digit) || (d == digit && base + k < i);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (i < n) {
        dst[rank] = key;
        dst_val[rank] = src_val[i];
    }
}
