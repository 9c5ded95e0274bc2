/* D2Q9 lattice Boltzmann, BGK, fp32: the task-kernel form (samples/lbm/task.py runs it).

   The same scheme as plain.cl (and reference.py): fused pull stream-and-collide, velocities
   k = 0..8: (0,0) (1,0) (0,1) (-1,0) (0,-1) (1,1) (-1,1) (-1,-1) (1,-1), half-way bounce-back
   walls with a moving lid (WALLS = 1: the cavity) or periodic in x and y (WALLS = 0: the
   Taylor-Green vortex).  One launch runs `steps` time steps; every byte moves through the
   machine's transfer instructions, double-buffered so that DRAM never waits for the PEs.

   Layout (task.py packs and unpacks it).  Two cells share a long word: slot row s (0 .. n/2-1)
   holds row s in lane 0 and row s + n/2 in lane 1, x contiguous (n long words a row), so a
   neighbour in x is the next long word and a neighbour in y the next slot row, for both lanes.
   The slot rows are split over the groups (DRAM_SPLIT: group g's DRAM holds its band of S slot
   rows), each band with a halo row below and above: f = [2 halves][9 populations][S + 2][n].
   A group's two L2Bs take alternate slot rows; an iteration moves R rows per L2B, which fill
   one vector of every L1B (R = 4 x PEs per L1B / (n / L1Bs)).

   Data movement, per iteration and population k (the velocity (EX, EY)):
   - DRAM -> L2BM: the source rows, shifted by -EY rows (mvd: L2B l takes the l-th row), into a
     row slot with a pad before it; reads for the next iteration start as soon as these rows
     have moved on, so DRAM works while the PEs compute;
   - L2BM -> L1BM: the row from EX long words before it (l2bmd from a shifted address: every
     L1B takes its share already streamed in x); periodic in x, the pads first get a copy of
     the row's other end (one l2bmd down and up: no DRAM traffic);
   - L1BM -> PE (l1bmd), collide, PE -> L1BM -> L2BM -> DRAM into the other half (three
     rotating output rows, written while the next populations are gathered).
   Each step starts by refreshing the halo rows over the group bus (mvb from the neighbour
   group's DRAM to every L2BM, then mvp into this group's halo); the two lanes meet across
   the middle of the domain, so the halos of the first and last band carry lane-swapped rows.

   Walls: a pulled value whose source is outside the domain is the cell's own opposite
   population from the previous step (+ the lid's momentum on the top wall), which the PE that
   owns the cell kept in its local memory (LM: the populations of every iteration that a
   side wall needs; the bottom / top row's vertical ones).  The flags buffer marks the wall
   cells (1: x = 0, 2: x = n-1, 4: y = 0, 8: y = n-1), read once.

   Built with -D N=.. -D WALLS=0|1 -D OMEGA=<float> -D LID=<6 w_d u_lid, float>, and -D RESIDENT=1
   for the resident kernel (task.py). */

#define NL2 NUM_L2B
#define NL1 NUM_L1B
#define PEL1 (NUM_MAB * NUM_PE_MAB)
#define W N                                   /* long words of a slot row */
#define RF (2 * W)                            /* ... in floats */
#define S (N / 2 / NUM_GROUPS)                /* slot rows of a group's band */
#define SHARE (W / NL1)                       /* long words of a row each L1B takes */
#define VEC (4 * PEL1)                        /* long words of one vector, per L1B */
#define R (VEC / SHARE)                       /* rows per L2B per iteration */
#define QQ (S / (NL2 * R))                    /* iterations per step */
#define BR (S / NL2)                          /* the resident kernel: slot rows of an L2B's band */
#define QR (BR / R)                           /* ... and its iterations per step */
#define UNIT (32 * NL1)                       /* long words of one l2bmd */
#define POP ((S + 2) * RF)                    /* floats of a population in one half */
#define HALF (9 * POP)
#define PITCH (2 * (W + UNIT))                /* floats of a row slot in L2BM: pad, row */
#define NOUT 3                                /* output rows in rotation */

