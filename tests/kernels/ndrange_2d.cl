/* Every work-item query of a 2-D NDRange, written to 8 planes of a (8, H, W) output. */
__kernel void ndrange_2d(__global int *out)
{
    int x = get_global_id(0), y = get_global_id(1);
    int w = get_global_size(0), h = get_global_size(1);
    int plane = w * h;
    int c = y * w + x;
    out[c] = get_local_id(0) + 100 * get_local_id(1);
    out[plane + c] = get_group_id(0) + 100 * get_group_id(1);
    out[2 * plane + c] = get_num_groups(0) + 100 * get_num_groups(1);
    out[3 * plane + c] = get_local_size(0) + 100 * get_local_size(1);
    out[4 * plane + c] = get_work_dim();
    out[5 * plane + c] = get_global_size(0) * 1000 + get_global_size(1);
    out[6 * plane + c] = get_group_id(0) * get_local_size(0) + get_local_id(0) == get_global_id(0);
    out[7 * plane + c] = get_global_id(2) + get_local_size(2) + get_num_groups(2);
}
