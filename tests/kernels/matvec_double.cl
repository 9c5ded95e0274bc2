/* Double-precision matrix-vector product with a transposed access (y = A^T x). */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void matvec_double(__global const double *A, __global const double *x, __global double *y,
                            const int rows, const int cols)
{
    int c = get_global_id(0);
    if (c >= cols)
        return;
    double acc = 0.0;
    for (int r = 0; r < rows; ++r)
        acc += A[r * cols + c] * x[r];
    y[c] = acc;
}
