/* Literal forms: suffixes, hex/octal, char literals, hex floats, large unsigned and long constants. */
__kernel void literals(__global const int *a, __global long *out, __global float *fout)
{
    int i = get_global_id(0);
    int x = a[i];
    out[8 * i] = x + 0x7f + 010 + 'A';
    out[8 * i + 1] = 0xffffffffu - (uint)x;          /* uint arithmetic */
    out[8 * i + 2] = (1L << 40) + x;
    out[8 * i + 3] = 0x8000000000000000UL >> 60;
    out[8 * i + 4] = -2147483647 - 1 + x;
    out[8 * i + 5] = 'z' - 'a' + '\n';
    out[8 * i + 6] = 1000000 * 3000L;
    out[8 * i + 7] = 07777 & x;
    fout[4 * i] = 1e-3f * x;
    fout[4 * i + 1] = 0x1.8p1f + x;                  /* 3.0 */
    fout[4 * i + 2] = .5f + 2.f + 1.25e+1f;
    fout[4 * i + 3] = (float)x / 3;
}
