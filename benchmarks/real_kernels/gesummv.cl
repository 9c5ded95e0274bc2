/* y = alpha A x + beta B x (PolyBench gesummv's shape): two row products per work-item. */
__kernel void gesummv(__global const float *A, __global const float *B, __global const float *x,
                      __global float *y, __global float *tmp, float alpha, float beta, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        float t = 0.0f, u = 0.0f;
        for (int j = 0; j < n; j++) {
            t += A[i * n + j] * x[j];
            u += B[i * n + j] * x[j];
        }
        tmp[i] = t;
        y[i] = alpha * t + beta * u;
    }
}
