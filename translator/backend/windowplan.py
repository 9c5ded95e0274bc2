"""The window plan: a stencil's neighbours from one sliding window per wave (issue 22).

A neighbourhood access ``A[(i+di)*n + j+dj]`` in a "rows" build (rows.py) is, over the flat
position f, ``A[f + u]`` with u = di*n + dj uniform: a shifted load of the replicated buffer
(Memory.shifted_load).  Moved one shift at a time, a 3x3 convolution reads its input from DRAM
thirteen times per wave (nine shifts, four of them odd and funnelled from two long-word shares).
This plan reads it once: per wave and L2B, the L2B's half of the wave's share of the buffer plus
its halo,

    long words [lo, S/L + hi)  of the share  (lo = min over the shifts of u >> 1, hi = max + 2)

crosses DRAM in one ``mvp`` (every group at once: the buffer is replicated, group g's copy g
stripes lower, so one address gives each group its own share).  In L2BM the window's long word
lo lands at A + H + lo (H the largest halo the area allows, a `.call lc=` offset), so a shift of
sigma long words is the ordinary contiguous chain (l2bmd -> L1BM -> l1bmd -> PE) read from
A + H + sigma: at a fixed address for a constant shift (``A[i*n + j + 1]``), hoisted to the top
of the wave with the other first loads, and through a ``.call lc=sigma`` block for one the
sequencer knows only at the launch (``A[(i-1)*n + j]``).

The window's size depends on the pitch, which only the launch knows, and an MV's size is in its
text: the prologue computes lo, hi and the window's 64-long-word blocks m, and a binary tree of
sequencer branches issues the ``mvp`` of that size (at most 64 long words read for nothing per L2B).
A launch whose halo exceeds H (a pitch of more than about 2H elements) keeps the window for the
constant shifts only, and moves each pitch-dependent shift from DRAM as before (``%wok`` is 0).

Which accesses: loads outside loops of a read-only 32-bit buffer with at least two distinct
shifts, each of whose flat forms (FlatRows.affine / choice, for a clamped neighbour both) the
build saw before emitting anything, so the window covers every shift it serves; a load whose form
is not among them (or in a loop) takes the old path.  Bounds checks are unchanged (bounds.py).
"""
from __future__ import annotations

from .abi import base, reg
from .ops import Call, MV, Op, SeqIf, SeqSet

HALO_MAX = 1024               # long words each side: a pitch of up to ~2000 32-bit elements


class Window:
    """One buffer's window: its L2BM area, tag, sequencer registers and the shifts it serves."""

    def __init__(self, k, affs, area, halo, tag, regs, lo_c, hi_c):
        self.k, self.affs, self.area, self.halo, self.tag = k, affs, area, halo, tag
        self.lo, self.hi, self.ok, self.m = regs
        self.lo_c, self.hi_c = lo_c, hi_c
        self.issued = False

    @property
    def size(self) -> int:
        """Long words of its L2BM area: a half share, the halo each side, a block of rounding."""
        return self.share + 2 * self.halo + 64


def _shift_words(aff):
    """(the long-word shifts a flat form (4, const, seq) reads: ints, or sequencer expressions)."""
    if aff[2] is None and aff[1] % 4 == 0:
        e = aff[1] >> 2
        return [e >> 1, (e >> 1) + 1] if e & 1 else [e >> 1]
    u = f"((({aff[1]}) + ({aff[2]})) >> 2)"
    return [f"({u} >> 1)", f"({u} >> 1) + 1"]


