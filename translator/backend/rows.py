"""Row-major 2-D launches run flat (the "rows" builds, abi.py).

A 2-D NDRange without a global offset, barriers or __local memory can be walked in row-major
order: the wave is W consecutive flat positions f = gid1 * gx + gid0 (gx the global size in x),
exactly as a 1-D launch of gx * gy work-items is, and each lane gets gid1 = f div gx and gid0 =
f mod gx (WorkItems.wave_ids).  An access whose byte offset is

    e * (gid1 * P + gid0) + u        (e the element size, u uniform: constants and parameters)

with the pitch P equal to gx at the launch is then e * f + u: the 1-D contiguous access
(``B[i*n + j]``: Memory.fast_load / fast_store) or a shifted one (``A[(i-1)*n + j]``,
``A[i*n + j + 1]``: Memory.shifted_load), the wave's share moving as one block where the "nd"
build streams the whole buffer through every PE.  The pitch is a by-value parameter ("p<k>"),
get_global_size(0) ("gx") or a constant; the build records the pitches its accesses rely on
(KernelBinary.pitches) and choose_variant takes it only for a launch where they all equal gx.

The offset comes from the access analysis' polynomial of the IR pointer (access.PointerForms):
the registers know nothing of the pitch, which is only equal to gx at launch time.  Rows may
straddle waves and the last wave may be partial: nothing needs a wave of whole rows.  Two more
shapes are flat: a clamped neighbour, one of two flat offsets chosen per lane (choice), and an
access e * gid0 + u in a block only row 0 runs (in_row0), where f == gid0 with no pitch at all.
"""
from __future__ import annotations

from .abi import param, reg
from .rowstore import strided_form
from .access import PointerForms
from .idforms import dominators
from .irread import Const, Inst

GX = "gx"                          # the pitch get_global_size(0): equal to gx at every launch
ROW0 = "row 0"                     # no pitch: the access runs only in row 0, where f == gid0


