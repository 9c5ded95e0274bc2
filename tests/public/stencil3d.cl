/* SHOC / Parboil 3-D stencil shape: a 7-point stencil on a 3-D range (dimension 0 fastest in
   memory); boundary points are copied through unchanged. */
__kernel void stencil7(__global const float *in, __global float *out, int nx, int ny, int nz,
                       float c0, float c1)
{
    int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    if (x >= nx || y >= ny || z >= nz)
        return;
    int plane = nx * ny;
    int at = z * plane + y * nx + x;
    if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1) {
        out[at] = in[at];
        return;
    }
    out[at] = c0 * in[at] + c1 * (in[at - 1] + in[at + 1] + in[at - nx] + in[at + nx]
                                  + in[at - plane] + in[at + plane]);
}
