/* Sixteen buffer arguments and four scalars in one kernel. */
__kernel void many_args(__global const int *a0, __global const int *a1, __global const int *a2,
                        __global const int *a3, __global const int *a4, __global const int *a5,
                        __global const int *a6, __global const int *a7,
                        __global int *o0, __global int *o1, __global int *o2, __global int *o3,
                        __global int *o4, __global int *o5, __global int *o6, __global int *o7,
                        const int s0, const int s1, const int s2, const int s3)
{
    int i = get_global_id(0);
    o0[i] = a0[i] + s0;
    o1[i] = a1[i] - s1;
    o2[i] = a2[i] * s2;
    o3[i] = a3[i] ^ s3;
    o4[i] = a4[i] + a0[i];
    o5[i] = a5[i] - a1[i];
    o6[i] = a6[i] * a2[i];
    o7[i] = a7[i] | a3[i];
}
