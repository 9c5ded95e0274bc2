/* Rodinia hotspot shape: one explicit step of the chip heat equation on a 2-D grid.  A work-group
   stages its tile plus a one-cell halo in __local memory (edges clamped to the grid), and `bool`
   flags set with `true` / `false` decide which work-items load halo cells and which compute. */
#define TILE 8

__kernel void hotspot_step(__global const float *power, __global const float *temp_in,
                           __global float *temp_out, int rows, int cols,
                           float cap_inv, float rx_inv, float ry_inv, float rz_inv, float ambient)
{
    __local float t[TILE + 2][TILE + 2];
    int lx = get_local_id(0), ly = get_local_id(1);
    int c = get_global_id(0), r = get_global_id(1);
    bool inside = false;
    if (r < rows && c < cols)
        inside = true;
    int rc = min(r, rows - 1), cc = min(c, cols - 1);

    t[ly + 1][lx + 1] = temp_in[rc * cols + cc];
    bool west_edge = lx == 0 ? true : false;
    bool east_edge = lx == TILE - 1;
    if (west_edge)
        t[ly + 1][0] = temp_in[rc * cols + max(cc - 1, 0)];
    if (east_edge)
        t[ly + 1][TILE + 1] = temp_in[rc * cols + min(cc + 1, cols - 1)];
    if (ly == 0)
        t[0][lx + 1] = temp_in[max(rc - 1, 0) * cols + cc];
    if (ly == TILE - 1)
        t[TILE + 1][lx + 1] = temp_in[min(rc + 1, rows - 1) * cols + cc];
    barrier(CLK_LOCAL_MEM_FENCE);

    if (inside == true) {
        float centre = t[ly + 1][lx + 1];
        float ns = t[ly][lx + 1] + t[ly + 2][lx + 1] - 2.0f * centre;
        float ew = t[ly + 1][lx] + t[ly + 1][lx + 2] - 2.0f * centre;
        /* a cell on the grid's edge sees itself beyond it (clamped above): no flow across */
        temp_out[r * cols + c] = centre + cap_inv * (power[r * cols + c] + ns * ry_inv + ew * rx_inv
                                                     + (ambient - centre) * rz_inv);
    }
}
