/* By-value vectors and a struct as kernel arguments; bit reinterpretation between element sizes. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef struct { int a; float b; double c; short d; } params;

__kernel void byvalue_aggregates(params p, char8 c, __global const float *f, __global float *out,
                                 double2 dd, short3 s3, __global long *bits)
{
    int i = get_global_id(0);
    out[4 * i] = p.a + p.b * i;
    out[4 * i + 1] = (float)(p.c + p.d);
    out[4 * i + 2] = c.s0 + c.s5 * 10 + c.s7 * 100 + s3.z;
    out[4 * i + 3] = (float)(dd.x - dd.y);
    float2 v = (float2)(f[i], -2.0f * f[i]);
    bits[2 * i] = as_long(v);
    uchar4 b = as_uchar4(f[i]);
    bits[2 * i + 1] = as_int((uchar4)(b.w, b.z, b.y, b.x));
}
