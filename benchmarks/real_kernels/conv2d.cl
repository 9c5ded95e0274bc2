/* PolyBench convolution-2d's shape with the 3x3 weights in a __constant buffer and plain loops
   over them: one work-item per output pixel, the border left as it is. */
__kernel void conv2d(__global const float *A, __constant float *w, __global float *B, int ni, int nj)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i > 0 && i < ni - 1 && j > 0 && j < nj - 1) {
        float acc = 0.0f;
        for (int di = -1; di <= 1; di++)
            for (int dj = -1; dj <= 1; dj++)
                acc += w[(di + 1) * 3 + dj + 1] * A[(i + di) * nj + j + dj];
        B[i * nj + j] = acc;
    }
}
