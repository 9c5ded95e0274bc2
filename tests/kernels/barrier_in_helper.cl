/* barrier() called from a non-kernel helper function (legal OpenCL C: every work-item calls it). */
static int rotate_left(__local int *buf, int lid, int ls, int v)
{
    buf[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    int r = buf[(lid + 1) % ls] + (v & 3);
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

__kernel void barrier_in_helper(__global const int *in, __global int *out, __local int *buf)
{
    int lid = get_local_id(0);
    int ls = get_local_size(0);
    int v = in[get_global_id(0)];
    v = rotate_left(buf, lid, ls, v);
    v = rotate_left(buf, lid, ls, v);
    out[get_global_id(0)] = v;
}
