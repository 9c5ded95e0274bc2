/* float3 and int3 in buffers occupy 16 bytes each (sizeof(float3) == sizeof(float4)). */
__kernel void vec3_buffer(__global const float3 *p, __global float3 *q, __global int3 *k,
                          __global float *len2)
{
    int i = get_global_id(0);
    float3 v = p[i];
    float3 w = v.zxy * 2.0f + (float3)(1.0f, 0.0f, -1.0f);
    w.y = v.x - v.z;
    q[i] = w;
    k[i] = (int3)(i, (int)sizeof(float3), (int)sizeof(int3) / 4);
    len2[i] = v.x * v.x + v.y * v.y + v.z * v.z;
}
