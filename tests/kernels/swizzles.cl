/* Swizzles on float4 and float8: read, write, .lo .hi .even .odd, .sN. */
__kernel void swizzles(__global const float4 *a, __global const float8 *b,
                       __global float4 *o4, __global float8 *o8, __global float2 *o2)
{
    int i = get_global_id(0);
    float4 v = a[i];
    float8 w = b[i];
    float4 r;
    r.x = v.w;
    r.yz = v.xy;
    r.w = v.z + v.y;
    o4[3 * i] = r;
    o4[3 * i + 1] = v.wzyx + w.s0123;
    o4[3 * i + 2] = w.s7654 - w.even * w.odd;
    float8 t = w;
    t.lo = w.hi;
    t.hi = v.xxyy;
    t.s3 = 42.0f;
    t.s46 = v.zw;
    o8[i] = t;
    o2[2 * i] = v.lo + v.hi;
    o2[2 * i + 1] = w.hi.lo * w.lo.odd;
}
