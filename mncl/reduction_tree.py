"""A reduction's last stage on the machine's reduction tree (emulator device only).

When reduce_expr is a sum, max or min of float32 (or a sum, & or | of 32-bit ints), mncl.reduction
writes reduce_expr(neutral, map_expr(i)) at every index with one SPMD launch (the neutral past n,
up to this kernel's size), and one task kernel here reduces those values: per chunk, DRAM ->
L2BMs (mvd) -> L1BMs (l2bmd) -> PEs (l1bmd), K vectors of 8 values per PE folded in order; then
each PE's 8 values (lanes, then cycles through an L1BM) and its MAB's 4 PEs (msl); then up the
tree: l1bmr over the MABs, l2bmr over the L1Bs, mvr over every L2BM of the board.  A launch of
the SPMD folds it replaces costs the emulator 20K-35K cycles whatever its size; this one costs
1,000-2,500 for one chunk.

The tree's adds (l1bmr, l2bmr, mvr: ffadd) sum their inputs in fp64 and round once to fp32, and
every MAU or tree result is normalised: a NaN becomes an infinity, -0 becomes +0, subnormals
flush.  So a float sum also reduces the values' max and min (the tree's max and min order the
raw bits, NaN above infinity, and are not normalised), brings the three back down to a PE and
answers NaN where OpenCL would (a NaN value, or both infinities).  A max or min needs no such
step: its values were folded with the neutral by fmax / fmin, which drop NaNs.
"""
from __future__ import annotations

import functools

import numpy as np

K_LIMIT = 64            # vectors per PE: the fold loop stays unrolled (docs/language.md)

# reduce_expr (spaces removed) -> the tree's op, per element kind
_FLOAT_OPS = {"a+b": "MN_ADD", "b+a": "MN_ADD", "fmax(a,b)": "MN_MAX", "fmax(b,a)": "MN_MAX",
              "max(a,b)": "MN_MAX", "max(b,a)": "MN_MAX", "fmin(a,b)": "MN_MIN", "fmin(b,a)": "MN_MIN",
              "min(a,b)": "MN_MIN", "min(b,a)": "MN_MIN"}
_INT_OPS = {"a+b": "MN_ADD", "b+a": "MN_ADD", "a&b": "MN_AND", "b&a": "MN_AND", "a|b": "MN_OR", "b|a": "MN_OR"}
_PE_OP = {"MN_ADD": "((a) + (b))", "MN_MAX": "mn_max(a, b)", "MN_MIN": "mn_min(a, b)",
          "MN_AND": "((a) & (b))", "MN_OR": "((a) | (b))"}
# each PE's accumulator starts from the op's identity
_INIT = {"MN_ADD": "0", "MN_MAX": "ninf", "MN_MIN": "inf", "MN_AND": "-1", "MN_OR": "0"}


def tree_op(dtype, reduce_expr) -> str | None:
    """The tree's op for a reduction of dtype by reduce_expr, or None where the tree cannot do it."""
    dtype = np.dtype(dtype)
    expr = "".join(str(reduce_expr).split())
    if dtype == np.float32:
        return _FLOAT_OPS.get(expr)
    if dtype in (np.dtype(np.int32), np.dtype(np.uint32)):
        return _INT_OPS.get(expr)
    return None


def chunk_limit(machine) -> int:
    """The most vectors per PE one chunk holds: a power of two (at most K_LIMIT) whose chunk takes
    at most half of each L2BM and L1BM and one mn_distribute call (64 l2bmd, of 32 long words per
    L1B each)."""
    k = K_LIMIT
    while k > 1 and (k * 8 * machine.pe_per_l1b * machine.l1b_per_l2b > machine.l2bm_longs
                     or k * 8 * machine.pe_per_l1b > machine.l1bm_longs
                     or k * 8 * machine.pe_per_l1b > 64 * 64):
        k //= 2
    return k