#define EX(k) ((k) == 1 || (k) == 5 || (k) == 8 ? 1 : (k) == 3 || (k) == 6 || (k) == 7 ? -1 : 0)
#define EY(k) ((k) == 2 || (k) == 5 || (k) == 6 ? 1 : (k) == 4 || (k) == 7 || (k) == 8 ? -1 : 0)
/* the row slots in L2BM, EX = +1 first and EX = -1 last, so that a right pad (after an EX = -1
   row) never lands on a left pad in use (before an EX = +1 row) */
#define SLOT(k) ((k) == 1 ? 0 : (k) == 5 ? 1 : (k) == 8 ? 2 : (k) == 0 ? 3 : (k) == 2 ? 4 : \
                 (k) == 4 ? 5 : (k) == 3 ? 6 : (k) == 6 ? 7 : 8)
#define INROW(k, r) (in + (SLOT(k) * R + (r)) * PITCH + 2 * UNIT)
#define OUTROW(b, r) (ob + ((b) * R + (r)) * RF)
#define INL(k) (inl + (k) * 2 * VEC)
#define OUTL(k) (outl + (k) * 2 * VEC)
/* DRAM: population k of half h, slot row j of the band (0: the halo below) */
#define ROW(h, k, j) (f + (h) * HALF + (k) * POP + (j) * RF)

/* the rows of iteration q, population k, pulled from EY rows below, into their L2BM slots */
#define READ(h, q, k, r) \
    rd[(k) * R + (r)] = mn_distribute_async(INROW(k, r), ROW(h, k, NL2 * (R * (q) + (r)) + 1 - EY(k)), NL2 * RF)

#define PULL_DOWN(k, r) mn_distribute(INL(k) + (r) * 2 * SHARE, INROW(k, r) - 2 * EX(k), RF)

/* ---- pieces both kernels use -------------------------------------------------------------- */

/* the per-PE constants (named vectors: made once) */
#define CONSTANTS                                                                                \
    mnfloat8 one = 1.0f;                                                                         \
    mnfloat8 mone = -1.0f;                                                                       \
    mnfloat8 zero = 0.0f;                                                                        \
    mnfloat8 c3 = 3.0f;                                                                          \
    mnfloat8 c45 = 4.5f;                                                                         \
    mnfloat8 c15 = 1.5f;                                                                         \
    mnfloat8 w0 = 0.44444445f;              /* 4/9, 1/9, 1/36 rounded to float */                \
    mnfloat8 ws = 0.11111111f;                                                                   \
    mnfloat8 wd = 0.027777778f;                                                                  \
    mnfloat8 omega = OMEGA;                                                                      \
    mnfloat8 lid = LID;                     /* 6 w_d u_lid: pop 8 off the lid; pop 7 the negative */ \
    mnfloat8 nlid = -LID;                                                                        \
    mnint8 b1 = 1, b2 = 2, b3 = 3, b4 = 4, b5 = 5, b6 = 6, b8 = 8, b9 = 9, b10 = 10

/* the wall flags of the R rows of DRAM_SPLIT `flags` from slot row j of L2B `l` of the band
   (l < 0: every L2B its own alternate row, as mvd gives), as a vector */
#define LOAD_FLAGS(dst, j, l)                                                                    \
    for (int r = 0; r < R; r++) {                                                                \
        if ((l) < 0)                                                                             \
            mn_distribute(fls + r * RF, flags + (NL2 * r + (j)) * RF, NL2 * RF);                 \
        else                                                                                     \
            for (int l2 = 0; l2 < NL2; l2++)                                                     \
                mn_unicast(fls + r * RF, flags + (l2 * BR + r + (j)) * RF, RF, l2);              \
        mn_distribute(fll + r * 2 * SHARE, fls + r * RF, RF);                                    \
    }                                                                                            \
    dst = mn_distribute(fll)

/* periodic in x: a row slot's pad gets a copy of the row's other end (one l2bmd down and up),
   so that the shifted read at the row's end finds the cell across the boundary */
