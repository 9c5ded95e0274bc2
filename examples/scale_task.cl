__task void scale(DRAM const float *x, DRAM float *y)
{
    L2BM float xs[256];                 /* in every L2BM */
    L1BM float xl[128];                 /* in every L1BM */
    mn_distribute(xs, x, 512);          /* DRAM -> L2BMs (mvd) */
    mn_distribute(xl, xs, 256);         /* L2BM -> L1BMs (l2bmd) */
    mnfloat8 v = mn_distribute(xl);     /* L1BM -> PEs (l1bmd): 4 cycles x 2 floats per PE */
    mn_gather(xl, v * v);               /* and back up */
    mn_gather(xs, xl, 256);
    mn_gather(y, xs, 512);
}
