__kernel void k(__global float *a, __local float *t, int mode)
{
    switch (mode) {
    case 0:
        t[get_local_id(0)] = a[0];
        barrier(CLK_LOCAL_MEM_FENCE);
        break;
    }
}
