/* y = W x with W stored column-major (Wt[k*rows + r]): the coalesced form a GPU programmer
   would pick, the peer of gemv.cl for the issue's cycles target. */
__kernel void gemv_t(__global const float *Wt, __global const float *x, __global float *y, int rows, int cols)
{
    int r = get_global_id(0);
    if (r < rows) {
        float s = 0.0f;
        for (int k = 0; k < cols; k++)
            s += Wt[k * rows + r] * x[k];
        y[r] = s;
    }
}
