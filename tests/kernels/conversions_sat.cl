/* Saturating conversions (float and wider ints to narrow types); NaN saturates to 0. */
__kernel void conversions_sat(__global const float *f, __global const int *k,
                          __global uchar *u8, __global char *s8, __global ushort *u16,
                          __global short *s16, __global int *s32, __global uint *u32)
{
    int i = get_global_id(0);
    float x = f[i];
    int y = k[i];
    u8[2 * i] = convert_uchar_sat(x);
    u8[2 * i + 1] = convert_uchar_sat(y);
    s8[2 * i] = convert_char_sat(x);
    s8[2 * i + 1] = convert_char_sat(y);
    u16[i] = convert_ushort_sat(y);
    s16[i] = convert_short_sat_rte(x);
    s32[i] = convert_int_sat(x * 1.0e6f);
    u32[i] = convert_uint_sat(y);
}
