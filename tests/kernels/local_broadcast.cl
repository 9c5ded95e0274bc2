/* One work-item fills __local values the whole group then reads; two LocalMemory arguments. */
__kernel void local_broadcast(__global const int *in, __global int *out,
                              __local int *group_max, __local int *copy)
{
    int lid = get_local_id(0);
    int gid = get_global_id(0);
    int ls = get_local_size(0);
    copy[lid] = in[gid];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        int m = copy[0];
        for (int k = 1; k < ls; k++)
            m = max(m, copy[k]);
        group_max[0] = m;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    out[gid] = group_max[0] - copy[ls - 1 - lid];
}
