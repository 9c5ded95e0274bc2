/* for loops with break and continue depending on the data; a nested search with a flag. */
__kernel void break_continue(__global const int *data, __global int *firstneg,
                             __global int *oddsum, __global int *pairs, const int width)
{
    int row = get_global_id(0);
    __global const int *r = data + row * width;
    int fn = -1;
    for (int k = 0; k < width; k++) {
        if (r[k] < 0) {
            fn = k;
            break;
        }
    }
    firstneg[row] = fn;
    int os = 0;
    for (int k = 0; k < width; k++) {
        if ((r[k] & 1) == 0)
            continue;
        os += r[k];
        if (os > 200)
            break;
    }
    oddsum[row] = os;
    int found = 0;
    for (int p = 0; p < width && !found; p++) {
        for (int q = p + 1; q < width; q++) {
            if (r[p] + r[q] == 0) {
                found = p * 100 + q;
                break;
            }
        }
    }
    pairs[row] = found;
}
