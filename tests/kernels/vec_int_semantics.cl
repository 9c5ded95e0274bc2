/* Vector integer rules: no promotion (uchar vectors wrap), shift counts modulo the element
   width, relational and logical operators give -1/0, scalars widen to vectors. */
__kernel void vec_int_semantics(__global const uchar8 *a, __global const uchar8 *b,
                                __global const int4 *x, __global const int4 *y,
                                __global uchar8 *ou, __global int4 *oi)
{
    int i = get_global_id(0);
    uchar8 p = a[i], q = b[i];
    ou[3 * i] = p * q + (uchar)7;                  /* modulo 256 per component */
    ou[3 * i + 1] = p << q;                        /* count modulo 8 */
    ou[3 * i + 2] = (p >> (uchar8)(3)) | (q & (uchar)0x0f);
    int4 s = x[i], t = y[i];
    oi[5 * i] = s << t;                            /* count modulo 32 */
    oi[5 * i + 1] = s >> t;
    oi[5 * i + 2] = (s > 0) && (t > 16);
    oi[5 * i + 3] = !s | (s <= t);
    oi[5 * i + 4] = (s + 3) * 2 - t / 3;
}
