/* SHOC spmv shape, CSR scalar kernel: one work-item per row walks that row's run of the value and
   column arrays, gathering from the vector. */
__kernel void spmv_csr_scalar(__global const float *val, __global const int *cols,
                              __global const int *row_start, __global const float *vec,
                              __global float *out, int rows)
{
    int row = get_global_id(0);
    if (row < rows) {
        float sum = 0.0f;
        int end = row_start[row + 1];
        for (int k = row_start[row]; k < end; k++)
            sum += val[k] * vec[cols[k]];
        out[row] = sum;
    }
}
