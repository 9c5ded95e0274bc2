/* A global work offset: ids start at the offset; get_global_offset reports it. */
__kernel void global_offset(__global int *out, __global int *offs)
{
    int x = get_global_id(0), y = get_global_id(1);
    int w = 40;
    out[y * w + x] = x * 1000 + y + 1;
    if (x == get_global_offset(0) && y == get_global_offset(1)) {
        offs[0] = get_global_offset(0);
        offs[1] = get_global_offset(1);
        offs[2] = get_group_id(0) * 100 + get_group_id(1);
    }
}
