/* 5-point Laplacian on a 2-D grid; the border is copied; 2-D NDRange with guards. */
__kernel void stencil2d(__global const float *u, __global float *v, const int nx, const int ny)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= nx || y >= ny)
        return;
    int c = y * nx + x;
    if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) {
        v[c] = u[c];
    } else {
        v[c] = u[c - 1] + u[c + 1] + u[c - nx] + u[c + nx] - 4.0f * u[c];
    }
}
