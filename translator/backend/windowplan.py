"""The window plan: a stencil's neighbours from one sliding window per wave (issue 22).

A neighbourhood access ``A[(i+di)*n + j+dj]`` in a "rows" build (rows.py) is, over the flat
position f, ``A[f + u]`` with u = di*n + dj uniform: a shifted load of the replicated buffer
(Memory.shifted_load).  Moved one shift at a time, a 3x3 convolution reads its input from DRAM
thirteen times per wave (nine shifts, four of them odd and funnelled from two long-word shares).
This plan reads it once: per wave and L2B, the L2B's half of the wave's share of the buffer plus
its halo,

    long words [lo, S/L + hi)  of the share  (lo, hi - 1: the smallest and largest long-word shift)

crosses DRAM in one ``mvp`` (every group at once: the buffer is replicated, group g's copy g
stripes lower, so one address gives each group its own share).  In L2BM the window's long word
lo lands at A + H + lo (H the largest halo the area allows; a `.call lc=` offset), so a shift of
sigma long words is the ordinary contiguous chain (l2bmd -> L1BM -> l1bmd -> PE) read from
A + H + sigma: at a fixed address for a constant shift (``A[i*n + j + 1]``), hoisted to the top
of the wave with the other first loads; for a band of shifts R + c whose R the sequencer knows
only at the launch (``A[(i-1)*n + j + c]``, R = -n), through one ``.call lc=(R >> 1)`` block per
band, the shifts' values picked by R's parity.

The window's size depends on the pitch, and an MV's size is in its text: the prologue computes lo,
hi and the window's 64-long-word blocks m, and a binary tree of sequencer branches issues the
``mvp`` of the smallest of a few sizes that holds m blocks.  prefetch.py moves the window's MVs a
wave early, as it moves the first loads'.  A launch whose halo exceeds H (a pitch of more than
about 2H elements) keeps the window for the constant shifts only and moves each pitch-dependent
long word from DRAM as before (``%wok`` is 0).

Which accesses: loads outside loops of a read-only 32-bit buffer with at least two distinct
shifts, whose flat forms (FlatRows.affine / choice, for a clamped neighbour both) the plan reads
off the access analysis before the first of them is emitted, so the window covers every shift it
serves; a load whose form is not among them, or in a loop, takes the old path.  Bounds checks
are unchanged (bounds.py).
"""
from __future__ import annotations

from .abi import base, reg
from .ops import Call, MV, Op, SeqIf, SeqSet

HALO_MAX = 1024               # long words each side: a pitch of up to ~2000 32-bit elements
WINDOW_SHARE = 0.5            # of L2BM the windows may take (a kernel's other loads and stores stage there too)


