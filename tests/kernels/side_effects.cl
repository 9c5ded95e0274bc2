/* Only the chosen arm of ?: runs; an unsigned count-down loop; post-increments in conditions. */
__kernel void side_effects(__global int *a, __global int *b, __global const int *sel, __global int *out)
{
    int i = get_global_id(0);
    int s = sel[i];
    int r = s > 0 ? a[i]++ : b[i]--;
    uint acc = 0;
    for (uint k = (uint)(s & 15); k-- > 0;)
        acc += k * k;
    int j = 0, hits = 0;
    while (j++ < 5)
        if (j % 2)
            hits += j;
    out[3 * i] = r;
    out[3 * i + 1] = (int)acc;
    out[3 * i + 2] = hits * 100 + j;
}