def plan(machine, n: int) -> tuple[int, int]:
    """(k, chunks): the kernel's vectors per PE in a chunk and how many chunks hold n values.  Up to
    one chunk, the smallest power of two that holds them (a few kernels serve every size)."""
    per_vector = 8 * machine.n_pe
    k, top = 1, chunk_limit(machine)
    while k < top and k * per_vector < n:
        k *= 2
    return k, max(1, -(-n // (k * per_vector)))


def padded(machine, k: int, chunks: int) -> int:
    """The number of values the kernel of k vectors per PE reads in `chunks` chunks."""
    return chunks * k * 8 * machine.n_pe


OUT_ELEMS = 512          # the result block: 4 units of 64 long words of 32-bit values


@functools.lru_cache(maxsize=None)
def out_template(dtype) -> np.ndarray:
    """The result block's first contents: the kernel's fix-up reads a NaN from its last unit."""
    out = np.zeros(OUT_ELEMS, dtype)
    if np.dtype(dtype).kind == "f":
        out[3 * OUT_ELEMS // 4:] = np.nan
    return out


def source(name: str, k: int, op: str, dtype) -> str:
    """The task kernel `name`(parts, out, chunks) reducing the chunks * k * 8 * NUM_PE values of
    parts (DRAM_SPLIT: each group its part) with op into out[0] (out: OUT_ELEMS values, from
    out_template)."""
    t, vt = ("float", "mnfloat8") if np.dtype(dtype).kind == "f" else ("int", "mnint8")
    fixup = np.dtype(dtype).kind == "f" and op == "MN_ADD"
    chains = [("s", op)] + ([("hi", "MN_MAX"), ("lo", "MN_MIN")] if fixup else [])
    defs = "\n".join(f"#define OP_{o}(a, b) {_PE_OP[o]}" for o in dict.fromkeys(o for _, o in chains))
    init = " ".join(f"{vt} {v} = {_INIT[o]};" for v, o in chains)
    first = " ".join(f"{vt} {v}_c = x;" for v, o in chains)
    fold = " ".join(f"{v}_c = OP_{o}({v}_c, x);" for v, o in chains)
    total = " ".join(f"{v} = OP_{o}({v}, {v}_c);" for v, o in chains)
    pe = "\n    ".join(f"FOLD_PE({v}, OP_{o});" for v, o in chains)
    up = "\n    ".join(f"mn_reduce(red + {128 * j}, {v}, {o});" for j, (v, o) in enumerate(chains))
    up2 = "\n    ".join(f"mn_reduce(rs + {128 * j}, red + {128 * j}, 128, {o});" for j, (v, o) in enumerate(chains))
    if not fixup:
        last = f"mn_reduce_board(out, rs, 128, 0, {op});"
    else:
        last = """mn_event e[3];
    e[0] = mn_reduce_board_async(out, rs, 128, 0, MN_ADD);
    e[1] = mn_reduce_board_async(out + 128, rs + 128, 128, 0, MN_MAX);
    e[2] = mn_reduce_board_async(out + 256, rs + 256, 128, 0, MN_MIN);
    mn_wait(e[0]);
    mn_wait(e[1]);
    mn_wait(e[2]);

    /* NaN where OpenCL's sum is NaN: a NaN value (the max above +inf or the min below -inf: the
       tree orders raw bits) or both infinities.  The sum, max, min and a NaN (out's last unit,
       the host's) come down to the PEs of L2B 0 of group 0; PE 0's answer goes back up */
    L1BM float bl[512];
    mn_unicast(rs, out, 512, 0, 0);
    mn_broadcast(bl, rs, 512);
    s = mn_broadcast(bl);
    hi = mn_broadcast(bl + 128);
    lo = mn_broadcast(bl + 256);
    mnfloat8 nan = mn_broadcast(bl + 384);
    s = mn_select(hi >= inf, mn_select(lo <= ninf, nan, s), s);
    s = mn_select(hi > inf, nan, s);
    s = mn_select(lo < ninf, nan, s);
    mn_gather(bl, s);
    mn_gather(rs, bl, 64 * NUM_L1B);
    mn_unicast(out, rs, 128, 0, 0);"""
    infinities = """mnfloat8 big = 3.0e38f;                  /* no literal is an infinity */
    mnfloat8 nbig = -3.0e38f;
    mnfloat8 inf = big * big;
    mnfloat8 ninf = big * nbig;"""
    return f"""/* mncl.reduction_tree: {op} over chunks of {k} vectors per PE (generated) */
#define K {k}
#define PEL1 (NUM_MAB * NUM_PE_MAB)             /* PEs per L1B */
#define VL1 (8 * PEL1)                          /* one vector of every PE of an L1B, in values */
#define VL2 (VL1 * NUM_L1B)                     /* ... of an L2B */
#define VG (VL2 * NUM_L2B)                      /* ... of a group: a chunk is K of them */
{defs}

/* v's 8 values (4 cycles x 2 lanes) and the 4 PEs of its MAB folded into cycle 0 of PE 0: lanes;
   cycles c and c + 1, then c and c + 2 (an L1BM round trip: l1bmd from one cycle further on);
   the PEs p and p - 1, then p and p - 2 (msl rotates within the MAB) */
#define FOLD_PE(v, OP)                                                                          \\
    v = OP(v, mn_swap_lanes(v));                                                                \\
    mn_gather(sh, v);                                                                           \\
    v = OP(v, mn_distribute(sh + 2 * PEL1));                                                    \\
    mn_gather(sh, v);                                                                           \\
    v = OP(v, mn_distribute(sh + 4 * PEL1));                                                    \\
    v = OP(v, mn_msl(v));                                                                       \\
    v = OP(v, mn_msl(mn_msl(v)))

__task void {name}(DRAM_SPLIT const {t} *parts, DRAM {t} *out, long chunks)
{{
    L2BM {t} xs[K * VL2];
    L2BM {t} rs[512];
    L1BM {t} xl[K * VL1];
    L1BM {t} sh[12 * PEL1];
    L1BM {t} red[384];
    {infinities if t == "float" else ""}
    {init}
    for (long c = 0; c < chunks; c++) {{
        mn_distribute(xs, parts + c * (K * VG), K * VG);    /* DRAM -> L2BMs (mvd) */
        mn_distribute(xl, xs, K * VL2);                     /* L2BM -> L1BMs (l2bmd) */
        {vt} x = mn_distribute(xl);                         /* L1BM -> PEs (l1bmd) */
        {first}
        for (int k = 1; k < K; k++) {{                      /* unrolled: the chunk's vectors in order */
            x = mn_distribute(xl + k * VL1);
            {fold}
        }}
        /* then the chunks in order: no chain of adds longer than K + chunks */
        {total}
    }}
    {pe}
    {up}
    {up2}
    {last}
}}
"""
