/* Matrix-vector product y = A x, one row per work-item. */
__kernel void matvec(__global const float *A, __global const float *x, __global float *y,
                     const int rows, const int cols)
{
    int r = get_global_id(0);
    if (r >= rows)
        return;
    float acc = 0.0f;
    __global const float *row = A + r * cols;
    for (int c = 0; c < cols; c++)
        acc += row[c] * x[c];
    y[r] = acc;
}
