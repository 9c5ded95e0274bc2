/* abs of the most negative value is defined in OpenCL C: abs returns the unsigned type,
   so abs(INT_MIN) is 0x80000000u; reinterpreted as int it is INT_MIN again. */
__kernel void abs_min(__global const int *a, __global const long *l, __global const char *c,
                      __global uint *u, __global long *wide, __global int *sel)
{
    int i = get_global_id(0);
    int x = a[i];
    uint ax = abs(x);
    u[i] = ax;
    wide[3 * i] = (long)as_int(ax);                  /* sign-extends: INT_MIN stays negative */
    wide[3 * i + 1] = (long)abs(l[i]);               /* ulong -> long */
    wide[3 * i + 2] = (long)(char)abs(c[i]);
    int4 v = (int4)(x, -x, x | 1, 0);
    sel[i] = select(7, 9, (int)abs(x)) + select(1, 2, as_int(abs(v).x)) * 10;
}
