/* y = W x for LLM decoding: an MNCL task kernel that streams the weights through the
 * memory hierarchy once, double-buffered, at the DRAM roofline.
 *
 * Built per shape with -D ROWS=.. -D COLS=.. -D BATCH=.. -D HALF=0|1 (decode.py).
 *
 * The work split (decode.py packs W in exactly this order):
 *  - K (the columns) is split over every L1B of the board: L1B (g, l, i) owns KP columns.
 *    The partial sums meet at the end: mn_reduce over the L1Bs of each L2B (l2bmr), then
 *    mn_reduce_board over every L2BM into group 0's DRAM (mvr).
 *  - Rows are split over the PEs of an L1B and the lanes of a step: a step of W holds, on
 *    each PE, ROWS_STEP rows (4 cycles x 4 halves, or 4 cycles x 2 floats) at one column,
 *    multiplied by that column of x copied into every lane (x4[k]).  RHO row groups.
 *  - W streams DRAM -> L2BM (mvd, one per group, CHUNK long words per group, two buffers so
 *    the next chunk is in flight while this one is used) -> L1BM (l2bmd) -> PE (l1bmd).
 */
#ifndef T
#define T 4                                   /* W steps per chunk */
#endif
#define NL1B (NUM_GROUPS * NUM_L2B * NUM_L1B)  /* L1Bs of the board: the K split */
#define KP (COLS / NL1B)                       /* columns per L1B */
#if HALF
#define wtype mnhalf
#define LANES 4                                /* weights per long word */
#define WVEC mnhalf16                          /* one step of weights on one PE */
#define XVEC mnhalf4                           /* one long word, the same in every cycle */
#define ACC mnfloat16
#else
#define wtype float
#define LANES 2
#define WVEC mnfloat8
#define XVEC mnfloat2
#define ACC mnfloat8
#endif
#define PES (NUM_MAB * NUM_PE_MAB)             /* PEs per L1B */
#define ROWS_STEP (4 * LANES)                  /* rows of one W step on one PE */
#define RHO (ROWS / (PES * ROWS_STEP))         /* row groups */
#define STEP_LONGS (4 * PES)                   /* long words of one W step, per L1B */
#define CHUNK (T * STEP_LONGS * NUM_L1B * NUM_L2B)   /* long words per group per chunk */
#define CHUNK_W (CHUNK * LANES)                /* ... in weights */
#define NCHUNK (RHO * KP / T)                  /* chunks per group */
#define XSLICE (NUM_L1B * KP / LANES)          /* long words of x per L2B (per batch row) */
#define XPAD (((XSLICE + 32 * NUM_L1B - 1) / (32 * NUM_L1B)) * 32 * NUM_L1B)

__task void matvec(DRAM const wtype *w, DRAM const wtype *x, DRAM float *y)
{
    L2BM wtype wb0[CHUNK_W / NUM_L2B], wb1[CHUNK_W / NUM_L2B];   /* the double buffer */
    L2BM wtype xs[XPAD * LANES];
    L2BM float ys[ROWS];
    L1BM wtype wl[T * STEP_LONGS * LANES];
    L1BM wtype xl[XPAD * LANES / NUM_L1B];
    L1BM float yl[2 * STEP_LONGS * 2];
    ACC acc[BATCH * RHO];
    XVEC x4[BATCH * KP];
    mn_event ev0[NUM_GROUPS], ev1[NUM_GROUPS];

    /* the first chunk of W starts moving before anything else */
    for (int g = 0; g < NUM_GROUPS; g++)
        ev0[g] = mn_distribute_async(wb0, w + g * NCHUNK * CHUNK_W, CHUNK_W, g);

    /* x: this L2B's slice -> its L1Bs (l2bmd interleaves 8-long-word runs: decode.py's k order)
     * -> every PE, each column copied into all lanes of one long word, x4[k] */
    for (int b = 0; b < BATCH; b++) {
        for (int g = 0; g < NUM_GROUPS; g++)
            for (int l = 0; l < NUM_L2B; l++)
                mn_unicast(xs, x + b * COLS + (g * NUM_L2B + l) * XSLICE * LANES, XSLICE * LANES, g, l);
        mn_distribute(xl, xs, XPAD * LANES);
        for (int s = 0; s < KP / (4 * LANES); s++) {
            WVEC xv = mn_broadcast(xl + s * 4 * LANES);
            for (int h = 0; h < LANES; h++)
                mn_split_cycles(x4, b * KP + s * 4 * LANES + h, LANES, mn_splat(xv, h));
        }
        for (int j = 0; j < RHO; j++)
            acc[b * RHO + j] = 0;
    }

    for (int t = 0; t < NCHUNK; t += 2) {
        int j = t * T / KP;
        int k0 = t * T % KP;
        if (t + 1 < NCHUNK) {
            for (int g = 0; g < NUM_GROUPS; g++)
                ev1[g] = mn_distribute_async(wb1, w + (g * NCHUNK + t + 1) * CHUNK_W, CHUNK_W, g);
        }
        for (int g = 0; g < NUM_GROUPS; g++)
            mn_wait(ev0[g]);
        mn_distribute(wl, wb0, CHUNK_W / NUM_L2B);
        for (int u = 0; u < T; u++) {
            WVEC wv = mn_distribute(wl + u * STEP_LONGS * LANES);
            for (int b = 0; b < BATCH; b++)
                acc[b * RHO + j] = mn_fma(wv, x4[b * KP + k0 + u], acc[b * RHO + j]);
        }
        if (t + 2 < NCHUNK) {
            for (int g = 0; g < NUM_GROUPS; g++)
                ev0[g] = mn_distribute_async(wb0, w + (g * NCHUNK + t + 2) * CHUNK_W, CHUNK_W, g);
        }
        if (t + 1 < NCHUNK) {
            for (int g = 0; g < NUM_GROUPS; g++)
                mn_wait(ev1[g]);
            mn_distribute(wl, wb1, CHUNK_W / NUM_L2B);
            int j1 = (t + 1) * T / KP;
            int k1 = (t + 1) * T % KP;
            for (int u = 0; u < T; u++) {
                WVEC wv = mn_distribute(wl + u * STEP_LONGS * LANES);
                for (int b = 0; b < BATCH; b++)
                    acc[b * RHO + j1] = mn_fma(wv, x4[b * KP + k1 + u], acc[b * RHO + j1]);
            }
        }
    }

    /* partial sums -> L1BM -> summed over the L2B's L1Bs -> summed over the board into y */
    for (int b = 0; b < BATCH; b++) {
        for (int j = 0; j < RHO; j++) {
#if HALF
            mn_gather(yl, mn_lo(acc[b * RHO + j]));
            mn_gather(yl + 2 * STEP_LONGS, mn_hi(acc[b * RHO + j]));
            mn_reduce(ys + j * 4 * STEP_LONGS, yl, 4 * STEP_LONGS, MN_ADD);
#else
            mn_gather(yl, acc[b * RHO + j]);
            mn_reduce(ys + j * 2 * STEP_LONGS, yl, 2 * STEP_LONGS, MN_ADD);
#endif
        }
        mn_reduce_board(y + b * ROWS, ys, ROWS, 0, MN_ADD);
    }
}
