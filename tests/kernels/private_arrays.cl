/* Multi-dimensional private arrays: a 4x4 matrix per work-item, transposed and multiplied. */
__kernel void private_arrays(__global const float *in, __global float *out, __global int *hist)
{
    int i = get_global_id(0);
    float m[4][4];
    float t[4][4];
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++)
            m[r][c] = in[16 * i + 4 * r + c];
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++)
            t[c][r] = m[r][c];
    for (int r = 0; r < 4; r++) {
        for (int c = 0; c < 4; c++) {
            float acc = 0.0f;
            for (int k = 0; k < 4; k++)
                acc += m[r][k] * t[k][c];
            out[16 * i + 4 * r + c] = acc;
        }
    }
    int h[5] = {0};
    for (int k = 0; k < 16; k++) {
        int bin = (int)(m[k / 4][k % 4] * 5.0f);
        h[bin < 0 ? 0 : bin > 4 ? 4 : bin]++;
    }
    for (int b = 0; b < 5; b++)
        hist[5 * i + b] = h[b];
}
