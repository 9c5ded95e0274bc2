/* vloadN/vstoreN need only element alignment: addresses p + i for every i. */
__kernel void vload_unaligned(__global const float *a, __global float *out, __global const short *h,
                              __global short *hout)
{
    int i = get_global_id(0);
    float4 v = vload4(0, a + i);
    float8 w = vload8(0, a + 3 * i + 1);
    vstore4(v + w.lo + w.hi, 0, out + 5 * i + 1);
    short2 p = vload2(0, h + i);
    vstore2(p * (short)3, 0, hout + 3 * i + 1);
}
