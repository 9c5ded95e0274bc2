/* Sign and zero extension, and conversions between floats and unsigned/64-bit integers. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void int_conversions(__global const char *c, __global const uint *u, __global const ulong *ul,
                              __global const float *f, __global uint *ou, __global long *ol,
                              __global float *of, __global double *od)
{
    int i = get_global_id(0);
    char x = c[i];
    ou[4 * i] = (uint)x;                 /* sign-extends */
    ou[4 * i + 1] = (uint)(uchar)x;      /* zero-extends */
    ou[4 * i + 2] = (uint)f[i];          /* f in [0, 4e9): beyond INT_MAX too */
    ou[4 * i + 3] = convert_uint((ushort)x);
    ol[3 * i] = (long)x;
    ol[3 * i + 1] = (long)u[i];          /* zero-extends */
    ol[3 * i + 2] = (long)(int)u[i];     /* reinterpreted as signed, then sign-extended */
    of[3 * i] = (float)u[i];             /* unsigned, not signed, conversion */
    of[3 * i + 1] = (float)ul[i];
    of[3 * i + 2] = (float)x;
    od[2 * i] = (double)ul[i];
    od[2 * i + 1] = (double)(long)ul[i];
}
