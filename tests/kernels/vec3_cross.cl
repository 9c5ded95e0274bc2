/* float3: packed loads/stores with vload3/vstore3, cross product by swizzles. */
__kernel void vec3_cross(__global const float *a, __global const float *b, __global float *out)
{
    int i = get_global_id(0);
    float3 x = vload3(i, a);
    float3 y = vload3(i, b);
    float3 c = x.yzx * y.zxy - x.zxy * y.yzx;
    vstore3(c, i, out);
}
