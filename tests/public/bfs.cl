/* Rodinia bfs shape (its OpenCL version): byte masks set with `true` / `false`.  visit_frontier
   expands every frontier node; several frontier nodes may store the same cost (level + 1) and
   the same `true` to one neighbour, a benign race: any one of the equal stores may win.
   settle_frontier makes the next frontier and raises *again when there is one. */
typedef struct {
    int first;
    int count;
} node_t;

__kernel void visit_frontier(__global const node_t *nodes, __global const int *edges,
                             __global char *frontier, __global char *next, __global const char *visited,
                             __global int *cost, int n)
{
    int tid = get_global_id(0);
    if (tid < n && frontier[tid]) {
        frontier[tid] = false;
        int end = nodes[tid].first + nodes[tid].count;
        for (int e = nodes[tid].first; e < end; e++) {
            int to = edges[e];
            if (!visited[to]) {
                cost[to] = cost[tid] + 1;
                next[to] = true;
            }
        }
    }
}

__kernel void settle_frontier(__global char *frontier, __global char *next, __global char *visited,
                              __global char *again, int n)
{
    int tid = get_global_id(0);
    if (tid < n && next[tid]) {
        frontier[tid] = true;
        visited[tid] = true;
        *again = true;
        next[tid] = false;
    }
}
