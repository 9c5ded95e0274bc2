/* A 3x3 weighted blur of a uchar image with clamped edges; rounding, saturating store. */
__kernel void box_blur(__global const uchar *img, __global uchar *out, const int w, const int h)
{
    const int weights[3][3] = {{1, 2, 1}, {2, 4, 2}, {1, 2, 1}};
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h)
        return;
    float acc = 0.0f;
    for (int dy = -1; dy <= 1; dy++) {
        int yy = clamp(y + dy, 0, h - 1);
        for (int dx = -1; dx <= 1; dx++) {
            int xx = clamp(x + dx, 0, w - 1);
            acc += weights[dy + 1][dx + 1] * (float)img[yy * w + xx];
        }
    }
    out[y * w + x] = convert_uchar_sat_rte(acc / 16.0f * 1.25f);
}
