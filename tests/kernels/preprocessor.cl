/* The preprocessor: -D values, #if/#elif, function-like macros and token pasting. */
#ifndef FACTOR
#error "build with -D FACTOR=..."
#endif
#define SQUARE(x) ((x) * (x))
#define DEFINE_OP(name, op) static int op_##name(int a, int b) { return a op b; }
DEFINE_OP(add, +)
DEFINE_OP(sub, -)
DEFINE_OP(xor, ^)
#if defined(USE_XOR) && USE_XOR
#define COMBINE op_xor
#elif FACTOR > 2
#define COMBINE op_sub
#else
#define COMBINE op_add
#endif

__kernel void preprocessor(__global const int *a, __global int *out)
{
    int i = get_global_id(0);
    out[i] = COMBINE(SQUARE(a[i]) * FACTOR, op_add(i, OFFSET));
}