class Window:
    """One buffer's window: its L2BM area, tag, sequencer registers and the shifts it serves."""

    def __init__(self, k, affs, area, share, halo, tag, lo_c, hi_c):
        self.k, self.affs, self.area, self.share, self.halo, self.tag = k, affs, area, share, halo, tag
        self.lo = self.hi = self.ok = self.m = self.dram = None     # its sequencer registers
        self.lo_c, self.hi_c = lo_c, hi_c
        self.issued = False
        self.bands = {}               # runtime part (bytes, a sequencer expression) -> its constants (elements)
        for a in affs:
            if a[2] is not None:
                self.bands.setdefault(a[2], set()).add(a[1] // 4)

    @property
    def sizes(self) -> list:
        """The sizes its MVs may take, in blocks of 64 long words beyond the half share: one when
        every shift is constant; else every size up to 4 blocks, then steps of about 1.4."""
        if not self.bands:
            return [-(-(self.hi_c - self.lo_c) // 64)]
        top = 2 * self.halo // 64 + 1
        return sorted({m for m in (1, 2, 3, 4, 6, 8, 11, 16, 22, 32, 45, 64) if m < top} | {top})

    @property
    def size(self) -> int:
        """Long words of its L2BM area: a half share, the halo each side, a block of rounding and
        what the next size up reads beyond the m blocks needed."""
        s = self.sizes
        return self.share + 2 * self.halo + 64 * (1 + max([b - a - 1 for a, b in zip(s, s[1:])], default=0))

    def words(self) -> list:
        """The long-word shifts of the share the window must hold: ints in order (the set's own
        order moved with the process's hashes, and with it the prologue), and per band its first
        and last as sequencer expressions."""
        out = sorted({x for a in self.affs if a[2] is None for x in const_words(a[1] // 4)})
        for band, cs in sorted(self.bands.items()):
            js = band_words(cs)
            out += [f"(({band}) >> 3) + {js[0]}", f"(({band}) >> 3) + {js[-1]}"]
        return out


def const_words(e: int) -> list:
    """The long-word shifts element shift e reads (an odd one funnels two)."""
    return [e >> 1, (e >> 1) + 1] if e & 1 else [e >> 1]


def band_words(cs) -> list:
    """The long words j (from q = R >> 1) that element shifts R + c, c in cs, read for either
    parity of R: R = 2q reads those of c, R = 2q + 1 those of c + 1."""
    return sorted({j for c in cs for x in (c, c + 1) for j in const_words(x)})


def whole(aff) -> bool:
    """Whether flat form aff's shift is whole elements: its constant and each coefficient of its
    uniform part (FlatRows writes it as "(c) * %p.. + ...") multiples of 4 bytes."""
    terms = [] if aff[2] is None else aff[2].split(" + ")
    return aff[1] % 4 == 0 and all(t.startswith("(") and int(t[1:t.index(")")]) % 4 == 0 for t in terms)


class WindowPlan:
    """The window plan of one kernel build (made by Codegen; em.window)."""

    def __init__(self, em):
        self.em = em
        self.windows = None           # buffer -> Window, or None where it has none (made on first use)

    # ------------------------------------------------------------------ which loads
    def _shifts(self) -> dict:
        """buffer -> the set of flat forms (4, const, seq) of its loads, from the access analysis
        (None among them: a load of another shape)."""
        em = self.em
        out = {}
        for acc in em.accesses.values():
            i = acc.inst
            if acc.kind != "load" or i is None:
                continue
            got = em.rows.forms.offset(i.ops[0])
            if got is None or not got[0].startswith("base"):
                continue
            k = int(got[0][4:])
            two = em.rows.choice(i.ops[0], k) if acc.elem == 4 else None
            one = em.rows.affine(i.ops[0], k) if acc.elem == 4 else None
            forms = [two[1], two[2]] if two else [one[:3]] if one else [None]
            for f in forms:
                out.setdefault(k, set()).add(f if f is not None and f[0] == 4 and whole(f) else None)
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
            affs.discard(None)       # (loads of another shape keep their own paths)
            if len(affs) < 2 or not em.memory.is_replicated(k):
                continue
            const = [x for a in affs if a[2] is None for x in const_words(a[1] // 4)]
            if any(not -halo <= x < halo for x in const):
                continue
            lo_c, hi_c = (min(const), max(const) + 1) if const else (0, 1)
            self.windows[k] = Window(k, affs, None, S // L, halo, None, lo_c, hi_c)

    def covers(self, k, aff) -> bool:
        """Whether the load of buffer k at flat form aff comes from k's window (which gets its L2BM
        area, tag and registers at the first such load: a buffer whose shifts are all in loops
        takes none)."""
        em = self.em
        if em.rows is None or em.loop_stack or not isinstance(k, int):
            return False
        if self.windows is None:
            self._make()
        w = self.windows.get(k)
        if w is None or tuple(aff) not in w.affs:
            return False
        if w.area is None:
            if em.lc_next + w.size > WINDOW_SHARE * em.lay.l2bm_longs:
                del self.windows[k]  # the rest of the kernel needs L2BM too: the shifts stay as they are
                return False
            w.area = em.alloc_lc(w.size)
            w.tag = em.tag()
            w.lo, w.hi, w.ok, w.m, w.dram = (em.seq_reg(p) for p in ("wlo", "whi", "wok", "wm", "wd"))
            em.uses.setdefault("bases", set()).add(k)
        return True

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
        if aff[2] is not None:
            key = (k, "window band", aff[2])
            if key not in em.fast_cache:
                em.fast_cache[key] = self._band(w, aff[2])
            return em.fast_cache[key][aff[1] // 4]
        e = aff[1] // 4
        a = self._word(w, e >> 1)
        return self._join(a, self._word(w, (e >> 1) + 1)) if e & 1 else a

    def _join(self, a, b):
        """The odd element shift's long words from the halves of two even ones'."""
        em = self.em
        c32 = em.c32(32)
        return em.alu("lor", em.alu("ulsr", a, c32), em.alu("llsl", b, c32))

    def _chain(self, w, lb, at: int) -> list:
        """The l2bmds moving the window's long words from L2BM address `at` on to L1BM area lb."""
        em = self.em
        N = em.lay.l1b
        return [Op(f"l2bmd $lc{at + 32 * N * s} $lb{lb + 32 * s}", "l2bm", line=em.line,
                   mem=(("r", "lc", at + 32 * N * s, at + 32 * N * (s + 1)), ("w", "lb", lb + 32 * s, lb + 32 * s + 32)))
                for s in range(em.lay.l2bmd_steps)]

    def _to_pe(self, lb, d):
        em = self.em
        P = em.lay.pe_l1b
        em.op(f"l1bmd $lb{lb} {{d0}}", "l1bm", (d,), mem=(("r", "lb", lb, lb + 4 * P),))

    def _word(self, w, sigma: int):
        """The share moved by sigma long words in a register: hoisted to the top of the wave with
        the other first loads (while L1BM has room for its own area), cached for the wave."""
        em = self.em
        P = em.lay.pe_l1b
        key = (w.k, "window", sigma)
        if key in em.fast_cache:
            return em.fast_cache[key]
        d = em.new(f"wn{w.k}")
        lb = None
        if not em.stored:
            try:
                lb = em.alloc_lb(4 * P)
            except Exception:        # noqa: BLE001 - L1BM is full: the shared area, in place
                lb = None
        if lb is not None:
            ops = self._chain(w, lb, w.area + w.halo + sigma)
            ops.append(Op(f"l1bmd $lb{lb} {{d0}}", "l1bm", (d,), line=em.line, mem=(("r", "lb", lb, lb + 4 * P),)))
            em.hoisted.append((None, ops))
        else:
            lb = em.shared_area(("window", w.k), 0, 4 * P)[1]
            em.items += self._chain(w, lb, w.area + w.halo + sigma)
            self._to_pe(lb, d)
        em.fast_cache[key] = d
        return d

    def _band(self, w, band: str) -> dict:
        """The shares moved by R + c elements (R = band / 4, known at the launch) for each c of
        the band, as {c: register}: the long words q + j (q = R >> 1) come through one `.call
        lc=q` block (those R's parity needs), and each shift's value is picked from them by that
        parity."""
        em = self.em
        P = em.lay.pe_l1b
        cs = w.bands[band]
        js = band_words(cs)
        q, odd_r = f"(({band}) >> 3)", f"(({band}) >> 2) & 1"
        lbs = dict(zip(js, (em.shared_area(("window", w.k, n), 0, 4 * P)[1] for n in range(len(js)))))
        moves = lambda part: [Call([op for j in sorted({j for c in cs for j in const_words(c + part)})
                                    for op in self._chain(w, lbs[j], w.area + w.halo + j)], {"lc": q})]
        em.items.append(SeqIf(f"{w.ok} == 1", [SeqIf(odd_r, moves(1), moves(0))],     # (what R's parity reads)
                              [x for j in js for x in self._from_dram(w, f"{q} + {j}", lbs[j])]))
        word = {}
        for j in js:
            word[j] = em.new(f"wn{w.k}")
            self._to_pe(lbs[j], word[j])

        def value(x):                  # shift 2q + x: long word q + (x >> 1), funnelled when x is odd
            a = x >> 1
            return self._join(word[a], word[a + 1]) if x & 1 else em.copy(word[a])
        out = {c: value(c) for c in sorted(w.bands[band])}          # R even
        then, em.items = em.items, []
        for c, r in out.items():                                    # R odd: R + c = 2q + (c + 1)
            em.copy(value(c + 1), r)
        odd, em.items = em.items, then
        em.items.append(SeqIf(odd_r, odd))
        return out

    def _from_dram(self, w, sigma: str, lb: int) -> list:
        """A launch whose halo exceeds the area: the share moved by sigma long words straight from
        DRAM (as Memory.long_shift_load moves it) into L1BM area lb."""
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
        words = w.words()
        lo, hi, ok, m = w.lo, w.hi, w.ok, w.m
        pro = [SeqSet(lo, str(words[0])), SeqSet(hi, f"{words[0]} + 1")]
        for x in words[1:]:
            pro += [SeqIf(f"{x} < {lo}", [SeqSet(lo, str(x))]), SeqIf(f"{x} + 1 > {hi}", [SeqSet(hi, f"{x} + 1")])]
        pro += [SeqIf(f"{lo} + {w.halo} >= 0 and {hi} <= {w.halo}", [SeqSet(ok, "1")],
                      [SeqSet(ok, "0"), SeqSet(lo, str(w.lo_c)), SeqSet(hi, str(w.hi_c))]),
                SeqSet(m, f"({hi} - {lo} + 63) >> 6")]
        pro.append(SeqSet(w.dram, f"{reg(base(w.k))} + {lo}"))
        em.prologue += pro
        issue = self._ladder(w, w.sizes)
        for x in issue:                        # prefetch.py: among the wave's first MVs, moved a wave early
            x.wave_issue, x.chain, x.area_size = True, (w.tag, w.area, -1), w.size
            em.hoisted.append((x, []))
            em.prefetchable.append(x)
        em.hoisted.append((None, [Op(f"wait i{w.tag}", "wait", line=em.line)]))

    def _ladder(self, w, sizes: list) -> list:
        """The window's mvps (one per L2B) of the smallest of `sizes` (blocks of 64 long words of
        halo) that holds its m blocks, chosen by a tree of sequencer branches."""
        if len(sizes) > 1:
            mid = (len(sizes) - 1) // 2
            return [SeqIf(f"{w.m} <= {sizes[mid]}", self._ladder(w, sizes[:mid + 1]), self._ladder(w, sizes[mid + 1:]))]
        em = self.em
        lay = em.lay
        S, L, G = lay.stripe, lay.l2b, lay.groups
        n = S // L + 64 * sizes[0]
        out = []
        for l2b in range(L):
            # (at least the buffer's margin below its base, the first group's copy; clamped only at
            # the top of DRAM, beyond a buffer a launch outgrows)
            d = f"{w.dram}+%wx*{G * S}+{l2b * (S // L)}"
            hi = lay.dram_longs - n
            out.append(MV(f"mvp/n{n}i{w.tag} $d0 $lc{w.area}@.{l2b}", f"{d}-({d}-{hi})*({d}>{hi})", em.line,
                          chain=(w.tag, w.area, -1), lc_offset=f"{w.halo}+{w.lo}"))
        return out
