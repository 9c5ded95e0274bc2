/* SHOC reduction shape: every work-item strides over the input by the global size, then the
   work-group folds its partial sums in __local memory, halving the active work-items between
   barriers; work-item 0 writes the group's sum.  The host launches it again on the partial sums
   with one work-group. */
__kernel void reduce_sum(__global const float *in, __global float *partial, __local float *scratch,
                         unsigned int n)
{
    unsigned int lid = get_local_id(0);
    float acc = 0.0f;
    for (unsigned int i = get_global_id(0); i < n; i += get_global_size(0))
        acc += in[i];
    scratch[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (unsigned int active = get_local_size(0) / 2; active > 0; active >>= 1) {
        if (lid < active)
            scratch[lid] += scratch[lid + active];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = scratch[0];
}
