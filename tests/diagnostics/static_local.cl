__kernel void k(__global int *a)
{
    static int calls = 0;
    a[0] = ++calls;
}
