/* D2Q9 lattice Boltzmann, BGK, fp32: the plain OpenCL C form (samples/lbm/plain.py runs it).

   One launch per time step: a fused pull stream-and-collide over every cell, one buffer per
   population, ping-pong (f0..f8 in, g0..g8 out).  Velocities in the order
   k = 0..8: (0,0) (1,0) (0,1) (-1,0) (0,-1) (1,1) (-1,1) (-1,-1) (1,-1), OPP = 0 3 4 1 2 7 8 5 6.

   Layout.  Each population is n + 2 rows of n cells (x fastest): a ghost row, the n rows of the
   domain, a ghost row; cell (x, y) is element (y + 1) n + x.  The launch is 2-D over the whole
   array, global size (n, n + 2), with the domain's rows as a guard: the pitch n is
   get_global_size(0), so the backend runs it row-major (a "rows" build) and every access is the
   work-item's flat position f plus a uniform shift, or one of two such shifts chosen per cell
   (`A[c ? f - s : f]`, a clamped neighbour in the backend's words): contiguous stores, shifted
   loads, no modulo and no per-lane index (those would be gathers: the whole buffer through
   every PE).  Every chosen index is inside the array, so nothing reads out of bounds.

   Boundaries (pulled_k when the source cell (x - ex, y - ey) is outside the domain):
   - LBM_CASE 0, taylor-green: periodic.  Across x, the row's other end (a shift of +-n chosen per
     cell); across y, the ghost rows, which lbm_halo fills before each step (row n-1 into the
     bottom ghost row, row 0 into the top one: contiguous copies).
   - LBM_CASE 1, cavity: half-way bounce-back off all four walls, pulled_k = f_OPP[k](x, y)
     + 6 w_k (e_k . u_wall), u_wall = (u_lid, 0) when the source row is y = n (the top wall,
     the top corners included), else 0.
   - LBM_CASE 2, channel: walls (bounce-back) at the bottom and top, inflow at x = -1 (the
     equilibrium at rho = 1, u = (u_in, 0)), outflow at x = n (zero gradient: the source row's
     cell x = n - 1), a solid obstacle (solid[] != 0, same layout; bounce-back off it, a solid
     cell keeps the rest equilibrium).  Walls take precedence over inflow and outflow.

   Collision: rho = sum p_k, u = sum p_k e_k / rho, feq_k = w_k rho (1 + 3 e.u + 4.5 (e.u)^2
   - 1.5 u.u), f_k' = p_k - omega (p_k - feq_k), omega = 1 / tau = 1 / (3 nu + 0.5). */

#ifndef LBM_CASE
#define LBM_CASE 1
#endif

#define W0 (4.0f / 9.0f)
#define WS (1.0f / 9.0f)
#define WD (1.0f / 36.0f)

/* the source of population k, (x - EX, y - EY), is in the domain in x / in y */
#define IN_X(EX) ((EX) == 0 || ((EX) > 0 ? x > 0 : x < n - 1))
#define IN_Y(EY) ((EY) == 0 || ((EY) > 0 ? y > 0 : y < n - 1))

#if LBM_CASE == 0
/* periodic: x wraps to the row's other end, as a row index one up or down ((y + w) n: the
   backend's clamped-neighbour form; an index `c ? f - s : f - s + n` would be LLVM's select,
   which the backend gathers); y through the ghost rows */
#define WRAP(EX) ((EX) > 0 ? (x == 0) : (EX) < 0 ? -(x == n - 1) : 0)
#define PULL(K, EX, EY, W, FK, FO)                                              \
    float p##K = FK[(y + 1 - (EY) + WRAP(EX)) * n + x - (EX)];
#elif LBM_CASE == 1
/* cavity: bounce-back, the top wall moving */
#define PULL(K, EX, EY, W, FK, FO)                                              \
    float p##K;                                                                 \
    {                                                                           \
        int in = IN_X(EX) && IN_Y(EY);                                          \
        float a = FK[(y + 1 - (in ? (EY) : 0)) * n + x - (in ? (EX) : 0)];       \
        float b = FO[f];                                                        \
        float lid = ((EY) < 0 && y == n - 1) ? 6.0f * (W) * (EX) * u_lid : 0.0f; \
        p##K = in ? a : b + lid;                                                \
    }
