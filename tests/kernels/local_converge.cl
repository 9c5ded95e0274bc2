/* A do/while loop with barriers whose trip count is decided by the group at run time through
   a __local flag: min-label propagation along runs of equal colours until nothing changes. */
__kernel void local_converge(__global const int *colour, __global int *label, __global int *rounds)
{
    __local int lab[64];
    __local int col[64];
    __local int changed;
    int lid = get_local_id(0);
    int gid = get_global_id(0);
    int n = get_local_size(0);
    col[lid] = colour[gid];
    lab[lid] = lid;
    int r = 0;
    do {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0)
            changed = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        int best = lab[lid];
        if (lid > 0 && col[lid - 1] == col[lid])
            best = min(best, lab[lid - 1]);
        if (lid < n - 1 && col[lid + 1] == col[lid])
            best = min(best, lab[lid + 1]);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (best != lab[lid]) {
            lab[lid] = best;
            changed = 1;
        }
        r++;
        barrier(CLK_LOCAL_MEM_FENCE);
    } while (changed);
    label[gid] = lab[lid];
    if (lid == 0)
        rounds[get_group_id(0)] = r;
}
