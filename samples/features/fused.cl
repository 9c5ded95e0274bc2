/* Harris corners, fp32: the fused task kernel (samples/features/fused.py runs it).

   One launch runs the whole pipeline of plain.cl on one frame per L1B (64 frames of 512 x 512 on
   mncore2, 4 of 128 x H on tiny), streaming each frame's rows once from DRAM and keeping every
   intermediate on chip: only the response R and the peak mask are written back.

   Layout (fused.py packs it).  A frame row of W = 2 VEC pixels is one vector of its L1B: long
   word x (0 .. VEC-1) holds pixel x (its first float: the low 32 bits) and pixel x + W/2; PE p
   at cycle c holds long word PEL1 c + p (l1bmd).  In DRAM (DRAM_SPLIT: group g's frames in its own DRAM) the
   rows of a group's frames are interleaved as l2bmd deals them out: row y of every frame of the
   group is one mvd (L2B l takes its half) and one l2bmd (L1B i takes its frame's row, whole).

   Per row (iteration k), every L1B at once:
     I(k) arrives (mvd, double-buffered: the next row is in flight while this one is used);
     sx(k) = I(k)[x+1] - I(k)[x-1];  t(k-1) = I(k) - I(k-2);
     Ir(k-1) = t[x-1] + 2 t + t[x+1],  Ic(k-1) = sx(k-2) + 2 sx(k-1) + sx(k)   (Sobel, zero padding)
     P(k-1) = Ir^2, Ir Ic, Ic^2;  Gy(k-5) = sum_j w_j P(k-5+j)  (a ring of 9 rows in LM)
     A(k-5) = sum_i w_i Gy(k-5)[x+i];  R(k-5) = det A - K trace^2, written to DRAM (async)
     My(k-10) = max_j R(k-10+j) (11 rows, clipped), M = max_i My[x+i];
     Rc(k-10) = R where R == M inside the border, else -big: kept in LM for the whole frame
     (the rows within MD of the top and bottom hold no candidates and are not kept).
   A shift in y is an LM ring index; a shift in x a shifted l1bmd from an L1BM copy of the row
   between two pad vectors (the row's two halves meet in its middle: a pad holds the other
   half's pixels, and 0 or -big outside the image; SHIFTABLE).  After the last row: the frame's max and min
   of R by a tree (l1bmr over the MABs, then the cycles and lanes), the threshold
   max(min R, 0.02 max R), and mask = Rc > threshold, written as a bitmap (32 rows a word).

   Built with -D H=<rows> -D W0..W4=<the Gaussian's weights, centre out> (fused.py). */

#define NL2 NUM_L2B
#define NL1 NUM_L1B
#define PEL1 (NUM_MAB * NUM_PE_MAB)           /* PEs per L1B */
#define VEC (4 * PEL1)                        /* long words of a row: one vector per L1B */
#define ROWF (2 * VEC)                        /* ... in floats (or ints) */
#define BLOCK (NL1 * ROWF)                    /* a row of every frame of an L2B */
#define GROUPROW (NL2 * BLOCK)                /* ... of every frame of a group: one mvd */
#define K 0.05f
#define MD 5
#define BIG (-3.0e38f)                        /* "outside" for the window maximum */

/* an x-shifted source row in L1BM: [left pad | row | right pad], each a vector */
#define AREA(a) (sh + (a) * 3 * ROWF)
#define AT(a, s) (AREA(a) + ROWF + 2 * (s))   /* the row seen s long words to the right */

/* put vector v into area a with its pads.  A long word's first pixel (x, the low 32 bits) and
   second (x + W/2, the high ones): past the row's end the first pixel's neighbours are the second
   pixels of the row's start (mn_lanes_down: high bits to low), before its start the second
   pixel's are the first pixels of its end (mn_lanes_up); outside the image 0, or -big for the
   window maximum (big0 / big1: -big in the first / second pixel, 0 in the other) */
