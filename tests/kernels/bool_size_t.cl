/* bool and size_t: boolean arithmetic, size_t loops and unsigned wrap of size_t differences (kept to 32 bits). */
__kernel void bool_size_t(__global const int *a, __global int *out, __global uint *sz)
{
    size_t i = get_global_id(0);
    bool pos = a[i] > 0;
    bool even = (a[i] & 1) == 0;
    bool both = pos && even;
    int count = 0;
    for (size_t k = 0; k < i % 5; ++k)
        count += (int)both + (int)pos;
    out[2 * i] = both + 2 * pos + 4 * even;
    out[2 * i + 1] = count + !pos;
    size_t diff = i - (size_t)3;       /* wraps for i < 3 */
    sz[i] = (uint)diff + (uint)sizeof(float4);   // the same for a 32- or 64-bit size_t
}
