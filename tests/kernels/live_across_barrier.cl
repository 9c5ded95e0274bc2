/* Private scalars, a private array and a loop counter stay live across several barriers. */
__kernel void live_across_barrier(__global const float *in, __global float *out, __local float *tmp)
{
    int lid = get_local_id(0);
    int ls = get_local_size(0);
    int gid = get_global_id(0);
    float hist[4];
    float a = in[gid];
    float b = a * a;
    int count = 0;
    for (int step = 0; step < 4; step++) {
        tmp[lid] = a;
        barrier(CLK_LOCAL_MEM_FENCE);
        float nb = tmp[(lid + step + 1) % ls];
        barrier(CLK_LOCAL_MEM_FENCE);
        hist[step] = nb;
        a = 0.5f * (a + nb);
        if (nb > 0.0f)
            count++;
    }
    out[2 * gid] = a + b + hist[0] - hist[3];
    out[2 * gid + 1] = (float)count + hist[1] * hist[2];
}
