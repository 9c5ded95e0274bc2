/* Two kernels in one program sharing a helper and a program-scope constant. */
__constant float BIAS = 0.75f;

static float affine(float x, float s) { return s * x + BIAS; }

__kernel void scale(__global float *data, const float s)
{
    int i = get_global_id(0);
    data[i] = affine(data[i], s);
}

__kernel void offset_then_scale(__global const float *in, __global float *out, const float off, const float s)
{
    int i = get_global_id(0);
    out[i] = affine(in[i] + off, s);
}
