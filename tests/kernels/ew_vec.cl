/* Element-wise ops in the vector type VT (set with -D VT=... -D ST=<its scalar>). */
#ifdef USE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
__kernel void ew_vec(__global const VT *a, __global const VT *b, __global VT *out)
{
    int i = get_global_id(0);
    VT x = a[i], y = b[i];
    VT r = x * y + (VT)((ST)1);
    r -= y;
    r.s0 = x.s1 + (ST)i;
    out[i] = r;
}