#else
/* channel: walls at the bottom and top, inflow left, outflow right, a solid obstacle */
#define PULL(K, EX, EY, W, FK, FO)                                              \
    float p##K;                                                                 \
    {                                                                           \
        int in = IN_X(EX) && IN_Y(EY);                                          \
        int src = (y + 1 - (in ? (EY) : 0)) * n + x - (in ? (EX) : 0);        \
        float a = FK[src];                                                      \
        int s = solid[src];                                                     \
        float o = FK[(y + 1 - (IN_Y(EY) ? (EY) : 0)) * n + x]; /* outflow: x = n-1, the source row */ \
        float b = FO[f];                                                        \
        float eu = (EX) * u_in;                                                 \
        float inflow = (W) * (1.0f + 3.0f * eu + 4.5f * eu * eu - 1.5f * u_in * u_in); \
        p##K = !IN_Y(EY) ? b : !IN_X(EX) ? ((EX) > 0 ? inflow : o) : s ? b : a; \
    }
#endif

#if LBM_CASE == 2
#define EXTRA_ARGS , float u_in, __global const int *solid
#else
#define EXTRA_ARGS , float u_lid
#endif

__kernel void lbm_step(__global const float *f0, __global const float *f1, __global const float *f2,
                       __global const float *f3, __global const float *f4, __global const float *f5,
                       __global const float *f6, __global const float *f7, __global const float *f8,
                       __global float *g0, __global float *g1, __global float *g2,
                       __global float *g3, __global float *g4, __global float *g5,
                       __global float *g6, __global float *g7, __global float *g8,
                       int n, float omega EXTRA_ARGS)
{
    int x = get_global_id(0);
    int y = get_global_id(1) - 1;               /* the ghost rows are y = -1 and y = n */
    if (y < 0 || y >= n)
        return;
    int f = (y + 1) * n + x;

    float p0 = f0[f];
    PULL(1,  1,  0, WS, f1, f3)
    PULL(2,  0,  1, WS, f2, f4)
    PULL(3, -1,  0, WS, f3, f1)
    PULL(4,  0, -1, WS, f4, f2)
    PULL(5,  1,  1, WD, f5, f7)
    PULL(6, -1,  1, WD, f6, f8)
    PULL(7, -1, -1, WD, f7, f5)
    PULL(8,  1, -1, WD, f8, f6)

    /* rho = 1 + sum (p_k - w_k): the literal sum rounds the same way in every cell, every step,
       and total mass drifts by 1.4e-6 in 200 steps at N = 32 (samples/lbm/reference.py) */
    float d = p0 - W0;
    d += p1 - WS; d += p2 - WS; d += p3 - WS; d += p4 - WS;
    d += p5 - WD; d += p6 - WD; d += p7 - WD; d += p8 - WD;
    float rho = 1.0f + d;
    float ux = (p1 - p3 + p5 - p6 - p7 + p8) / rho;
    float uy = (p2 - p4 + p5 + p6 - p7 - p8) / rho;
    float usq = 1.5f * (ux * ux + uy * uy);
#if LBM_CASE == 2
    if (solid[f]) {                             /* a solid cell keeps the rest equilibrium */
        rho = 1.0f;
        ux = 0.0f;
        uy = 0.0f;
        usq = 0.0f;
        p0 = W0; p1 = WS; p2 = WS; p3 = WS; p4 = WS; p5 = WD; p6 = WD; p7 = WD; p8 = WD;
    }
#endif

#define COLLIDE(K, W, EU)                                                       \
    {                                                                           \
        float eu = (EU);                                                        \
        float feq = (W) * rho * (1.0f + 3.0f * eu + 4.5f * eu * eu - usq);      \
        g##K[f] = p##K - omega * (p##K - feq);                                  \
    }
    COLLIDE(0, W0, 0.0f)
    COLLIDE(1, WS, ux)
    COLLIDE(2, WS, uy)
    COLLIDE(3, WS, -ux)
    COLLIDE(4, WS, -uy)
    COLLIDE(5, WD, ux + uy)
    COLLIDE(6, WD, -ux + uy)
    COLLIDE(7, WD, -ux - uy)
    COLLIDE(8, WD, ux - uy)
}

/* Taylor-Green only, before each step: the ghost rows of the populations that stream across y.
   Bottom ghost row (elements 0 .. n-1) <- row n-1, top ghost row <- row 0.  A 1-D launch, x < n. */
__kernel void lbm_halo(__global float *f2, __global float *f4, __global float *f5,
                       __global float *f6, __global float *f7, __global float *f8, int n)
{
    int x = get_global_id(0);
    int last = n * n + x;                       /* row n-1: (n - 1 + 1) n + x */
    int first = n + x;                          /* row 0 */
    int top = n * n + n + x;                    /* the top ghost row */
    f2[x] = f2[last];                           /* ey = +1 pulls from y - 1 */
    f5[x] = f5[last];
    f6[x] = f6[last];
    f4[top] = f4[first];                        /* ey = -1 pulls from y + 1 */
    f7[top] = f7[first];
    f8[top] = f8[first];
}
