/* SHOC reduction's shape: each work-item sums a grid-stride slice, then a tree in __local
   memory with a barrier per level; the host relaunches it on one work-group for the partials. */
__kernel void reduce_sum(__global const float *in, __global float *out, __local float *part, int n)
{
    int lid = get_local_id(0);
    float s = 0.0f;
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
        s += in[i];
    part[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int span = get_local_size(0) / 2; span > 0; span /= 2) {
        if (lid < span)
            part[lid] += part[lid + span];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[get_group_id(0)] = part[0];
}