#if WALLS
#define PERIODIC_PAD(k, r)
#else
#define PERIODIC_PAD(k, r)                                                                       \
    if (EX(k) == 1) {                       /* the left pad <- the row's last unit */            \
        mn_distribute(scr, INROW(k, r) + RF - 2 * UNIT, 2 * UNIT);                               \
        mn_gather(INROW(k, r) - 2 * UNIT, scr, 2 * UNIT);                                        \
    }                                                                                            \
    if (EX(k) == -1) {                      /* the right pad <- the row's first unit */          \
        mn_distribute(scr, INROW(k, r), 2 * UNIT);                                               \
        mn_gather(INROW(k, r) + RF, scr, 2 * UNIT);                                              \
    }
#endif

/* walls: a pulled value whose source is outside the domain is the cell's opposite population
   of the previous step, Bk (+ the lid's share on the top wall, flag 8) */
#if WALLS
#define BOUNCE_BACK(fl, B1, B2, B3, B4, B5, B6, B7, B8)                                          \
    p1 = mn_select(fl & b1, B1, p1);                                                             \
    p3 = mn_select(fl & b2, B3, p3);                                                             \
    p2 = mn_select(fl & b4, B2, p2);                                                             \
    p4 = mn_select(fl & b8, B4, p4);                                                             \
    p5 = mn_select(fl & b5, B5, p5);                                                             \
    p6 = mn_select(fl & b6, B6, p6);                                                             \
    p7 = mn_select(fl & b10, mn_select(fl & b8, B7 + nlid, B7), p7);                             \
    p8 = mn_select(fl & b9, mn_select(fl & b8, B8 + lid, B8), p8)
#else
#define BOUNCE_BACK(fl, B1, B2, B3, B4, B5, B6, B7, B8)
#endif

/* the pulled populations p0..p8 from the L1BM vectors they were streamed into (SRC(k)) */
#define PULLED(SRC)                                                                              \
    mnfloat8 p0 = mn_distribute(SRC(0));                                                         \
    mnfloat8 p1 = mn_distribute(SRC(1));                                                         \
    mnfloat8 p2 = mn_distribute(SRC(2));                                                         \
    mnfloat8 p3 = mn_distribute(SRC(3));                                                         \
    mnfloat8 p4 = mn_distribute(SRC(4));                                                         \
    mnfloat8 p5 = mn_distribute(SRC(5));                                                         \
    mnfloat8 p6 = mn_distribute(SRC(6));                                                         \
    mnfloat8 p7 = mn_distribute(SRC(7));                                                         \
    mnfloat8 p8 = mn_distribute(SRC(8))

/* iteration q's wall flags: the first and the last iteration's own, the side walls' between */
#define ITERATION_FLAGS(fl, q, last)                                                             \
    mnint8 fl = flx;                                                                             \
    if ((q) == 0)                                                                                \
        fl = flf;                                                                                \
    if ((q) == (last))                                                                           \
        fl = fll_

