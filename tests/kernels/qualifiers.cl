/* const, volatile and restrict qualifiers on locals and parameters. */
__kernel void qualifiers(__global const float * restrict in, __global float * restrict out,
                         const int n)
{
    const int i = get_global_id(0);
    const float scale = 2.5f;
    volatile float acc = 0.0f;
    for (int k = 0; k < 4; k++)
        acc += in[(i + k) % n] * scale;
    const float * ptr;
    float local_copy[2] = {acc, -acc};
    ptr = local_copy;
    out[i] = ptr[0] + ptr[1] * 0.5f;
}
