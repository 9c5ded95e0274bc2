#ifndef WIDTH
#error WIDTH must be defined
#endif
__kernel void k(__global float *a) { a[0] = WIDTH; }
