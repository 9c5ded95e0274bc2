/* SHOC spmv's scalar CSR kernel shape: one work-item per row, a loop over the row's nonzeros,
   x gathered through the column indices. */
__kernel void spmv_csr(__global const float *val, __global const int *col, __global const int *rowptr,
                       __global const float *x, __global float *y, int rows)
{
    int r = get_global_id(0);
    if (r < rows) {
        float s = 0.0f;
        for (int k = rowptr[r]; k < rowptr[r + 1]; k++)
            s += val[k] * x[col[k]];
        y[r] = s;
    }
}
