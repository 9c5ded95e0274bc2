/* Matrix transpose through a padded 2-D __local tile; 2-D NDRange, 16x16 groups. */
#define TILE 16
__kernel void transpose_local(__global const float *in, __global float *out,
                              const int rows, const int cols)
{
    __local float tile[TILE][TILE + 1];
    int x = get_global_id(0), y = get_global_id(1);
    int lx = get_local_id(0), ly = get_local_id(1);
    if (x < cols && y < rows)
        tile[ly][lx] = in[y * cols + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    int ox = get_group_id(1) * TILE + lx;
    int oy = get_group_id(0) * TILE + ly;
    if (ox < rows && oy < cols)
        out[oy * rows + ox] = tile[lx][ly];
}
