/* A while loop whose trip count depends on the data (Collatz steps); ulong state. */
__kernel void collatz(__global const uint *start, __global int *steps, __global ulong *peak)
{
    int i = get_global_id(0);
    ulong v = start[i];
    ulong top = v;
    int s = 0;
    while (v != 1) {
        v = (v & 1) ? 3 * v + 1 : v >> 1;
        if (v > top)
            top = v;
        s++;
    }
    steps[i] = s;
    peak[i] = top;
}
