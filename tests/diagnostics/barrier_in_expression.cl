__kernel void k(__global int *a)
{
    int x = a[0];
    x += (barrier(CLK_LOCAL_MEM_FENCE), 1);
    a[0] = x;
}
