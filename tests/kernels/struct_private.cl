/* Private structs: nested members, struct assignment, arrays of structs, struct tag names. */
struct span { int lo; int hi; };
struct box { struct span xs; struct span ys; float weight; };

static int width(struct span s) { return s.hi - s.lo; }

__kernel void struct_private(__global const int *a, __global int *out, __global float *wout)
{
    int i = get_global_id(0);
    struct box b;
    b.xs.lo = a[4 * i];
    b.xs.hi = a[4 * i] + a[4 * i + 1];
    b.ys.lo = a[4 * i + 2];
    b.ys.hi = b.ys.lo + a[4 * i + 3];
    b.weight = 0.5f * (float)i;
    struct box c = b;
    c.xs.hi += 3;
    struct span list[3];
    list[0] = b.xs;
    list[1] = c.xs;
    list[2] = b.ys;
    int total = 0;
    for (int k = 0; k < 3; k++)
        total += width(list[k]);
    out[2 * i] = width(b.xs) * width(b.ys);
    out[2 * i + 1] = total;
    wout[i] = c.weight + (float)width(c.xs);
}
