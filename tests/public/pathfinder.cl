/* Rodinia pathfinder shape: dynamic programming row by row, one launch per row.  Each work-group
   stages the previous row's costs (with a one-column halo) in __local memory; a `bool` marks the
   columns inside the grid, set with `true` / `false`. */
#define BLOCK 16
#define BIG 0x3fffffff

__kernel void pathfinder_row(__global const int *wall, __global const int *prev, __global int *next,
                             int cols, int row)
{
    __local int cost[BLOCK + 2];
    int lx = get_local_id(0);
    int x = get_global_id(0);
    bool valid = false;
    if (x < cols)
        valid = true;
    cost[lx + 1] = valid ? prev[x] : BIG;
    if (lx == 0)
        cost[0] = x > 0 ? prev[x - 1] : BIG;
    if (lx == BLOCK - 1)
        cost[BLOCK + 1] = x + 1 < cols ? prev[x + 1] : BIG;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (valid) {
        int best = min(cost[lx], min(cost[lx + 1], cost[lx + 2]));
        next[x] = wall[row * cols + x] + best;
    }
}
