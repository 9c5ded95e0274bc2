/* Divergent nested if/else classification of each element. */
__kernel void branches_nested(__global const int *a, __global const int *b, __global int *out)
{
    int i = get_global_id(0);
    int x = a[i], y = b[i];
    int r;
    if (x > 0) {
        if (y > 0) {
            r = x + y;
        } else if (y == 0) {
            r = x;
        } else {
            if (x > -y)
                r = x - y;
            else
                r = -1;
        }
    } else {
        if ((x & 1) == 0 && y != 0)
            r = x * 2;
        else
            r = y - x;
        if (r > 50)
            r = 50;
    }
    out[i] = r;
}
