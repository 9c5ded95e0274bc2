/* C casts: float->int truncation, int->narrow wrap-around, double<->float, long mixing. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void casts_c(__global const float *f, __global const int *k, __global const double *d,
                      __global int *ti, __global uchar *tu8, __global short *ts16,
                      __global float *tf, __global long *tl)
{
    int i = get_global_id(0);
    ti[i] = (int)f[i];
    tu8[i] = (uchar)k[i];
    ts16[i] = (short)(k[i] & 0x7fff) - (short)100;
    tf[i] = (float)d[i];
    tl[2 * i] = (long)d[i];
    tl[2 * i + 1] = (long)k[i] * 100000L + (long)(uint)k[i];
}
