/* A large private array per work-item that stays live across a barrier. */
#define M 48
__kernel void private_big(__global const float *in, __global float *out, __local float *shared)
{
    int lid = get_local_id(0);
    int gid = get_global_id(0);
    int ls = get_local_size(0);
    float v[M];
    for (int k = 0; k < M; k++)
        v[k] = in[gid * M + k];
    float s = 0.0f;
    for (int k = 0; k < M; k++)
        s += v[k];
    shared[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    float neighbour = shared[(lid + 1) % ls];
    for (int k = 0; k < M; k++)
        out[gid * M + k] = v[M - 1 - k] * neighbour;
}
