/* half as a storage type: vload_half / vstore_half and the vector forms. */
__kernel void half_storage(__global const half *h, __global float *f, __global half *hout)
{
    int i = get_global_id(0);
    float x = vload_half(i, h);
    f[i] = x * 3.0f;
    vstore_half(x * 0.5f + 1.0f, i, hout);
    if (i < 64) {
        float4 v = vload_half4(i, h);
        vstore_half4(v + (float4)(1.0f, 2.0f, 3.0f, 4.0f), i, hout + 256);
    }
}
