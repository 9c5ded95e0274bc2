/* Harris corners, fp32: the plain OpenCL C form (samples/features/plain.py runs it).

   The stages of samples/features/reference.py (scikit-image's corner_harris and corner_peaks),
   one kernel each, every image H x W row-major (x fastest), launched 2-D over (W, H):

     sobel      Ir, Ic (scipy.ndimage.sobel, zero padding) -> Prr = Ir^2, Prc = Ir Ic, Pcc = Ic^2
     gauss_y    the three products smoothed along y (9 taps, sigma 1, zero padding)
     gauss_x    ... then along x: Arr, Arc, Acc
     harris     R = (Arr Acc - Arc^2) - K (Arr + Acc)^2
     minmax     max and min of R: each row's (a work-item per row), then one work-group
                over the rows' results, a tree in local memory (minmax_final)
     max_y      the maximum of R over the 11 rows around each pixel (clipped to the image)
     peaks      ... and over the 11 columns: a peak is R equal to that maximum, above
                max(min R, THRESHOLD_REL max R), at least MD pixels from every border

   A neighbour is always loaded as A[inside ? f + s : f] (the pixel's own flat index f when the
   neighbour is outside the image): the backend reads that as a shifted row, not a gather, and
   nothing is read out of bounds.  Zero padding then selects 0; the maximum filter needs no
   padding at all, since skimage's 'nearest' padding repeats an edge pixel the window holds.

   Built with -D W0..W4=<the Gaussian's weights, centre out> (plain.py computes them as scipy
   does, in double, and rounds them to float). */

#define K 0.05f
#define MD 5
#define THRESHOLD_REL 0.02f

#define NB(A, in, s) ((in) ? A[(in) ? f + (s) : f] : 0.0f)     /* zero outside */

__kernel void sobel(__global const float *I, __global float *Prr, __global float *Prc,
                    __global float *Pcc, int W, int H)
{
    int x = get_global_id(0), y = get_global_id(1);
    int f = y * W + x;
    int l = x > 0, r = x < W - 1, u = y > 0, d = y < H - 1;
    /* d/dy at columns x-1, x, x+1, then [1 2 1] along x */
    float tl = NB(I, l && d, W - 1) - NB(I, l && u, -W - 1);
    float tc = NB(I, d, W) - NB(I, u, -W);
    float tr = NB(I, r && d, W + 1) - NB(I, r && u, -W + 1);
    float ir = fma(2.0f, tc, tl) + tr;
    /* d/dx at rows y-1, y, y+1, then [1 2 1] along y */
    float su = NB(I, u && r, -W + 1) - NB(I, u && l, -W - 1);
    float sc = NB(I, r, 1) - NB(I, l, -1);
    float sd = NB(I, d && r, W + 1) - NB(I, d && l, W - 1);
    float ic = fma(2.0f, sc, su) + sd;
    Prr[f] = ir * ir;
    Prc[f] = ir * ic;
    Pcc[f] = ic * ic;
}

/* the Gaussian along a step s (W: y, 1: x), the outermost taps first */
#define TAPS(A, s, lo, hi, acc)                                                      \
    acc = W4 * NB(A, (lo) >= 4, -4 * (s));                                           \
    acc = fma(W4, NB(A, (hi) >= 4, 4 * (s)), acc);                                   \
    acc = fma(W3, NB(A, (lo) >= 3, -3 * (s)), acc);                                  \
    acc = fma(W3, NB(A, (hi) >= 3, 3 * (s)), acc);                                   \
    acc = fma(W2, NB(A, (lo) >= 2, -2 * (s)), acc);                                  \
    acc = fma(W2, NB(A, (hi) >= 2, 2 * (s)), acc);                                   \
    acc = fma(W1, NB(A, (lo) >= 1, -(s)), acc);                                      \
    acc = fma(W1, NB(A, (hi) >= 1, (s)), acc);                                       \
    acc = fma(W0, A[f], acc)

__kernel void gauss_y(__global const float *Prr, __global const float *Prc, __global const float *Pcc,
                      __global float *Grr, __global float *Grc, __global float *Gcc, int W, int H)
{
    int x = get_global_id(0), y = get_global_id(1);
    int f = y * W + x;
    int lo = y, hi = H - 1 - y;                 /* rows available above and below */
    float a;
    TAPS(Prr, W, lo, hi, a);
    Grr[f] = a;
    TAPS(Prc, W, lo, hi, a);
    Grc[f] = a;
    TAPS(Pcc, W, lo, hi, a);
    Gcc[f] = a;
}