/* the collision of the pulled p0..p8, in place: plain.cl's formulas */
#define COLLIDE                                                                                  \
    mnfloat8 d = p0 - w0;                   /* rho = 1 + sum (p_k - w_k), in plain.cl's order */ \
    d = d + (p1 - ws);                                                                           \
    d = d + (p2 - ws);                                                                           \
    d = d + (p3 - ws);                                                                           \
    d = d + (p4 - ws);                                                                           \
    d = d + (p5 - wd);                                                                           \
    d = d + (p6 - wd);                                                                           \
    d = d + (p7 - wd);                                                                           \
    d = d + (p8 - wd);                                                                           \
    mnfloat8 rho = one + d;                                                                      \
    mnfloat8 nrho = mone - d;               /* 1 / rho: Newton from 2 - rho (rho is near 1) */   \
    mnfloat8 rr = one - d;                                                                       \
    mnfloat8 e = mn_fma(nrho, rr, one);                                                          \
    rr = mn_fma(rr, e, rr);                                                                      \
    e = mn_fma(nrho, rr, one);                                                                   \
    rr = mn_fma(rr, e, rr);                                                                      \
    mnfloat8 ux = (p1 - p3 + p5 - p6 - p7 + p8) * rr;                                            \
    mnfloat8 uy = (p2 - p4 + p5 + p6 - p7 - p8) * rr;                                            \
    mnfloat8 om = one - c15 * mn_fma(uy, uy, ux * ux);        /* 1 - 1.5 u.u */                  \
    mnfloat8 wr0 = w0 * rho;                                                                     \
    mnfloat8 wrs = ws * rho;                                                                     \
    mnfloat8 wrd = wd * rho;                                                                     \
    mnfloat8 eu = zero;                                                                          \
    /* f' = p + omega (feq - p), feq = w rho (1 - 1.5 u.u + eu (3 + 4.5 eu)) */                  \
    p0 = mn_fma(omega, om * wr0 - p0, p0);                                                       \
    eu = ux;                                                                                     \
    p1 = mn_fma(omega, mn_fma(mn_fma(eu, c45, c3), eu, om) * wrs - p1, p1);                      \
    eu = uy;                                                                                     \
    p2 = mn_fma(omega, mn_fma(mn_fma(eu, c45, c3), eu, om) * wrs - p2, p2);                      \
    eu = zero - ux;                                                                              \
    p3 = mn_fma(omega, mn_fma(mn_fma(eu, c45, c3), eu, om) * wrs - p3, p3);                      \
    eu = zero - uy;                                                                              \
    p4 = mn_fma(omega, mn_fma(mn_fma(eu, c45, c3), eu, om) * wrs - p4, p4);                      \
    eu = ux + uy;                                                                                \
    p5 = mn_fma(omega, mn_fma(mn_fma(eu, c45, c3), eu, om) * wrd - p5, p5);                      \
    eu = uy - ux;                                                                                \
    p6 = mn_fma(omega, mn_fma(mn_fma(eu, c45, c3), eu, om) * wrd - p6, p6);                      \
    eu = zero - ux - uy;                                                                         \
    p7 = mn_fma(omega, mn_fma(mn_fma(eu, c45, c3), eu, om) * wrd - p7, p7);                      \
    eu = ux - uy;                                                                                \
    p8 = mn_fma(omega, mn_fma(mn_fma(eu, c45, c3), eu, om) * wrd - p8, p8)

/* the halo rows of a step, over the group bus: from group gs's DRAM rows `up` (the populations
   streaming up: the next band's halo below) and `down` (streaming down: the previous band's
   halo above) via every L2BM into the neighbour groups' halo rows `to_up` / `to_down` on L2B
   `l_up` / `l_down`; lane-swapped across the middle of the domain */
#define EXCHANGE(h, up, down, to_up, to_down, l_up, l_down)                                      \
    for (int gs = 0; gs < NUM_GROUPS; gs++) {                                                    \
        ex[0] = mn_broadcast_board_async(in + 0 * RF, ROW(h, 2, up), RF, gs);                    \
        ex[1] = mn_broadcast_board_async(in + 1 * RF, ROW(h, 5, up), RF, gs);                    \
        ex[2] = mn_broadcast_board_async(in + 2 * RF, ROW(h, 6, up), RF, gs);                    \
        ex[3] = mn_broadcast_board_async(in + 3 * RF, ROW(h, 4, down), RF, gs);                  \
        ex[4] = mn_broadcast_board_async(in + 4 * RF, ROW(h, 7, down), RF, gs);                  \
        ex[5] = mn_broadcast_board_async(in + 5 * RF, ROW(h, 8, down), RF, gs);                  \
        for (int i = 0; i < 6; i++)                                                              \
            mn_wait(ex[i]);                                                                      \
        for (int i = 0; i < 6; i++) {                                                            \
            if ((i < 3 && gs == NUM_GROUPS - 1) || (i >= 3 && gs == 0)) {                        \
                mn_distribute(scr, in + i * RF, RF);                                             \
                mn_gather(scr, mn_swap_lanes(mn_distribute(scr)));                               \
                mn_gather(in + i * RF, scr, RF);                                                 \
            }                                                                                    \
        }                                                                                        \
        ex[0] = mn_unicast_async(ROW(h, 2, to_up), in + 0 * RF, RF, (gs + 1) % NUM_GROUPS, l_up); \
        ex[1] = mn_unicast_async(ROW(h, 5, to_up), in + 1 * RF, RF, (gs + 1) % NUM_GROUPS, l_up); \
        ex[2] = mn_unicast_async(ROW(h, 6, to_up), in + 2 * RF, RF, (gs + 1) % NUM_GROUPS, l_up); \
        ex[3] = mn_unicast_async(ROW(h, 4, to_down), in + 3 * RF, RF, (gs + NUM_GROUPS - 1) % NUM_GROUPS, l_down); \
        ex[4] = mn_unicast_async(ROW(h, 7, to_down), in + 4 * RF, RF, (gs + NUM_GROUPS - 1) % NUM_GROUPS, l_down); \
        ex[5] = mn_unicast_async(ROW(h, 8, to_down), in + 5 * RF, RF, (gs + NUM_GROUPS - 1) % NUM_GROUPS, l_down); \
        for (int i = 0; i < 6; i++)                                                              \
            mn_wait(ex[i]);                                                                      \
    }

