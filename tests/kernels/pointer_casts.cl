/* Pointer casts between element types (byte views), __constant and private pointers
   passed to helpers. */
static float dot3(__constant const float *w, const float *v)
{
    return w[0] * v[0] + w[1] * v[1] + w[2] * v[2];
}

__kernel void pointer_casts(__global const float *f, __global uchar *bytes,
                            __global uint *words, __constant float *w, __global float *out)
{
    int i = get_global_id(0);
    __global const uchar *b = (__global const uchar *)(f + i);
    for (int k = 0; k < 4; k++)
        bytes[4 * i + k] = b[3 - k];                    /* byte-reversed copy */
    __global const ushort *h = (__global const ushort *)f;
    words[i] = ((uint)h[2 * i + 1] << 16) | h[2 * i];   /* reassembled from halves */
    float v[3] = {f[i], 2.0f * f[i], 1.0f};
    out[i] = dot3(w, v);
}