__kernel void gauss_x(__global const float *Grr, __global const float *Grc, __global const float *Gcc,
                      __global float *Arr, __global float *Arc, __global float *Acc, int W, int H)
{
    int x = get_global_id(0), y = get_global_id(1);
    int f = y * W + x;
    int lo = x, hi = W - 1 - x;                 /* columns available left and right */
    float a;
    TAPS(Grr, 1, lo, hi, a);
    Arr[f] = a;
    TAPS(Grc, 1, lo, hi, a);
    Arc[f] = a;
    TAPS(Gcc, 1, lo, hi, a);
    Acc[f] = a;
}

__kernel void harris(__global const float *Arr, __global const float *Arc, __global const float *Acc,
                     __global float *R, int W, int H)
{
    int f = get_global_id(1) * W + get_global_id(0);
    float rr = Arr[f], rc = Arc[f], cc = Acc[f];
    float det = rr * cc - rc * rc;
    float trace = rr + cc;
    R[f] = det - K * (trace * trace);
}

/* each work-item: the max and min of one row of R (a row per work-item: the backend stages rows) */
__kernel void minmax(__global const float *R, __global float *part, int W)
{
    int y = get_global_id(0);
    float mx = R[y * W], mn = mx;
    for (int x = 1; x < W; x++) {
        mx = fmax(mx, R[y * W + x]);
        mn = fmin(mn, R[y * W + x]);
    }
    part[2 * y] = mx;
    part[2 * y + 1] = mn;
}

/* one work-group: the rows' results, by a tree in local memory -> mm[0] = max R, mm[1] = min R */
__kernel void minmax_final(__global const float *part, __global float *mm, int groups,
                           __local float *lmax, __local float *lmin)
{
    int lid = get_local_id(0);
    float mx = -INFINITY, mn = INFINITY;
    for (int g = lid; g < groups; g += get_local_size(0)) {
        mx = fmax(mx, part[2 * g]);
        mn = fmin(mn, part[2 * g + 1]);
    }
    lmax[lid] = mx;
    lmin[lid] = mn;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (lid < s) {
            lmax[lid] = fmax(lmax[lid], lmax[lid + s]);
            lmin[lid] = fmin(lmin[lid], lmin[lid + s]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        mm[0] = lmax[0];
        mm[1] = lmin[0];
    }
}

/* the maximum over a window of 2 MD + 1 (MD = 5) along a step s, clipped to the image; written
   out so that every neighbour's offset is a constant (a loop counter in it would gather) */
#define WMAX(A, s, lo, hi, m, j)                                                     \
    m = fmax(m, A[(lo) >= (j) ? f - (j) * (s) : f]);                                 \
    m = fmax(m, A[(hi) >= (j) ? f + (j) * (s) : f])
#define WINDOW_MAX(A, s, lo, hi, m)                                                  \
    m = A[f];                                                                        \
    WMAX(A, s, lo, hi, m, 1);                                                        \
    WMAX(A, s, lo, hi, m, 2);                                                        \
    WMAX(A, s, lo, hi, m, 3);                                                        \
    WMAX(A, s, lo, hi, m, 4);                                                        \
    WMAX(A, s, lo, hi, m, 5)

__kernel void max_y(__global const float *R, __global float *My, int W, int H)
{
    int x = get_global_id(0), y = get_global_id(1);
    int f = y * W + x;
    float m;
    WINDOW_MAX(R, W, y, H - 1 - y, m);
    My[f] = m;
}

__kernel void peaks(__global const float *R, __global const float *My, __global const float *mm,
                    __global int *mask, int W, int H)
{
    int x = get_global_id(0), y = get_global_id(1);
    int f = y * W + x;
    float m;
    WINDOW_MAX(My, 1, x, W - 1 - x, m);
    float thr = fmax(mm[1], THRESHOLD_REL * mm[0]);
    float v = R[f];
    int inside = x >= MD && x < W - MD && y >= MD && y < H - MD;
    mask[f] = inside && v == m && v > thr;
}
