int fact(int n)
{
    return n <= 1 ? 1 : n * fact(n - 1);
}

__kernel void k(__global int *a)
{
    a[0] = fact(a[0]);
}