#define SHIFTABLE(a, v)                                                                          \
    mn_gather(AREA(a) + ROWF, v);                                                                \
    mn_gather(AREA(a), mn_lanes_up(v));                                                          \
    mn_gather(AREA(a) + 2 * ROWF, mn_lanes_down(v))
#define SHIFTABLE_BIG(a, v)                                                                      \
    mn_gather(AREA(a) + ROWF, v);                                                                \
    mn_gather(AREA(a), mn_lanes_up(v) + big0);                                                   \
    mn_gather(AREA(a) + 2 * ROWF, mn_lanes_down(v) + big1)

/* a row from L1BM `from` up to DRAM `to` through the L2BM buffer `via`, on event e (waited first,
   when `busy`: the write two rows back used the same buffer) */
#define WRITE_ROW(e, via, from, to, busy)                                                        \
    if (busy)                                                                                    \
        mn_wait(e);                                                                              \
    mn_gather(via, from, BLOCK);                                                                 \
    e = mn_gather_async(to, via, GROUPROW)

__task void harris(DRAM_SPLIT const float *img, DRAM const int *geo, DRAM_SPLIT float *R, DRAM_SPLIT int *mask)
{
    L2BM float inb[2 * BLOCK];
    L2BM float outr[2 * BLOCK];
    L2BM int outm[2 * BLOCK];
    L2BM int geob[BLOCK];
    L1BM float row[ROWF];
    L1BM float sh[6 * 3 * ROWF];
    L1BM float rl[ROWF];
    L1BM int ml[ROWF];
    L1BM int gl[ROWF];
    L1BM float red[64];
    mnfloat8 rc[H - 2 * MD];                  /* the candidates of rows MD .. H-MD-1: first, so that
                                                 they take one LM whole (512 rows: 4016 of 4096 words) */
    /* rings of the last rows, each row in two slots (s and s + n): the rows a step reads are then
       n consecutive slots from one run-time base.  Each run-time LM offset is a block of its own
       (the sequencer passes it), scheduled alone; one base keeps a stage's reads in one block */
    mnfloat8 ir3[6], sx3[6];                  /* I, sx: 3 rows */
    mnfloat8 prr[18], prc[18], pcc[18];       /* P: 9 rows */
    mnfloat8 r11[22];                         /* R: 11 rows */
    mn_event rd[2], wr[2], wm[2];

    mnfloat8 zero = 0.0f;
    mnfloat8 two = 2.0f;
    mnfloat8 big = BIG;
    mnfloat8 kk = K;
    mnfloat8 w0 = W0, w1 = W1, w2 = W2, w3 = W3, w4 = W4;
    mnfloat8 rmax = BIG, rmin = 3.0e38f;
    mnfloat8 xa = 0.0f, xb = 0.0f, xc = 0.0f, ya = 0.0f, yb = 0.0f, yc = 0.0f;
    mnint8 one = 1, nil = 0;

    /* geo row 0 is 1 in a long word's first pixel; row 1 marks the columns MD or more from the sides */
    mn_distribute(geob, geo, GROUPROW);
    mn_distribute(gl, geob, BLOCK);
    mnint8 first = mn_distribute(gl);
    mn_distribute(geob, geo + GROUPROW, GROUPROW);
    mn_distribute(gl, geob, BLOCK);
    mnint8 xin = mn_distribute(gl);
    mnfloat8 big0 = mn_select(first, big, zero);
    mnfloat8 big1 = mn_select(first, zero, big);

    for (int i = 0; i < 6; i++) {
        ir3[i] = zero;
        sx3[i] = zero;
    }
    for (int i = 0; i < 18; i++) {
        prr[i] = zero;
        prc[i] = zero;
        pcc[i] = zero;
    }
    for (int i = 0; i < 22; i++)
        r11[i] = big;

    rd[0] = mn_distribute_async(inb, img, GROUPROW);
    for (int k = 0; k < H + 2 * MD; k++) {
        int b = k % 2;
        /* I(k): into the L1BMs; the next row's read starts */
        mnfloat8 iv = zero;
        if (k < H) {
            if (b == 0) {
                mn_wait(rd[0]);
                mn_distribute(row, inb, BLOCK);
                if (k + 1 < H)
                    rd[1] = mn_distribute_async(inb + BLOCK, img + (k + 1) * GROUPROW, GROUPROW);
            } else {
                mn_wait(rd[1]);
                mn_distribute(row, inb + BLOCK, BLOCK);
                if (k + 1 < H)
                    rd[0] = mn_distribute_async(inb, img + (k + 1) * GROUPROW, GROUPROW);
            }
            iv = mn_distribute(row);
        }
        /* Sobel for row k - 1 */
        SHIFTABLE(0, iv);
        mnfloat8 sxk = mn_distribute(AT(0, 1)) - mn_distribute(AT(0, -1));
        int q3 = (k + 1) % 3;                      /* slots q3, q3 + 1: rows k-2, k-1 */
        mnfloat8 t = iv - ir3[q3];                 /* I(k) - I(k-2) */
        SHIFTABLE(1, t);
        mnfloat8 rr = mn_fma(two, t, mn_distribute(AT(1, -1))) + mn_distribute(AT(1, 1));
        mnfloat8 cc = mn_fma(two, sx3[q3 + 1], sx3[q3]) + sxk;
        int n3 = k % 3;
        ir3[n3] = iv;
        ir3[n3 + 3] = iv;
        sx3[n3] = sxk;
        sx3[n3 + 3] = sxk;
        int n9 = (k + 8) % 9;                      /* the slots of row k - 1 */
        if (k >= 1 && k <= H) {
            prr[n9] = rr * rr;
            prc[n9] = rr * cc;
            pcc[n9] = cc * cc;
        } else {
            prr[n9] = zero;
            prc[n9] = zero;
            pcc[n9] = zero;
        }
        prr[n9 + 9] = prr[n9];
        prc[n9 + 9] = prc[n9];
        pcc[n9 + 9] = pcc[n9];
        /* the Gaussian for row k - 5: along y over the ring, then along x */
        if (k >= 5 && k < H + 5) {
            int q9 = k % 9;                         /* rows k-9 .. k-1: slots q9 .. q9 + 8 */
            mnfloat8 ga = w4 * prr[q9];
            mnfloat8 gb = w4 * prc[q9];
            mnfloat8 gc = w4 * pcc[q9];
            ga = mn_fma(w4, prr[q9 + 8], ga);
            gb = mn_fma(w4, prc[q9 + 8], gb);
            gc = mn_fma(w4, pcc[q9 + 8], gc);
            ga = mn_fma(w3, prr[q9 + 1], ga);
            gb = mn_fma(w3, prc[q9 + 1], gb);
            gc = mn_fma(w3, pcc[q9 + 1], gc);
            ga = mn_fma(w3, prr[q9 + 7], ga);
            gb = mn_fma(w3, prc[q9 + 7], gb);
            gc = mn_fma(w3, pcc[q9 + 7], gc);
            ga = mn_fma(w2, prr[q9 + 2], ga);
            gb = mn_fma(w2, prc[q9 + 2], gb);
            gc = mn_fma(w2, pcc[q9 + 2], gc);
            ga = mn_fma(w2, prr[q9 + 6], ga);
            gb = mn_fma(w2, prc[q9 + 6], gb);
            gc = mn_fma(w2, pcc[q9 + 6], gc);
            ga = mn_fma(w1, prr[q9 + 3], ga);
            gb = mn_fma(w1, prc[q9 + 3], gb);
            gc = mn_fma(w1, pcc[q9 + 3], gc);
            ga = mn_fma(w1, prr[q9 + 5], ga);
            gb = mn_fma(w1, prc[q9 + 5], gb);
            gc = mn_fma(w1, pcc[q9 + 5], gc);
            ga = mn_fma(w0, prr[q9 + 4], ga);
            gb = mn_fma(w0, prc[q9 + 4], gb);
            gc = mn_fma(w0, pcc[q9 + 4], gc);
            SHIFTABLE(2, ga);
            SHIFTABLE(3, gb);
            SHIFTABLE(4, gc);
            /* each tap: the three rows' loads into named vectors, two sets in turn, so that a
               tap's loads overlap the multiply-adds of the one before (one temporary would
               serialise them) */
            xa = mn_distribute(AT(2, -4));
            xb = mn_distribute(AT(3, -4));
            xc = mn_distribute(AT(4, -4));
            ya = mn_distribute(AT(2, 4));
            yb = mn_distribute(AT(3, 4));
            yc = mn_distribute(AT(4, 4));
            mnfloat8 arr = w4 * xa;
            mnfloat8 arc = w4 * xb;
            mnfloat8 acc = w4 * xc;
            arr = mn_fma(w4, ya, arr);
            arc = mn_fma(w4, yb, arc);
            acc = mn_fma(w4, yc, acc);
            xa = mn_distribute(AT(2, -3));
            xb = mn_distribute(AT(3, -3));
            xc = mn_distribute(AT(4, -3));
            arr = mn_fma(w3, xa, arr);
            arc = mn_fma(w3, xb, arc);
            acc = mn_fma(w3, xc, acc);
            ya = mn_distribute(AT(2, 3));
            yb = mn_distribute(AT(3, 3));
            yc = mn_distribute(AT(4, 3));
            arr = mn_fma(w3, ya, arr);
            arc = mn_fma(w3, yb, arc);
            acc = mn_fma(w3, yc, acc);
            xa = mn_distribute(AT(2, -2));
            xb = mn_distribute(AT(3, -2));
            xc = mn_distribute(AT(4, -2));
            arr = mn_fma(w2, xa, arr);
            arc = mn_fma(w2, xb, arc);
            acc = mn_fma(w2, xc, acc);
            ya = mn_distribute(AT(2, 2));
            yb = mn_distribute(AT(3, 2));
            yc = mn_distribute(AT(4, 2));
            arr = mn_fma(w2, ya, arr);
            arc = mn_fma(w2, yb, arc);
            acc = mn_fma(w2, yc, acc);
            xa = mn_distribute(AT(2, -1));
            xb = mn_distribute(AT(3, -1));
            xc = mn_distribute(AT(4, -1));
            arr = mn_fma(w1, xa, arr);
            arc = mn_fma(w1, xb, arc);
            acc = mn_fma(w1, xc, acc);
            ya = mn_distribute(AT(2, 1));
            yb = mn_distribute(AT(3, 1));
            yc = mn_distribute(AT(4, 1));
            arr = mn_fma(w1, ya, arr);
            arc = mn_fma(w1, yb, arc);
            acc = mn_fma(w1, yc, acc);
            arr = mn_fma(w0, ga, arr);
            arc = mn_fma(w0, gb, arc);
            acc = mn_fma(w0, gc, acc);
            /* R = (Arr Acc - Arc^2) - K (Arr + Acc)^2 */
            mnfloat8 tr = arr + acc;
            mnfloat8 rv = (arr * acc - arc * arc) - kk * (tr * tr);
            r11[(k - 5) % 11] = rv;
            r11[(k - 5) % 11 + 11] = rv;
            rmax = mn_max(rmax, rv);
            rmin = mn_min(rmin, rv);
            /* R(k - 5) up to DRAM, double-buffered */
            mn_gather(rl, rv);
            if (b == 0) {
                WRITE_ROW(wr[0], outr, rl, R + (k - 5) * GROUPROW, k >= 7);
            } else {
                WRITE_ROW(wr[1], outr + BLOCK, rl, R + (k - 5) * GROUPROW, k >= 7);
            }
        } else {
            r11[(k + 6) % 11] = big;               /* rows outside the frame: no candidates */
            r11[(k + 6) % 11 + 11] = big;
        }
        /* the window maximum for row k - 10: along y over the ring of R, then along x */
        if (k >= 2 * MD) {
            int q11 = (k + 7) % 11;                /* rows k-15 .. k-5: slots q11 .. q11 + 10 */
            mnfloat8 my = mn_max(mn_max(mn_max(r11[q11], r11[q11 + 1]), mn_max(r11[q11 + 2], r11[q11 + 3])),
                                 mn_max(mn_max(r11[q11 + 4], r11[q11 + 5]), mn_max(r11[q11 + 6], r11[q11 + 7])));
            my = mn_max(my, mn_max(mn_max(r11[q11 + 8], r11[q11 + 9]), r11[q11 + 10]));
            SHIFTABLE_BIG(5, my);
            mnfloat8 m = mn_max(mn_max(mn_max(mn_distribute(AT(5, 1)), mn_distribute(AT(5, -1))),
                                       mn_max(mn_distribute(AT(5, 2)), mn_distribute(AT(5, -2)))),
                                mn_max(mn_max(mn_distribute(AT(5, 3)), mn_distribute(AT(5, -3))),
                                       mn_max(mn_distribute(AT(5, 4)), mn_distribute(AT(5, -4)))));
            m = mn_max(mn_max(m, my), mn_max(mn_distribute(AT(5, 5)), mn_distribute(AT(5, -5))));
            mnfloat8 rk = r11[q11 + 5];            /* R(k - 10) */
            mnfloat8 cand = mn_select(rk == m, rk, big);
            if (k - 2 * MD >= MD && k - 2 * MD < H - MD)
                rc[k - 3 * MD] = mn_select(xin, cand, big);
        }
    }
    mn_wait(wr[0]);
    mn_wait(wr[1]);

    /* the frame's max and min of R: over the MABs (l1bmr), the cycles, the lanes */
    mn_reduce(red, rmax, MN_MAX);
    mnfloat8 v = mn_max(mn_max(mn_broadcast(red), mn_broadcast(red + 8)),
                        mn_max(mn_broadcast(red + 16), mn_broadcast(red + 24)));
    mn_gather(rl, v);
    v = mn_max(mn_max(mn_broadcast(rl), mn_broadcast(rl + 2 * PEL1)),
               mn_max(mn_broadcast(rl + 4 * PEL1), mn_broadcast(rl + 6 * PEL1)));
    mnfloat8 hi = mn_max(v, mn_swap_lanes(v));
    mn_reduce(red, rmin, MN_MIN);
    v = mn_min(mn_min(mn_broadcast(red), mn_broadcast(red + 8)),
               mn_min(mn_broadcast(red + 16), mn_broadcast(red + 24)));
    mn_gather(rl, v);
    v = mn_min(mn_min(mn_broadcast(rl), mn_broadcast(rl + 2 * PEL1)),
               mn_min(mn_broadcast(rl + 4 * PEL1), mn_broadcast(rl + 6 * PEL1)));
    mnfloat8 lo = mn_min(v, mn_swap_lanes(v));
    mnfloat8 thr = mn_max(lo, 0.02f * hi);

    /* the peak mask as a bitmap: bit j of packed row p is row 32 p + j (one long word row per 32
       image rows), double-buffered */
    for (int y0 = 0; y0 < H; y0 += 32) {
        int b = y0 / 32 % 2;
        mnint8 bits = nil;
        for (int jj = 0; jj < 32; jj++) {          /* unrolled: rows y0 + 31 down to y0 */
            int j = 31 - jj;
            bits = bits << one;
            if (y0 + j >= MD && y0 + j < H - MD)
                bits = bits | mn_select(rc[y0 + j - MD] > thr, one, nil);
        }
        mn_gather(ml, bits);
        if (b == 0) {
            WRITE_ROW(wm[0], outm, ml, mask + y0 / 32 * GROUPROW, y0 >= 64);
        } else {
            WRITE_ROW(wm[1], outm + BLOCK, ml, mask + y0 / 32 * GROUPROW, y0 >= 64);
        }
    }
    mn_wait(wm[0]);
    mn_wait(wm[1]);
}
