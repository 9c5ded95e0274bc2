/* Work-items exchange values through __global memory inside a group, across a barrier. */
__kernel void barrier_global(__global int *scratch, __global int *out)
{
    int gid = get_global_id(0);
    int lid = get_local_id(0);
    int ls = get_local_size(0);
    int base = gid - lid;
    scratch[gid] = gid * gid % 97;
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    int left = scratch[base + (lid + ls - 1) % ls];
    int right = scratch[base + (lid + 1) % ls];
    barrier(CLK_GLOBAL_MEM_FENCE);
    scratch[gid] = left - right;
    out[gid] = left + right;
}