class FlatRows:
    """The flat (row-major) forms of a "rows" build's accesses, and the pitches they rely on."""

    def __init__(self, em, func):
        self.em = em
        self.forms = PointerForms(func, lane_bools=True, no_offset=True)     # (a rows build: no offset)
        self.pitches = set()           # "p<k>", GX or an int, for KernelBinary.pitches
        self.plans = {}                # (C line, parameter, kind) -> {pitch: [plan]}, for mncl-cc --stats

    def affine(self, x, k):
        """(coef, const, seq, pitch) of IR pointer x into buffer parameter k when its byte offset is
        coef * f + const + seq over the flat position f (seq a sequencer expression or None), with f
        = gid1 * pitch + gid0 at launches where pitch == gx; else None."""
        off = self._offset(x, k)
        if off is None or any(v.startswith("bool:") for m in off for v in m):
            return None
        return self._flat(off)

    def in_row0(self, x, k, block):
        """affine's answer, with the pitch ROW0, for an access e * gid0 + u in an IR block that runs
        only where gid1 == 0 (a branch on it dominates the block: fdtd's ``if (i == 0) ey[j] = ...``),
        where gid0 is the flat position; else None."""
        off = self._offset(x, k)
        if off is None or any(v.startswith("bool:") or v == "gid1" for m in off for v in m):
            return None
        em = self.em
        if em.dominators is None:
            em.dominators = dominators(em.rpo, em.preds)
        for d in em.dominators.get(block, ()):
            ps = em.preds.get(d, [])
            br = em.bmap[ps[0]].insts[-1] if len(ps) == 1 else None
            if br is not None and br.op == "br" and len(em.succ[ps[0]]) == 2 and len(set(em.succ[ps[0]])) == 2 \
                    and self._row0(br.ops[0], d == em.succ[ps[0]][0]):
                return self._flat(off, pitched=False)
        return None

    def _row0(self, c, truth: bool) -> bool:
        """Whether branch condition c being `truth` means gid1 == 0 (through `and`, as in id_below)."""
        if not isinstance(c, Inst):
            return False
        if truth and (c.op == "and" or c.op == "select" and isinstance(c.ops[2], Const) and c.ops[2].value in (0, False)):
            return any(self._row0(x, True) for x in c.ops[:2])
        if c.op != "icmp" or c.pred != ("eq" if truth else "ne"):
            return False
        a, b = (self.forms.value(x) for x in c.ops[:2])
        return {("gid1",): 1} in (a, b) and {} in (a, b)          # gid1 == 0 (a form {}: the constant 0)

    def choice(self, x, k):
        """(c, true form, false form, pitch) when IR pointer x into parameter k is one of two flat
        accesses (affine's coef, const, seq) chosen per lane by the i1 IR value c: a clamped
        neighbour, ``temp[(r > 0 ? r - 1 : r) * cols + c]``, which LLVM writes as r + sext(r > 0);
        else None."""
        off = self._offset(x, k)
        used = None if off is None else {v for m in off for v in m if v.startswith("bool:")}
        if not used or len(used) > 1:
            return None
        (b,) = used
        if any(m.count(b) > 1 for m in off):
            return None
        forms = []
        for bit in (1, 0):
            sub = {}
            for m, c in off.items():
                if b in m and not bit:
                    continue
                m = tuple(v for v in m if v != b)
                sub[m] = sub.get(m, 0) + c
            forms.append(self._flat({m: c for m, c in sub.items() if c}))
        if None in forms or forms[0][3] != forms[1][3]:
            return None
        return self.forms.bools[int(b[5:])], forms[0][:3], forms[1][:3], forms[0][3]

    def strided(self, x, k):
        """[a, b, u] (sequencer expressions known at launch, in elements) when IR pointer x into
        buffer parameter k has the byte offset 4 * (a * gid0 + b * gid1 + u): a transposed read
        `in[j*n + i]`, a row `A[k*n + j]` or a column `A[i*n + k]` (an affine copy:
        Memory.affine_copy); else None."""
        return strided_form(self.em, self._offset(x, k))

    def _offset(self, x, k):
        got = self.forms.offset(x)
        return None if got is None or got[0] != f"base{k}" else got[1]

    def _flat(self, off, pitched=True):
        """affine's answer for a byte-offset polynomial (not pitched: one without gid1, ROW0)."""
        e = off.get(("gid0",))
        if not e:
            return None
        pitch, rest = None, {}
        for m, c in off.items():
            if m == ("gid0",):
                continue
            if any(v.startswith(("gid", "lid", "grp", "k@")) and v != "gid1" for v in m) or m.count("gid1") > 1:
                return None            # another id, a loop counter, gid1 squared
            if "gid1" not in m:
                rest[m] = c
                continue
            if pitch is not None:      # gid1 times more than one pitch term
                return None
            other = tuple(v for v in m if v != "gid1")
            if other == () and c % e == 0 and c // e > 0:
                pitch = c // e
            elif other == ("wg1",) and c == e:
                pitch = GX
            elif len(other) == 1 and other[0].startswith("p") and c == e:
                pitch = other[0]
            else:
                return None
        if pitch is None and pitched or pitch is not None and not pitched:
            return None
        pitch = pitch or ROW0
        const, seq = rest.pop((), 0), []
        for m, c in rest.items():       # uniform terms: products of integer parameters
            if not all(v.startswith("p") and v[1:].isdigit() for v in m):
                return None
            for v in m:
                self.em.uses.setdefault("params", set()).add(int(v[1:]))
            seq.append(" * ".join([f"({c})"] + [reg(param(int(v[1:]))) for v in m]))
        return e, const, " + ".join(seq) or None, pitch

    def use(self, pitch, line: int, k: int, kind: str, plan: str):
        """Record that an access at C line `line` of parameter k relies on `pitch`, with its plan."""
        if pitch != ROW0:
            self.pitches.add(pitch)
        name = self.em.params[k].name
        shown = "none: row 0 only" if pitch == ROW0 else "get_global_size(0)" if pitch == GX \
            else f"the parameter '{self.em.params[int(pitch[1:])].name}'" if isinstance(pitch, str) else str(pitch)
        plans = self.plans.setdefault((line, name, kind), {})      # (accesses of one line and buffer: all)
        plans.setdefault(shown, [])
        if plan not in plans[shown]:
            plans[shown].append(plan)

    def plan_list(self) -> list:
        """[C line, buffer, kind, plan] of each line's flat accesses, for KernelBinary.plans."""
        return [[*key, "; ".join(f"{' and '.join(v)} (row-major: pitch {shown}" +
                                 ("" if shown.startswith("none") else " == global size 0") + ")"
                                 for shown, v in by.items())] for key, by in sorted(self.plans.items())]

    def recorded(self) -> list:
        """The pitches, in a stable order, for KernelBinary.pitches."""
        return sorted(self.pitches, key=str)
