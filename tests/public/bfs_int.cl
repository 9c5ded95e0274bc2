/* The same breadth-first search in the OpenDwarfs shape: int masks set to 1 and 0, node starts
   and degrees as two int arrays.  Many frontier nodes store the same cost to one neighbour. */
__kernel void expand(__global const int *start, __global const int *degree, __global const int *edges,
                     __global int *frontier, __global int *next, __global const int *visited,
                     __global int *cost, int n)
{
    int tid = get_global_id(0);
    if (tid < n && frontier[tid] != 0) {
        frontier[tid] = 0;
        for (int e = start[tid]; e < start[tid] + degree[tid]; e++) {
            int to = edges[e];
            if (visited[to] == 0) {
                cost[to] = cost[tid] + 1;
                next[to] = 1;
            }
        }
    }
}

__kernel void advance(__global int *frontier, __global int *next, __global int *visited,
                      __global int *again, int n)
{
    int tid = get_global_id(0);
    if (tid < n && next[tid] == 1) {
        frontier[tid] = 1;
        visited[tid] = 1;
        *again = 1;
        next[tid] = 0;
    }
}
