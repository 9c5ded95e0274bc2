/* y = x * x with every byte moved by hand through the hierarchy: DRAM -> L2BMs -> L1BMs
   -> PEs and back.  Each PE squares 8 floats (4 cycles x 2 floats), so x and y hold
   8 x NUM_PE floats (8 x the device's max_compute_units: 32768 on mncore2), split over the
   groups' DRAMs (DRAM_SPLIT): group g squares part g.  Launch with mncl.enqueue_task. */
#define PER_L1B (8 * NUM_MAB * NUM_PE_MAB)      /* floats through one L1BM */
#define PER_L2B (PER_L1B * NUM_L1B)             /* ... through one L2BM */
#define N (PER_L2B * NUM_L2B)                   /* ... through one group: its part */

__task void square(DRAM_SPLIT const float *x, DRAM_SPLIT float *y)
{
    L2BM float xs[PER_L2B];             /* one in every L2BM */
    L1BM float xl[PER_L1B];             /* one in every L1BM */
    mn_distribute(xs, x, N);            /* DRAM -> L2BMs (mvd) */
    mn_distribute(xl, xs, PER_L2B);     /* L2BM -> L1BMs (l2bmd) */
    mnfloat8 v = mn_distribute(xl);     /* L1BM -> PEs (l1bmd): 4 cycles x 2 floats per PE */
    mn_gather(xl, v * v);               /* and back up */
    mn_gather(xs, xl, PER_L2B);
    mn_gather(y, xs, N);
}
