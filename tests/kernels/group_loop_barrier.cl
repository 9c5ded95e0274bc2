/* Barriers in a loop whose trip count is read from memory (the same for the whole group),
   and in a branch that is uniform across the group. */
__kernel void group_loop_barrier(__global const int *in, __global const int *rounds,
                                 __global int *out, __local int *buf)
{
    int lid = get_local_id(0);
    int ls = get_local_size(0);
    int g = get_group_id(0);
    int v = in[get_global_id(0)];
    int r = rounds[g];                     /* 0..5, uniform within the group */
    for (int k = 0; k < r; k++) {
        buf[lid] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        v = buf[(lid + 1) % ls] + (v & 3);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (g % 2 == 1) {                      /* uniform branch containing a barrier */
        buf[lid] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        v += buf[ls - 1 - lid];
    }
    out[get_global_id(0)] = v;
}
