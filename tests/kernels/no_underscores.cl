/* The address-space and kernel keywords without underscores, qualifier orders, __private. */
float twice(private float x) { return 2.0f * x; }

kernel void no_underscores(global const float *in, const global float *in2, global float *out,
                           constant float *c, local float *tmp)
{
    __private int i = get_global_id(0);
    private float v = in[i] + in2[i];
    tmp[get_local_id(0)] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    float const k = c[0];
    out[i] = twice(tmp[get_local_id(0)]) * k;
}
