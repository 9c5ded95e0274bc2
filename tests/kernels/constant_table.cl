/* __constant memory: a program-scope table and a __constant pointer parameter. */
__constant float weights[8] = {0.5f, 1.0f, 1.5f, 2.0f, -0.5f, -1.0f, 0.25f, 4.0f};
__constant int perm[8] = {3, 1, 4, 0, 5, 7, 2, 6};

__kernel void constant_table(__global const float *in, __constant float *coef,
                             __global float *out)
{
    int i = get_global_id(0);
    int k = i & 7;
    float x = in[i];
    out[i] = weights[k] * x + coef[perm[k]] + coef[8];
}
