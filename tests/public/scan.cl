/* SHOC scan shape, three kernels: each work-group sums its block of the input (block_sums), one
   work-group scans those sums (top_scan), then each work-group scans its block again, seeded with
   the scanned sum of the blocks before it (bottom_scan).  The in-group scans double-buffer in
   __local memory and pick the buffer to read with a pointer `p = cond ? a : b`. */
#define WG 32

/* inclusive scan of one value per work-item over the work-group: the group total in *total */
static int group_scan(int value, __local int *ping, __local int *pong, int *total)
{
    int lid = get_local_id(0);
    ping[lid] = value;
    barrier(CLK_LOCAL_MEM_FENCE);
    int step = 0;
    for (int d = 1; d < WG; d <<= 1, step++) {
        __local int *src = (step & 1) ? pong : ping;
        __local int *dst = (step & 1) ? ping : pong;
        dst[lid] = lid >= d ? src[lid] + src[lid - d] : src[lid];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    __local int *last = (step & 1) ? pong : ping;
    int mine = last[lid];
    *total = last[WG - 1];
    barrier(CLK_LOCAL_MEM_FENCE);
    return mine;
}

__kernel void block_sums(__global const int *in, __global int *isums, int n, int block)
{
    __local int sums[WG];
    int lid = get_local_id(0);
    int begin = get_group_id(0) * block;
    int end = min(begin + block, n);
    int acc = 0;
    for (int i = begin + lid; i < end; i += WG)
        acc += in[i];
    sums[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int active = WG / 2; active > 0; active >>= 1) {
        if (lid < active)
            sums[lid] += sums[lid + active];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        isums[get_group_id(0)] = sums[0];
}

__kernel void top_scan(__global int *isums, int groups)
{
    __local int ping[WG], pong[WG];
    int lid = get_local_id(0);
    int total;
    int v = lid < groups ? isums[lid] : 0;
    int inclusive = group_scan(v, ping, pong, &total);
    if (lid < groups)
        isums[lid] = inclusive - v;          /* exclusive: the sum of the blocks before */
}

__kernel void bottom_scan(__global const int *in, __global int *out, __global const int *isums,
                          int n, int block)
{
    __local int ping[WG], pong[WG];
    int lid = get_local_id(0);
    int begin = get_group_id(0) * block;
    int end = min(begin + block, n);
    int carry = isums[get_group_id(0)];
    for (int base = begin; base < end; base += WG) {
        int i = base + lid;
        int v = i < end ? in[i] : 0;
        int total;
        int inclusive = group_scan(v, ping, pong, &total);
        if (i < end)
            out[i] = carry + inclusive;
        carry += total;
    }
}
