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

/* The same with each work-item's global id used directly as the index (the contiguous
 * accesses a 1-D launch streams): the offset moves which elements are read and written.
 * ids = 1 when the launch gives a local size (the local and group ids are then known). */
__kernel void global_offset_1d(__global const int *a, __global int *o, int ids)
{
    int i = get_global_id(0);
    o[i] = a[i] + 1000 * i + 100000 * ids * (int)get_local_id(0);
}

__kernel void global_offset_3d(__global const int *a, __global int *o, int w, int h, int ids)
{
    int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    int at = (z * h + y) * w + x;
    o[at] = a[at] + 1000 * x + 100 * y + 10 * z
            + 100000 * ids * (int)(get_group_id(0) + get_group_id(1) + get_group_id(2));
}
