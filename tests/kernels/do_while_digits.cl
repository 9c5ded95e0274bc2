/* do/while: decimal digit sum and digit count, at least one iteration even for 0. */
__kernel void do_while_digits(__global const uint *a, __global int *sum, __global int *count)
{
    int i = get_global_id(0);
    uint v = a[i];
    int s = 0, c = 0;
    do {
        s += v % 10;
        v /= 10;
        c++;
    } while (v != 0);
    sum[i] = s;
    count[i] = c;
}
