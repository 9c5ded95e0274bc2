/* Matrix-vector product, one work-group per row, partial dot products reduced in __local. */
__kernel void matvec_local(__global const float *A, __global const float *x, __global float *y,
                           const int cols, __local float *part)
{
    int r = get_group_id(0);
    int lid = get_local_id(0);
    int ls = get_local_size(0);
    float acc = 0.0f;
    for (int c = lid; c < cols; c += ls)
        acc = fma(A[r * cols + c], x[c], acc);
    part[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = ls / 2; s > 0; s /= 2) {
        if (lid < s)
            part[lid] += part[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        y[r] = part[0];
}
