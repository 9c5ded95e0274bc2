/* Inclusive prefix sum within a work-group (Hillis-Steele, double-buffered in __local). */
__kernel void scan_local(__global const int *in, __global int *out, __local int *buf)
{
    int lid = get_local_id(0);
    int n = get_local_size(0);
    int gid = get_global_id(0);
    __local int *src = buf;
    __local int *dst = buf + n;
    src[lid] = in[gid];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = 1; off < n; off *= 2) {
        int v = src[lid];
        if (lid >= off)
            v += src[lid - off];
        dst[lid] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        __local int *t = src;
        src = dst;
        dst = t;
    }
    out[gid] = src[lid];
}
