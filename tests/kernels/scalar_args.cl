/* By-value arguments of every scalar size and a float4, mixed so their alignments differ. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void scalar_args(char c, __global long *out, uchar uc, short s, double d, ushort us,
                          int k, float f, uint u, long l, ulong ul, float4 v, __global double *fout)
{
    int i = get_global_id(0);
    out[10 * i] = c;
    out[10 * i + 1] = uc;
    out[10 * i + 2] = s;
    out[10 * i + 3] = us;
    out[10 * i + 4] = k + i;
    out[10 * i + 5] = u;
    out[10 * i + 6] = l;
    out[10 * i + 7] = (long)ul;
    out[10 * i + 8] = (long)(f * 4.0f);
    out[10 * i + 9] = c + uc + s + us + k;
    fout[2 * i] = d * i;
    fout[2 * i + 1] = v.x + 10.0f * v.y + 100.0f * v.z + 1000.0f * v.w;
}
