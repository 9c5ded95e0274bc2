/* vloadN/vstoreN on scalar pointers with element offsets. */
__kernel void vload_vstore(__global const float *a, __global float *out,
                           __global const int *ia, __global int *iout)
{
    int i = get_global_id(0);
    float4 v = vload4(i, a);
    float2 w = vload2(2 * i + 1, a);
    vstore4(v * 2.0f, i, out);
    vstore2(w + v.lo, i, out + 1024);
    int8 k = vload8(i, ia);
    vstore8(k.s01234567 * (int8)(i), i, iout);
    vstore16((int16)(k, k * 2), i, iout + 2048);
}