class WindowPlan:
    """The window plan of one kernel build (made by Codegen; em.window)."""

    def __init__(self, em):
        self.em = em
        self.windows = None           # buffer -> Window, or None where it has none (made on first use)

    # ------------------------------------------------------------------ which loads
    def _shifts(self) -> dict:
        """buffer -> the set of flat forms (4, const, seq) of its loads, from the access analysis."""
        em = self.em
        out = {}
        for acc in em.accesses.values():
            i = acc.inst
            if acc.kind != "load" or acc.elem != 4 or i is None:
                continue
            got = em.rows.forms.offset(i.ops[0])
            if got is None or not got[0].startswith("base"):
                continue
            k = int(got[0][4:])
            two = em.rows.choice(i.ops[0], k)
            one = em.rows.affine(i.ops[0], k)
            forms = [two[1], two[2]] if two else [one[:3]] if one else []
            for f in forms:
                if f[0] == 4:
                    out.setdefault(k, set()).add(f)
                else:
                    out.setdefault(k, set()).add(None)        # another element stride: no window
        return out

    def _make(self):
        em = self.em
        self.windows = {}
        if em.rows is None:
            return
        lay = em.lay
        S, L = lay.stripe, lay.l2b
        halo = min(HALO_MAX, lay.pad - 64, S * (2 * lay.groups - 1) - 64) // 64 * 64
        if halo < 64:
            return
        for k, affs in sorted(self._shifts().items()):
            if None in affs or len(affs) < 2 or not em.memory.is_replicated(k):
                continue
            words = [w for a in affs for w in _shift_words(a)]
            const = [w for w in words if isinstance(w, int)]
            if any(not -halo <= w < halo for w in const):
                continue
            try:
                area = em.alloc_lc(S // L + 2 * halo + 64)     # (Window.size)
            except Exception:        # noqa: BLE001 - L2BM is full: the shifts stay as they are
                continue
            lo_c, hi_c = (min(const), max(const) + 1) if const else (0, 1)
            regs = tuple(em.seq_reg(p) for p in ("wlo", "whi", "wok", "wm"))
            self.windows[k] = Window(k, affs, area, halo, em.tag(), regs, lo_c, hi_c)
            self.windows[k].share = S // L
            em.uses.setdefault("bases", set()).add(k)

    def covers(self, k, aff) -> bool:
        """Whether the load of buffer k at flat form aff comes from k's window."""
        em = self.em
        if em.rows is None or em.loop_stack or not isinstance(k, int):
            return False
        if self.windows is None:
            self._make()
        w = self.windows.get(k)
        return w is not None and tuple(aff) in w.affs

    def plan(self, k) -> str:
        """The plan's name for mncl-cc --stats."""
        return "sliding window of the wave's rows and halo, one DRAM read per wave (windowplan.py)"

    # ------------------------------------------------------------------ the loads
    def load(self, k, aff):
        """The wave's share of buffer k moved by aff's shift (a VReg), from the window."""
        em = self.em
        w = self.windows[k]
        if not w.issued:
            self._issue(w)
        c32 = em.c32(32)
        join = lambda a, b: em.alu("lor", em.alu("ulsr", a, c32), em.alu("llsl", b, c32))
        if aff[2] is None and aff[1] % 4 == 0:
            e = aff[1] >> 2
            a = self._word(w, e >> 1)
            return join(a, self._word(w, (e >> 1) + 1)) if e & 1 else a
        u = f"((({aff[1]}) + ({aff[2]})) >> 2)"
        a = em.copy(self._word(w, f"({u} >> 1)"))        # its own register: an odd u rewrites it
        out, em.items = em.items, []
        em.copy(join(a, self._word(w, f"({u} >> 1) + 1", cache=False)), a)
        odd, em.items = em.items, out
        em.items.append(SeqIf(f"({u}) & 1", odd))
        return a

    def _chain(self, w, lb, at: int) -> list:
        """The l2bmds moving the window's long words from L2BM address `at` on to L1BM area lb."""
        em = self.em
        N = em.lay.l1b
        return [Op(f"l2bmd $lc{at + 32 * N * s} $lb{lb + 32 * s}", "l2bm", line=em.line,
                   mem=(("r", "lc", at + 32 * N * s, at + 32 * N * (s + 1)), ("w", "lb", lb + 32 * s, lb + 32 * s + 32)))
                for s in range(em.lay.l2bmd_steps)]

    def _word(self, w, sigma, cache=True):
        """The share moved by sigma long words (an int, or a sequencer expression) in a register;
        not cache: made under a sequencer branch, for that branch only."""
        em = self.em
        P = em.lay.pe_l1b
        key = (w.k, "window", sigma)
        if key in em.fast_cache and cache:
            return em.fast_cache[key]
        d = em.new(f"wn{w.k}")
        if isinstance(sigma, int):
            lb = None
            if not em.stored:
                try:
                    lb = em.alloc_lb(4 * P)
                except Exception:    # noqa: BLE001 - L1BM is full: the shared area, in place
                    lb = None
            if lb is not None:       # with the wave's first loads, at the top of the wave
                ops = self._chain(w, lb, w.area + w.halo + sigma)
                ops.append(Op(f"l1bmd $lb{lb} {{d0}}", "l1bm", (d,), line=em.line, mem=(("r", "lb", lb, lb + 4 * P),)))
                em.hoisted.append((None, ops))
            else:
                lb = em.shared_area(("window", w.k), 0, 4 * P)[1]
                em.items += self._chain(w, lb, w.area + w.halo + sigma)
                em.op(f"l1bmd $lb{lb} {{d0}}", "l1bm", (d,), mem=(("r", "lb", lb, lb + 4 * P),))
        else:
            lb = em.shared_area(("window", w.k), 0, 4 * P)[1]
            em.items.append(SeqIf(f"{w.ok} == 1", [Call(self._chain(w, lb, w.area + w.halo), {"lc": sigma})],
                                  self._from_dram(w, sigma, lb)))
            em.op(f"l1bmd $lb{lb} {{d0}}", "l1bm", (d,), mem=(("r", "lb", lb, lb + 4 * P),))
        if cache:
            em.fast_cache[key] = d
        return d

    def _from_dram(self, w, sigma: str, lb: int) -> list:
        """A launch whose halo exceeds the area: the shifted share straight from DRAM (as
        Memory.long_shift_load does) into L1BM area lb."""
        em = self.em
        from .memory import dram_clamped
        lay = em.lay
        S, G = lay.stripe, lay.groups
        lc = em.shared_area("shift", S // lay.l2b, 4 * lay.pe_l1b)[0]
        t = em.tag()
        a = f"{reg(base(w.k))} + %wx * {G * S} + {sigma}"
        return [MV(f"mvd/n{S}i{t} $d0 $lc{lc}", dram_clamped(a, lay.dram_longs - S), em.line),
                Op(f"wait i{t}", "wait", line=em.line), *self._chain(w, lb, lc)]

    # ------------------------------------------------------------------ the window's MVs
    def _issue(self, w):
        """The prologue's window extent and, at the top of every wave, the window's MVs and wait."""
        em = self.em
        w.issued = True
        words = [x for a in sorted(w.affs, key=str) for x in _shift_words(a)]
        lo, hi, ok, m = w.lo, w.hi, w.ok, w.m
        pro = [SeqSet(lo, str(words[0])), SeqSet(hi, f"{words[0]} + 1")]
        for x in words[1:]:
            pro += [SeqIf(f"{x} < {lo}", [SeqSet(lo, str(x))]), SeqIf(f"{x} + 1 > {hi}", [SeqSet(hi, f"{x} + 1")])]
        pro += [SeqIf(f"{lo} + {w.halo} >= 0 and {hi} <= {w.halo}", [SeqSet(ok, "1")],
                      [SeqSet(ok, "0"), SeqSet(lo, str(w.lo_c)), SeqSet(hi, str(w.hi_c))]),
                SeqSet(m, f"({hi} - {lo} + 63) >> 6")]
        em.prologue += pro
        if all(isinstance(x, int) for x in words):        # one size, known now
            a = b = -(-(w.hi_c - w.lo_c) // 64)
        else:
            a, b = 1, 2 * w.halo // 64 + 1
        issue = self._ladder(w, a, b)
        for x in issue:                        # prefetch.py: among the wave's first MVs, moved a wave early
            x.wave_issue, x.chain, x.area_size = True, (w.tag, w.area, -1), w.size
            em.hoisted.append((x, []))
            em.prefetchable.append(x)
        em.hoisted.append((None, [Op(f"wait i{w.tag}", "wait", line=em.line)]))

    def _ladder(self, w, a: int, b: int) -> list:
        """The window's mvps (one per L2B) for m in a..b blocks of halo, chosen by the sequencer."""
        if a < b:
            mid = (a + b) // 2
            return [SeqIf(f"{w.m} <= {mid}", self._ladder(w, a, mid), self._ladder(w, mid + 1, b))]
        em = self.em
        from .memory import dram_clamped
        lay = em.lay
        S, L, G = lay.stripe, lay.l2b, lay.groups
        n = S // L + 64 * a
        out = []
        for l2b in range(L):
            d = f"{reg(base(w.k))} + %wx * {G * S} + {l2b * (S // L)} + {w.lo}"
            out.append(MV(f"mvp/n{n}i{w.tag} $d0 $lc{w.area}@.{l2b}", dram_clamped(d, lay.dram_longs - n), em.line,
                          chain=(w.tag, w.area, -1), lc_offset=f"{w.halo}+{w.lo}"))
        return out
