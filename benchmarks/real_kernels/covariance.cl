/* PolyBench covariance's shape (the GPU version's three launches): column means, centring,
   then one work-item per column j1 filling row j1 and column j1 of the symmetric result. */
__kernel void cov_mean(__global float *mean, __global const float *data, float float_n, int m, int n)
{
    int j = get_global_id(0);
    if (j < m) {
        float s = 0.0f;
        for (int i = 0; i < n; i++)
            s += data[i * m + j];
        mean[j] = s / float_n;
    }
}

__kernel void cov_center(__global const float *mean, __global float *data, int m, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i < n && j < m)
        data[i * m + j] -= mean[j];
}

__kernel void cov_symm(__global float *symmat, __global const float *data, int m, int n)
{
    int j1 = get_global_id(0);
    if (j1 < m) {
        for (int j2 = j1; j2 < m; j2++) {
            float s = 0.0f;
            for (int i = 0; i < n; i++)
                s += data[i * m + j1] * data[i * m + j2];
            symmat[j1 * m + j2] = s;
            symmat[j2 * m + j1] = s;
        }
    }
}
