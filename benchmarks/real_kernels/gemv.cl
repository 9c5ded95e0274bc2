/* y = W x with W row-major: one work-item per row, a plain loop along it (the issue's shape). */
__kernel void gemv(__global const float *W, __global const float *x, __global float *y, int rows, int cols)
{
    int r = get_global_id(0);
    if (r < rows) {
        float s = 0.0f;
        for (int k = 0; k < cols; k++)
            s += W[r * cols + k] * x[k];
        y[r] = s;
    }
}
