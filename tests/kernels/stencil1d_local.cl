/* 5-point 1-D stencil reading a __local tile with a halo of 2 on each side. */
#define R 2
__kernel void stencil1d_local(__global const float *in, __global float *out,
                              __local float *tile, const int n)
{
    int gid = get_global_id(0);
    int lid = get_local_id(0);
    int lsize = get_local_size(0);
    int base = get_group_id(0) * lsize;
    for (int k = lid; k < lsize + 2 * R; k += lsize) {
        int g = base + k - R;
        tile[k] = (g >= 0 && g < n) ? in[g] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (gid < n) {
        float acc = 0.0f;
        for (int d = -R; d <= R; d++)
            acc += tile[lid + R + d] * (float)(R + 1 - abs(d));
        out[gid] = acc;
    }
}
