/* Max and min of uints in two __local arrays, and the index of the max. */
__kernel void reduce_max_min(__global const uint *in, __global uint *gmax, __global uint *gmin,
                             __global int *gargmax, __local uint *lmax, __local uint *lmin,
                             __local int *larg)
{
    int lid = get_local_id(0);
    int gid = get_global_id(0);
    lmax[lid] = in[gid];
    lmin[lid] = in[gid];
    larg[lid] = gid;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = get_local_size(0) >> 1; s > 0; s >>= 1) {
        if (lid < s) {
            uint other = lmax[lid + s];
            if (other > lmax[lid] || (other == lmax[lid] && larg[lid + s] < larg[lid])) {
                lmax[lid] = other;
                larg[lid] = larg[lid + s];
            }
            lmin[lid] = min(lmin[lid], lmin[lid + s]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        int g = get_group_id(0);
        gmax[g] = lmax[0];
        gmin[g] = lmin[0];
        gargmax[g] = larg[0];
    }
}
