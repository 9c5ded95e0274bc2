/* __attribute__((reqd_work_group_size)) with a static __local array sized to match. */
__kernel __attribute__((reqd_work_group_size(32, 2, 1)))
void reqd_wg_size(__global const float *in, __global float *out)
{
    __local float tile[2][32];
    int lx = get_local_id(0), ly = get_local_id(1);
    int x = get_global_id(0), y = get_global_id(1);
    int w = get_global_size(0);
    tile[ly][lx] = in[y * w + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[y * w + x] = tile[1 - ly][31 - lx];
}