/* ---- the streaming kernel: DRAM -> PEs -> DRAM every step, at the DRAM roofline ------------- */

__task void lbm(DRAM_SPLIT float *f, DRAM_SPLIT const int *flags, int steps)
{
    L2BM float in[9 * R * PITCH + 2 * UNIT];
    L2BM float ob[NOUT * R * RF];
    L2BM int fls[R * RF];
    L1BM float inl[9 * 2 * VEC];
    L1BM float outl[9 * 2 * VEC];
    L1BM float scr[2 * VEC];
    L1BM int fll[2 * VEC];
    mn_event rd[9 * R], wr[NOUT * R], ex[6];

    CONSTANTS;
#if WALLS
    mnfloat8 xw1[QQ], xw3[QQ], xw5[QQ], xw6[QQ], xw7[QQ], xw8[QQ];   /* last step's, per iteration */
    mnfloat8 yb = 0.0f, yt = 0.0f;            /* pop 4 of the first iteration, pop 2 of the last */
    mnint8 flf, fll_, flx;

    /* the wall flags of the first and last iteration (the side walls are the same in all) */
    LOAD_FLAGS(flf, 0, -1);
    LOAD_FLAGS(fll_, NL2 * R * (QQ - 1), -1);
    flx = flf & b3;

    /* what the walls bounce back in the first step: the populations as they are, unshifted */
    for (int q = 0; q < QQ; q++) {
        for (int r = 0; r < R; r++)
            for (int k = 1; k < 9; k++)
                rd[k * R + r] = mn_distribute_async(INROW(k, r), ROW(0, k, NL2 * (R * q + r) + 1), NL2 * RF);
        for (int k = 1; k < 9; k++) {
            for (int r = 0; r < R; r++) {
                mn_wait(rd[k * R + r]);
                mn_distribute(INL(k) + r * 2 * SHARE, INROW(k, r), RF);
            }
        }
        xw1[q] = mn_distribute(INL(1));
        xw3[q] = mn_distribute(INL(3));
        xw5[q] = mn_distribute(INL(5));
        xw6[q] = mn_distribute(INL(6));
        xw7[q] = mn_distribute(INL(7));
        xw8[q] = mn_distribute(INL(8));
        if (q == 0)
            yb = mn_distribute(INL(4));
        if (q == QQ - 1)
            yt = mn_distribute(INL(2));
    }
#endif

    for (int t = 0; t < steps; t++) {
        int h = t % 2;

        /* the halo rows: a band's top row (slot row S) of the populations streaming up is the next
           band's halo below (row 0), its bottom row (1) of those streaming down the previous
           band's halo above (S + 1) */
        EXCHANGE(h, S, 1, 0, S + 1, 0, 0);

        for (int k = 0; k < 9; k++)
            for (int r = 0; r < R; r++)
                READ(h, 0, k, r);

        for (int q = 0; q < QQ; q++) {
            /* this iteration's rows: into the L1BMs, streamed in x; then the next ones' reads */
            for (int k = 0; k < 9; k++) {
                for (int r = 0; r < R; r++) {
                    mn_wait(rd[k * R + r]);
                    PERIODIC_PAD(k, r);
                    PULL_DOWN(k, r);
                    if (q + 1 < QQ)
                        READ(h, q + 1, k, r);
                }
            }

            PULLED(INL);
#if WALLS
            ITERATION_FLAGS(fl, q, QQ - 1);
            BOUNCE_BACK(fl, xw3[q], yb, xw1[q], yt, xw7[q], xw8[q], xw5[q], xw6[q]);
#endif
            COLLIDE;
#if WALLS
            xw1[q] = p1;
            xw3[q] = p3;
            xw5[q] = p5;
            xw6[q] = p6;
            xw7[q] = p7;
            xw8[q] = p8;
            if (q == 0)
                yb = p4;
            if (q == QQ - 1)
                yt = p2;
#endif
            mn_gather(OUTL(0), p0);
            mn_gather(OUTL(1), p1);
            mn_gather(OUTL(2), p2);
            mn_gather(OUTL(3), p3);
            mn_gather(OUTL(4), p4);
            mn_gather(OUTL(5), p5);
            mn_gather(OUTL(6), p6);
            mn_gather(OUTL(7), p7);
            mn_gather(OUTL(8), p8);

            /* up to DRAM, into the other half, through the rotating output rows */
            for (int k = 0; k < 9; k++) {
                for (int r = 0; r < R; r++) {
                    if (k >= NOUT)
                        mn_wait(wr[(k % NOUT) * R + r]);
                    else if (q > 0)
                        mn_wait(wr[(k % NOUT) * R + r]);
                    mn_gather(OUTROW(k % NOUT, r), OUTL(k) + r * 2 * SHARE, RF);
                    wr[(k % NOUT) * R + r] = mn_gather_async(ROW(1 - h, k, NL2 * (R * q + r) + 1),
                                                             OUTROW(k % NOUT, r), NL2 * RF);
                }
            }
        }
        for (int i = 0; i < NOUT * R; i++)
            mn_wait(wr[i]);
    }
}



