#include "does_not_exist.h"
__kernel void k(__global float *a) { a[0] = 1.0f; }
