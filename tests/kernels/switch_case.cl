/* switch with fall-through, default in the middle, break, and a nested loop with continue. */
__kernel void switch_case(__global const int *a, __global int *out)
{
    int i = get_global_id(0);
    int x = a[i];
    int r = 0;
    switch (x & 7) {
    case 0:
        r = 100;
        break;
    case 1:
        r += 10;          /* falls through */
    case 2:
        r += 20;
        break;
    default:
        r = -x;
        break;
    case 5:
    case 6:
        for (int k = 0; k < 6; k++) {
            if (k == 2)
                continue;
            r += k;
        }
        break;
    }
    switch (x % 3) {
    case 0: r *= 2; break;
    case 1: r -= 1;
    }
    out[i] = r;
}