/* ---- the resident kernel: the grid stays in the PEs' local memories for every step ---------

   Where the grid fits in LM (two copies of the 9 populations: QR x 9 x 2 vectors per PE), it is
   read from DRAM once, kept there for `steps` steps and written back once: per step DRAM
   carries only the halo rows.  Each L2B owns a contiguous band of BR slot rows (alternate rows
   would put every neighbour in y on the other L2B), QR iterations of R rows.  Per iteration
   and population, the previous step's vectors q-1, q, q+1 go PE -> L1BM (l1bmd) into a window
   in which the rows pulled from EY rows below start EY rows earlier; populations with EX != 0
   take the round trip L1BM -> L2BM -> L1BM to be streamed in x (the shifted l2bmd of the
   streaming kernel); the new values go straight into the other LM copy.  The band's halo rows
   come through DRAM (half 1 of f is their scratch): the other L2B's edge row from this group's
   DRAM, the neighbour group's over the group bus, lane-swapped across the middle. */

/* L1BM: population k's vectors q-1, q (EY = 1), q, q+1 (EY = -1) or q (EY = 0) */
#if RESIDENT      /* built only when asked for (task.py): at n where the grid does not fit, it does not compile */
#define WIN(k) (win + 2 * VEC * ((k) == 0 ? 0 : (k) == 1 ? 1 : (k) == 2 ? 2 : (k) == 3 ? 4 : (k) == 4 ? 5 : \
                                 (k) == 5 ? 7 : (k) == 6 ? 9 : (k) == 7 ? 11 : 13))
#define START(k) (WIN(k) + 2 * (EY(k) == 1 ? VEC - SHARE : EY(k) == -1 ? SHARE : 0))   /* its first row */
#define PULLED_FROM(k) (EX(k) == 0 ? START(k) : INL(k))   /* streamed in x: through L2BM into INL */
#define HALO(k) (hl + ((k) == 2 ? 0 : (k) == 5 ? 1 : (k) == 6 ? 2 : (k) == 4 ? 3 : (k) == 7 ? 4 : 5) * RF)
#define OLD(i) (ph ? fb[i] : fa[i])
#define NEW(i) (ph ? fa[i] : fb[i])

