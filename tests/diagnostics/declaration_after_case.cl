__kernel void k(__global int *a, int mode)
{
    switch (mode) {
    case 0:
        int x = a[0];
        a[1] = x;
        break;
    }
}
