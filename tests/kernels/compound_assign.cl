/* Every compound assignment, pre/post increment and decrement, the comma operator. */
__kernel void compound_assign(__global const int *a, __global const int *b, __global int *out)
{
    int i = get_global_id(0);
    int x = a[i];
    int y = b[i];          /* y is in 1..31 */
    int k = 0, j = 5;
    int r[12];
    r[0] = (x += y);
    r[1] = (x -= 3 * y);
    r[2] = (x *= 3);
    r[3] = (x /= y);
    r[4] = (x %= 17);
    r[5] = (x <<= (y & 7));
    r[6] = (x >>= 2);
    r[7] = (x &= 0x0ff0);
    r[8] = (x |= 0x1001);
    r[9] = (x ^= y);
    int p = k++;
    int q = ++k;
    int m = j--;
    int o = --j;
    r[10] = p * 1000 + q * 100 + m * 10 + o + k - j;
    r[11] = (k = 7, j = k * 2, j + k);
    for (int t = 0; t < 12; ++t)
        out[12 * i + t] = r[t];
}
