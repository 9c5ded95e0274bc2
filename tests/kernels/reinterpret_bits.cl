/* Reinterpreting bits: as_uint, as_float, as_int4, as_uchar4; exponent extraction. */
__kernel void reinterpret_bits(__global const float *f, __global const uint *u,
                      __global uint *bits, __global float *back, __global int *expo,
                      __global uchar4 *bytes, __global int4 *vbits)
{
    int i = get_global_id(0);
    float x = f[i];
    uint b = as_uint(x);
    bits[i] = b;
    expo[i] = (int)((b >> 23) & 0xff) - 127;
    back[i] = as_float((u[i] & 0x007fffffu) | 0x3f800000u);
    bytes[i] = as_uchar4(b);
    vbits[i] = as_int4((float4)(x, -x, 0.0f, 1.0f));
}
