#define SCALE 2.5f
__kernel void k(__global float *a)
{
    a[0] = SCALE * a[1] + undefined_thing;
}
