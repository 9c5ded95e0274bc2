int odd(int n);
int even(int n) { return n == 0 ? 1 : odd(n - 1); }
int odd(int n) { return n == 0 ? 0 : even(n - 1); }

__kernel void k(__global int *a)
{
    a[0] = even(a[0]);
}
