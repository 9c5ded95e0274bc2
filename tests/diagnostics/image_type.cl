__kernel void k(image2d_t img, __global float *a)
{
    a[0] = 1.0f;
}
