/* SHOC scan's shape, three launches: each work-group sums its tile (each work-item a contiguous
   chunk, then a tree in __local memory); one work-group scans the tile sums (exclusive); each
   work-group scans its tile again, starting from its offset.  The result is the inclusive scan. */
__kernel void scan_sums(__global const float *in, __global float *sums, __local float *part, int chunk)
{
    int lid = get_local_id(0);
    int base = get_global_id(0) * chunk;
    float s = 0.0f;
    for (int k = 0; k < chunk; k++)
        s += in[base + k];
    part[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int span = get_local_size(0) / 2; span > 0; span /= 2) {
        if (lid < span)
            part[lid] += part[lid + span];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        sums[get_group_id(0)] = part[0];
}

/* Hillis-Steele inclusive scan of a[0 .. local size) in place, b the scratch. */
void scan_local(__local float *a, __local float *b)
{
    int lid = get_local_id(0);
    for (int d = 1; d < get_local_size(0); d *= 2) {
        b[lid] = lid >= d ? a[lid] + a[lid - d] : a[lid];
        barrier(CLK_LOCAL_MEM_FENCE);
        a[lid] = b[lid];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

__kernel void scan_top(__global float *sums, __local float *a, __local float *b, int groups)
{
    int lid = get_local_id(0);
    a[lid] = (lid > 0 && lid <= groups) ? sums[lid - 1] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    scan_local(a, b);
    if (lid < groups)
        sums[lid] = a[lid];
}

__kernel void scan_bottom(__global const float *in, __global float *out, __global const float *offsets,
                          __local float *a, __local float *b, int chunk)
{
    int lid = get_local_id(0);
    int base = get_global_id(0) * chunk;
    float s = 0.0f;
    for (int k = 0; k < chunk; k++)
        s += in[base + k];
    a[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    scan_local(a, b);
    float run = offsets[get_group_id(0)] + (a[lid] - s);
    for (int k = 0; k < chunk; k++) {
        run += in[base + k];
        out[base + k] = run;
    }
}