__task void lbm_resident(DRAM_SPLIT float *f, DRAM_SPLIT const int *flags, int steps)
{
    L2BM float in[9 * R * PITCH + 2 * UNIT];
    L2BM float hl[6 * RF];                    /* this step's halo rows */
    L2BM int fls[R * RF];
    L1BM float win[15 * 2 * VEC];
    L1BM float inl[9 * 2 * VEC];
    L1BM float scr[2 * VEC];
    L1BM int fll[2 * VEC];
    mnfloat8 fa[9 * QR], fb[9 * QR];          /* the grid: population k, iteration q at k QR + q */
    mn_event rd[9 * R * NL2], ex[12];
    CONSTANTS;
#if WALLS
    mnint8 flf, fll_, flx;
    LOAD_FLAGS(flf, 0, 1);
    LOAD_FLAGS(fll_, R * (QR - 1), 1);
    flx = flf & b3;
#endif

    /* the grid into LM: every L2B its band */
    for (int q = 0; q < QR; q++) {
        for (int k = 0; k < 9; k++)
            for (int r = 0; r < R; r++)
                for (int l = 0; l < NL2; l++)
                    rd[(k * R + r) * NL2 + l] = mn_unicast_async(INROW(k, r), ROW(0, k, 1 + l * BR + R * q + r), RF, l);
        for (int k = 0; k < 9; k++) {
            for (int r = 0; r < R; r++) {
                for (int l = 0; l < NL2; l++)
                    mn_wait(rd[(k * R + r) * NL2 + l]);
                mn_distribute(INL(k) + r * 2 * SHARE, INROW(k, r), RF);
            }
            fa[k * QR + q] = mn_distribute(INL(k));
        }
    }

    for (int t = 0; t < steps; t += 2) {
        for (int ph = 0; ph < 2; ph++) {      /* unrolled: ph picks the copy read (fa, fb) */
            if (t + ph < steps) {
                /* the band's edge rows -> L2BM: the last row of the populations streaming up, the
                   first of those streaming down */
                mn_gather(scr, OLD(2 * QR + QR - 1));
                mn_gather(in + 0 * RF, scr + 2 * (R - 1) * SHARE, RF);
                mn_gather(scr, OLD(5 * QR + QR - 1));
                mn_gather(in + 1 * RF, scr + 2 * (R - 1) * SHARE, RF);
                mn_gather(scr, OLD(6 * QR + QR - 1));
                mn_gather(in + 2 * RF, scr + 2 * (R - 1) * SHARE, RF);
                mn_gather(scr, OLD(4 * QR));
                mn_gather(in + 3 * RF, scr, RF);
                mn_gather(scr, OLD(7 * QR));
                mn_gather(in + 4 * RF, scr, RF);
                mn_gather(scr, OLD(8 * QR));
                mn_gather(in + 5 * RF, scr, RF);
                /* within the group: L2B 0's top row is L2B 1's halo below (scratch row 1 of the
                   population), L2B 1's bottom row L2B 0's halo above (row 0); the rows that go to
                   the neighbour groups wait in row 3 */
                ex[0] = mn_unicast_async(ROW(1, 2, 1), in + 0 * RF, RF, 0);
                ex[1] = mn_unicast_async(ROW(1, 5, 1), in + 1 * RF, RF, 0);
                ex[2] = mn_unicast_async(ROW(1, 6, 1), in + 2 * RF, RF, 0);
                ex[3] = mn_unicast_async(ROW(1, 4, 0), in + 3 * RF, RF, 1);
                ex[4] = mn_unicast_async(ROW(1, 7, 0), in + 4 * RF, RF, 1);
                ex[5] = mn_unicast_async(ROW(1, 8, 0), in + 5 * RF, RF, 1);
                ex[6] = mn_unicast_async(ROW(1, 2, 3), in + 0 * RF, RF, 1);
                ex[7] = mn_unicast_async(ROW(1, 5, 3), in + 1 * RF, RF, 1);
                ex[8] = mn_unicast_async(ROW(1, 6, 3), in + 2 * RF, RF, 1);
                ex[9] = mn_unicast_async(ROW(1, 4, 3), in + 3 * RF, RF, 0);
                ex[10] = mn_unicast_async(ROW(1, 7, 3), in + 4 * RF, RF, 0);
                ex[11] = mn_unicast_async(ROW(1, 8, 3), in + 5 * RF, RF, 0);
                for (int i = 0; i < 12; i++)
                    mn_wait(ex[i]);
                /* across groups: L2B 1's top row -> the next group's L2B 0 (row 0), L2B 0's bottom
                   row -> the previous group's L2B 1 (row 1) */
                EXCHANGE(1, 3, 3, 0, 1, 0, 1);
                /* every L2B its halo rows: row l of the scratch pair (mvd) */
                ex[0] = mn_distribute_async(HALO(2), ROW(1, 2, 0), NL2 * RF);
                ex[1] = mn_distribute_async(HALO(5), ROW(1, 5, 0), NL2 * RF);
                ex[2] = mn_distribute_async(HALO(6), ROW(1, 6, 0), NL2 * RF);
                ex[3] = mn_distribute_async(HALO(4), ROW(1, 4, 0), NL2 * RF);
                ex[4] = mn_distribute_async(HALO(7), ROW(1, 7, 0), NL2 * RF);
                ex[5] = mn_distribute_async(HALO(8), ROW(1, 8, 0), NL2 * RF);
                for (int i = 0; i < 6; i++)
                    mn_wait(ex[i]);

                for (int q = 0; q < QR; q++) {
                    for (int k = 0; k < 9; k++) {
                        if (EY(k) == 1) {             /* the row below: vector q-1's last, or the halo */
                            if (q > 0)
                                mn_gather(WIN(k), OLD(k * QR + q - 1));
                            else
                                mn_distribute(WIN(k) + 2 * (VEC - SHARE), HALO(k), RF);
                        }
                        mn_gather(WIN(k) + (EY(k) == 1 ? 2 * VEC : 0), OLD(k * QR + q));
                        if (EY(k) == -1) {            /* the row above: vector q+1's first, or the halo */
                            if (q < QR - 1)
                                mn_gather(WIN(k) + 2 * VEC, OLD(k * QR + q + 1));
                            else
                                mn_distribute(WIN(k) + 2 * VEC, HALO(k), RF);
                        }
                        if (EX(k) != 0) {
                            for (int r = 0; r < R; r++) {
                                mn_gather(INROW(k, r), START(k) + r * 2 * SHARE, RF);
                                PERIODIC_PAD(k, r);
                                PULL_DOWN(k, r);
                            }
                        }
                    }
                    PULLED(PULLED_FROM);
#if WALLS
                    ITERATION_FLAGS(fl, q, QR - 1);
                    BOUNCE_BACK(fl, OLD(3 * QR + q), OLD(4 * QR + q), OLD(1 * QR + q), OLD(2 * QR + q),
                                OLD(7 * QR + q), OLD(8 * QR + q), OLD(5 * QR + q), OLD(6 * QR + q));
#endif
                    COLLIDE;
                    NEW(0 * QR + q) = p0;
                    NEW(1 * QR + q) = p1;
                    NEW(2 * QR + q) = p2;
                    NEW(3 * QR + q) = p3;
                    NEW(4 * QR + q) = p4;
                    NEW(5 * QR + q) = p5;
                    NEW(6 * QR + q) = p6;
                    NEW(7 * QR + q) = p7;
                    NEW(8 * QR + q) = p8;
                }
            }
        }
    }

    /* the grid back to DRAM, into the half the streaming kernel would end in */
    for (int ph = 0; ph < 2; ph++) {
        if (steps % 2 == ph) {
            for (int q = 0; q < QR; q++) {
                for (int k = 0; k < 9; k++) {
                    mn_gather(INL(k), ph ? fb[k * QR + q] : fa[k * QR + q]);
                    for (int r = 0; r < R; r++) {
                        mn_gather(INROW(k, r), INL(k) + r * 2 * SHARE, RF);
                        for (int l = 0; l < NL2; l++)
                            rd[(k * R + r) * NL2 + l] = mn_unicast_async(ROW(ph, k, 1 + l * BR + R * q + r),
                                                                         INROW(k, r), RF, l);
                    }
                }
                for (int i = 0; i < 9 * R * NL2; i++)
                    mn_wait(rd[i]);
            }
        }
    }
}
#endif
