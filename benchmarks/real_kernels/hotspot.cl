/* Rodinia hotspot's update, one work-item per cell on a 2-D range with 16 x 16 work-groups,
   neighbours clamped at the edges, one launch per time step into the other buffer. */
__kernel void hotspot_step(__global const float *power, __global const float *temp, __global float *out,
                           int rows, int cols, float cap, float rx, float ry, float rz, float amb)
{
    int c = get_global_id(0);
    int r = get_global_id(1);
    if (r < rows && c < cols) {
        int i = r * cols + c;
        float t = temp[i];
        float tn = temp[(r > 0 ? r - 1 : r) * cols + c];
        float ts = temp[(r < rows - 1 ? r + 1 : r) * cols + c];
        float tw = temp[r * cols + (c > 0 ? c - 1 : c)];
        float te = temp[r * cols + (c < cols - 1 ? c + 1 : c)];
        out[i] = t + cap * (power[i] + (tn + ts - 2.0f * t) * ry + (te + tw - 2.0f * t) * rx + (amb - t) * rz);
    }
}
