/* Vector comparisons give -1/0 per component; select on the mask; scalar select. */
__kernel void vec_compare_select(__global const int4 *a, __global const int4 *b,
                                 __global const float4 *fa, __global const float4 *fb,
                                 __global int4 *mask, __global int4 *sel, __global float4 *fsel,
                                 __global float *ssel)
{
    int i = get_global_id(0);
    int4 x = a[i], y = b[i];
    int4 m = x > y;
    mask[i] = m | (x == y) * 2;
    sel[i] = select(y, x, m);                  /* max by mask */
    float4 p = fa[i], q = fb[i];
    fsel[i] = select(p, q, p < q);
    ssel[i] = select(p.x, q.x, p.y > q.y);     /* scalar: c ? b : a */
}
