/* C99 integer promotions and the usual arithmetic conversions. */
__kernel void promotions(__global const uchar *ua, __global const uchar *ub,
                         __global const char *ca, __global const short *sa,
                         __global const int *ia, __global const uint *uia,
                         __global int *wide, __global uchar *narrow,
                         __global int *flags, __global long *mixed)
{
    int i = get_global_id(0);
    uchar x = ua[i], y = ub[i];
    wide[3 * i] = x + y;            /* promoted to int: no wrap */
    wide[3 * i + 1] = x - y;        /* int, may be negative */
    wide[3 * i + 2] = ~x;           /* ~ on the promoted int */
    narrow[i] = x + y;              /* converted back to uchar: modulo 256 */

    int s = ia[i];
    uint u = uia[i];
    int f = 0;
    if (s < u) f |= 1;              /* s converted to uint */
    if ((long)s < (long)u) f |= 2;  /* both long: true order */
    if (ca[i] < x) f |= 4;          /* both promoted to int */
    if (sa[i] * 3 > 60000) f |= 8;  /* int multiply, no short overflow */
    if (s / 7 == (s - s % 7) / 7) f |= 16;  /* truncation toward zero */
    flags[i] = f;

    mixed[2 * i] = s + u;           /* uint arithmetic, widened to long after */
    mixed[2 * i + 1] = (long)s * (long)ca[i] + (long)u;
}
