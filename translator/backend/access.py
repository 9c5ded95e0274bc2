"""Access analysis: the shape of every memory access of a kernel, the ground a transfer plan
stands on (issue 22).

Each load and store of a kernel's per-work-item function (SPMD IR) gets its byte offset from its
buffer's base as a polynomial in

* the work-item ids (``gid0``..``gid2``, ``lid0``.., ``grp0``..),
* the counters of the loops around it (``k@<header block>``, counted in iterations),
* values uniform over the launch (``p<k>``: scalar parameter k; ``wg<k>``: a launch size;
  ``u@<name>``: IR value name computed from such values by an operation that is not affine;
  ``s@<header block>``: a counter halved or doubled each pass of that loop),

with integer coefficients, or None where the index is not such a polynomial (loaded from memory,
divided, masked). From the polynomial the access gets a class:

============== ============================================================== ==================
class           index (bytes, e the element size, P a pitch)                   example
============== ============================================================== ==================
uniform         no id, no loop counter                                         ``a[0]``, ``b[n]``
broadcast       loop counters only: every work-item reads the same element      ``x[k]``
unit            e * id0 (+ pitches * other ids), no loop counter               ``y[i]``, ``C[i*n+j]``
strided         c * id0 with c != e, no loop counter                           ``a[2*i]``
row             P * id, e * k: each work-item walks its own row                ``W[r*K + k]``
column          e * id0, P * k: the wave reads a row per iteration             ``A[k*n + i]``
tile            ids of two dimensions and a loop counter                       ``A[i*K + k]`` (2-D)
neighbourhood   several accesses of one buffer differing by constants and      ``u[i-1] + u[i+1]``
                multiples of a pitch
irregular       anything else, with why                                        ``x[col[j]]``
============== ============================================================== ==================

``loop`` is the innermost loop whose counter the index moves with.  The plan each class gets is
in docs/architecture.md; today's backend moves unit, tile, uniform and broadcast accesses with
contiguous transfers and gathers the rest (its remarks say where a gather moves a whole buffer).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import irtypes
from .cfg import cfg_of
from .idforms import narrow_bits, not_of, sext_of_trunc, wrapped
from .irread import Arg, Const, Func, Inst
from .values import MAX_GLOBAL_ID, mask_keeps

IDS = {0: "lid", 3: "gid"}           # %ids slots: 0..2 local ids, 3..5 global ids
WG_GROUP_IDS = range(7, 10)          # %wg slots 7..9: the group ids


@dataclass
class Access:
    line: int            # C source line
    kind: str            # load | store
    space: str           # global | constant | local
    buffer: str          # the parameter's name, "__local" or the __constant table's name
    elem: int            # element bytes
    cls: str
    loop: str = ""       # the innermost loop (its header block) the index moves with
    loop_line: int = 0   # that loop's C line
    why: str = ""        # for irregular: what stops the analysis
    form: dict | None = field(default=None, repr=False)
    inst: Inst | None = field(default=None, repr=False, compare=False)    # the load or store


# -- polynomials: {monomial (sorted tuple of variable names): integer coefficient} ------------
def _add(a, b, sign=1):
    out = dict(a)
    for m, c in b.items():
        out[m] = out.get(m, 0) + sign * c
        if not out[m]:
            del out[m]
    return out


def _mul(a, b):
    out = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            m = tuple(sorted(ma + mb))
            out[m] = out.get(m, 0) + ca * cb
            if not out[m]:
                del out[m]
    return out


def _const(c: int) -> dict:
    return {(): c} if c else {}


def _is_id(v: str) -> bool:
    return v[:3] in ("gid", "lid", "grp")


def _is_loop(v: str) -> bool:
    return v.startswith("k@")


class _Forms:
    """Index polynomials of IR values (None: not a polynomial) and why not."""

    def __init__(self, func: Func, loops: dict, skewed=frozenset(), no_offset: bool = False):
        self.loops = loops
        self.skewed = skewed
        self.no_offset = no_offset      # a build whose launches have no global offset (ids_of_groups)
        self.assumed = set()            # (d, C): local sizes ids_of_groups took a constant block for
        self.args = func.args            # (%args, %wg, %ids)
        self.memo = {}
        self.why = {}

    def of(self, x):
        if id(x) not in self.memo:
            self.memo[id(x)] = None      # (a cycle through phis that are not counters: not a polynomial)
            f = self.memo[id(x)] = self._form(x)
            if f is None and id(x) not in self.why:      # the first operand's reason is the value's
                self.why[id(x)] = next((self.why[id(o)] for o in getattr(x, "ops", ()) if id(o) in self.why),
                                       "index not affine")
        return self.memo[id(x)]

    def _slot(self, ptr):
        """(argument index, byte offset) of a pointer into %args, %wg or %ids, or None."""
        off = 0
        while isinstance(ptr, Inst) and ptr.op == "getelementptr" and len(ptr.ops) == 2 \
                and ptr.elem == "i8" and isinstance(ptr.ops[1], Const) and isinstance(ptr.ops[1].value, int):
            off += ptr.ops[1].value
            ptr = ptr.ops[0]
        if isinstance(ptr, Arg) and ptr in self.args:
            return self.args.index(ptr), off
        return None

    def _form(self, x):
        if isinstance(x, Const):
            return _const(x.value) if isinstance(x.value, int) and not isinstance(x.value, bool) else None
        if not isinstance(x, Inst):
            return None
        op, ops = x.op, x.ops
        if op == "load":
            slot = self._slot(ops[0])
            if slot is not None:                        # an id, a launch size, a pointer parameter
                arg, off = slot
                k = off // 8
                if arg == 2:
                    return {(f"{IDS[0 if k < 3 else 3]}{k % 3}",): 1}
                if arg == 1:
                    return {(f"grp{k - 7}",): 1} if k in WG_GROUP_IDS else {(f"wg{k}",): 1}
                return {(f"base{k}",): 1}
            inner = self._slot(ops[0].ops[0]) if isinstance(ops[0], Inst) and ops[0].op == "load" else None
            if inner is not None and inner[0] == 0:     # a scalar parameter: *(args[k])
                return {(f"p{inner[1] // 8}",): 1}
            self.why[id(x)] = "index loaded from memory"
            return None
        if op in ("sext", "zext", "trunc", "freeze", "ptrtoint", "inttoptr"):
            return wrapped(self.of(ops[0]), narrow_bits(x))
        if sext_of_trunc(x):                            # (x << k) >> k: as sext(trunc x)
            return wrapped(self.of(ops[0].ops[0]), narrow_bits(x))
        if op == "ashr" and isinstance(ops[0], Inst) and ops[0].op == "shl" and ops[0].type == "i64" \
                and isinstance(ops[1], Const) and isinstance(ops[0].ops[1], Const) and ops[0].ops[1].value == 32 \
                and type(ops[1].value) is int and 0 < 32 - ops[1].value < 31:
            a = wrapped(self.of(ops[0].ops[0]), 32)     # (x << 32) >> (32 - s): an int index scaled, sext(x) << s
            return None if a is None else _mul(a, _const(1 << (32 - ops[1].value)))
        if op in ("add", "sub") or op == "or" and " disjoint " in f" {x.text} ":
            a, b = self.of(ops[0]), self.of(ops[1])
            return None if a is None or b is None else self.ids_of_groups(_add(a, b, -1 if op == "sub" else 1))
        if op == "mul":
            a, b = self.of(ops[0]), self.of(ops[1])
            return None if a is None or b is None else _mul(a, b)
        if not_of(x):                                   # ~y: how LLVM writes -y - 1 (f - n - 1 = f + ~n)
            a = self.of(ops[0])
            return None if a is None else _add(_mul(a, _const(-1)), _const(-1))
        if op == "shl":
            a, b = self.of(ops[0]), self.of(ops[1])
            if a is None or b is None or set(b) - {()} or not 0 <= b.get((), 0) < 63:
                return None
            return _mul(a, _const(1 << b.get((), 0)))
        if op == "getelementptr":
            return self._gep(x)
        if op == "phi" and x.block not in self.loops:    # a join: one form on every edge (GVN's copies of one
            forms = [self.of(o) for o in x.ops]          # sum) is the join's, unless it moves with a loop
            if forms[0] is not None and all(f == forms[0] for f in forms[1:]) \
                    and not any(v.startswith(("k@", "s@")) for m in forms[0] for v in m):
                return forms[0]
            self.why[id(x)] = "a value chosen by control flow"
            return None
        if op == "phi":
            return self._counter(x)
        if op == "call" and x.callee == "__mncl_local":
            return {("local",): 1}
        if op == "and" and isinstance(ops[1], Const) and mask_keeps(ops[1].value, (0, MAX_GLOBAL_ID - 1)):
            a = self.of(ops[0])                      # id & 0x7fffffff where LLVM knew the id positive: the id
            (m, c), = a.items() if a is not None and len(a) == 1 else (((), 0),)
            if c == 1 and len(m) == 1 and _is_id(m[0]):
                return a
        if op in ("lshr", "ashr", "sdiv", "udiv", "srem", "urem", "and", "or", "xor"):
            forms = [self.of(o) for o in ops]        # of values uniform over the work-items: uniform
            if all(f is not None and not any(_is_id(v) or _is_loop(v) for m in f for v in m) for f in forms):
                return {(f"u@{x.name}",): 1}
        self.why[id(x)] = f"index computed by '{op}'"
        return None

    def ids_of_groups(self, f: dict) -> dict:
        """f with c * (grp<d> * local size + lid<d>) written as c * gid<d>, where a launch has no
        global offset (no_offset): `get_group_id(0) * get_local_size(0) + get_local_id(0)` is the
        global id there.  c * (grp<d> * C + lid<d>) for a constant block C too, assuming the local
        size is C (recorded in `assumed`: the build's launch test, IntSel.global_id_sum)."""
        if not self.no_offset:
            return f
        for d in range(3):
            g, l, gc = tuple(sorted((f"grp{d}", f"wg{4 + d}"))), (f"lid{d}",), (f"grp{d}",)
            c = f.get(l)
            if not c:
                continue
            if f.get(g) == c:
                f = _add({m: v for m, v in f.items() if m not in (g, l)}, {(f"gid{d}",): c})
            elif f.get(gc) and f[gc] % c == 0 and f[gc] // c > 0:
                self.assumed.add((d, f[gc] // c))
                f = _add({m: v for m, v in f.items() if m not in (gc, l)}, {(f"gid{d}",): c})
        return f

    def _gep(self, x):
        out, ty = self.of(x.ops[0]), x.elem
        if isinstance(x.ops[0], tuple) and x.ops[0][0] == "global":      # a __constant table
            out = {(f"table:{x.ops[0][1]}",): 1}
        for k, idx in enumerate(x.ops[1:]):
            if out is None:
                return None
            try:
                if k:
                    sub = irtypes.element_type(ty, idx.value if isinstance(idx, Const) else None)
                    if sub is None:
                        return None
                    ty, fo = sub
                    if fo is not None:
                        out = _add(out, _const(fo))
                        continue
                size = irtypes.size(ty)
            except Exception:                            # noqa: BLE001 - an odd type: not a polynomial
                return None
            f = self.of(idx)
            if f is None:
                self.why[id(x)] = self.why[id(idx)]
                return None
            out = _add(out, _mul(f, _const(size)))
        return out

    def _counter(self, x):
        """A loop header's induction variable: init on entry, plus a constant or uniform step
        per iteration, as init + step * k@header."""
        h = x.block
        body = self.loops.get(h)
        if body is None or len(x.ops) != 2:
            self.why[id(x)] = "a value chosen by control flow"
            return None
        inside = [v for v, b in zip(x.ops, x.phi_blocks) if b in body]
        outside = [v for v, b in zip(x.ops, x.phi_blocks) if b not in body]
        if len(inside) != 1 or len(outside) != 1:
            self.why[id(x)] = "a loop-carried value that is not a counter"
            return None
        nxt = inside[0]
        if h in self.skewed:                  # from the wave's least start, by one: uniform in the lanes it runs
            return {(f"k@{h}",): 1, (f"s@{h}",): 1}
        if isinstance(nxt, Inst) and nxt.op in ("shl", "mul", "lshr", "ashr", "sdiv", "udiv") and nxt.ops[0] is x \
                and isinstance(nxt.ops[1], Const):
            init = self.of(outside[0])        # halved or doubled each pass (a work-group tree's span):
            if init is not None and not any(_is_id(v) or _is_loop(v) for m in init for v in m):
                return {(f"s@{h}",): 1}      # uniform over the work-items, not affine in the pass
        if not (isinstance(nxt, Inst) and nxt.op in ("add", "sub") and x in nxt.ops):
            self.why[id(x)] = "a loop-carried value that is not a counter"
            return None
        other = nxt.ops[1] if nxt.ops[0] is x else nxt.ops[0]
        step = self.of(other)
        init = self.of(outside[0])
        if step is None or init is None:
            self.why[id(x)] = self.why.get(id(outside[0] if init is None else other), "a counter's start or step "
                                                                                     "is not affine")
            return None
        if any(_is_id(v) or _is_loop(v) for m in step for v in m):
            self.why[id(x)] = "a counter whose step varies"
            return None
        if nxt.op == "sub":
            step = _mul(step, _const(-1))
        return _add(init, _mul(step, {(f"k@{h}",): 1}))


def _base(form: dict):
    """(space, buffer key, offset form) of a pointer polynomial: exactly one base with
    coefficient 1."""
    bases = [m for m in form if len(m) == 1 and (m[0].startswith(("base", "table:")) or m[0] == "local")]
    if len(bases) != 1 or form[bases[0]] != 1:
        return None
    (b,) = bases[0]
    rest = {m: c for m, c in form.items() if m != bases[0]}
    if any(b in m for m in rest):
        return None
    space = "local" if b == "local" else "constant" if b.startswith("table:") else "global"
    return space, b, rest


def _classify(off: dict, elem: int, depth: dict) -> tuple:
    """(class, innermost loop, why for irregular) of an offset polynomial (bytes)."""
    ids = {m: c for m, c in off.items() if any(_is_id(v) for v in m)}
    loopv = {m: c for m, c in off.items() if any(_is_loop(v) for v in m)}
    loops = sorted({v for m in loopv for v in m if _is_loop(v)}, key=lambda v: depth.get(v[2:], 0))
    inner = loops[-1][2:] if loops else ""
    if any(_is_id(v) for m in loopv for v in m):
        return "irregular", inner, "the index multiplies a work-item id by a loop counter"
    dims = {v[-1] for m in ids for v in m if _is_id(v)}
    if not ids:
        return ("broadcast" if loopv else "uniform"), inner, ""
    if len(dims) > 1 and loopv:
        return "tile", inner, ""
    unit = any(c == elem and len(m) == 1 and m[0][-1] == "0" for m, c in ids.items())
    if not loopv:
        return ("unit" if unit else "strided"), inner, ""
    k_unit = any(c == elem and len(m) == 1 for m, c in loopv.items())
    if k_unit and not unit:
        return "row", inner, ""
    if unit and not k_unit:
        return "column", inner, ""
    return "irregular", inner, ("both the work-item id and the loop counter step by one element" if unit
                                else "neither the work-item id nor the loop counter steps by one element")


def block_tests(assumed) -> set:
    """The launch tests (KernelBinary.launch_tests) of the constant blocks `assumed` ((d, C):
    the local size in dimension d is C; _Forms.ids_of_groups)."""
    return {f"%ls{'xyz'[d]} == {c}" for d, c in assumed}


def analyse(func: Func, params, skewed=(), no_offset: bool = False, assumed: set | None = None) -> list:
    """The Access of every load and store of buffer memory in `func`, in program order; the
    counters of the loops whose headers are in `skewed` (a build runs them skewed:
    control.skewed_loop) as the sequencer runs them, the same in every lane of a pass; with
    no_offset (a build whose launches have no global offset) group id * local size + local id as
    the global id, and the local sizes that took for a constant block added to `assumed`."""
    loops = cfg_of(func).loops
    depth = {h: sum(h in body for body in loops.values()) for h in loops}
    forms = _Forms(func, loops, set(skewed), no_offset)
    heads = {b.name: next((i.line for i in b.insts if i.line), 0) for b in func.blocks if b.name in loops}
    out = []
    for b in func.blocks:
        for i in b.insts:
            if i.op not in ("load", "store"):
                continue
            ptr = i.ops[0] if i.op == "load" else i.ops[1]
            if forms._slot(ptr) is not None or isinstance(ptr, Inst) and ptr.op == "load" and forms._slot(ptr.ops[0]):
                continue                                 # the launch's own arguments, ids and scalars
            try:
                elem = irtypes.size(i.elem if i.op == "load" else getattr(i.ops[0], "type", ""))
            except Exception:                            # noqa: BLE001 - an odd type: size unknown
                elem = 0
            f = forms.of(ptr)
            based = None if f is None else _base(f)
            if based is None:
                root = _root(ptr)
                if isinstance(root, Inst) and root.op == "alloca":
                    continue                             # the work-item's private memory
                rf = forms.of(root)
                space, key = ("global", "?") if rf is None or _base(rf) is None else _base(rf)[:2]
                space, name = _name(space, key, params)
                out.append(Access(i.line, i.op, space, name, elem, "irregular",
                                  why=forms.why.get(id(ptr), "pointer not traced to one buffer"), inst=i))
                continue
            space, key, off = based
            space, name = _name(space, key, params)
            cls, loop, why = _classify(off, elem, depth)
            out.append(Access(i.line, i.op, space, name, elem, cls, loop, heads.get(loop, 0), why, form=off, inst=i))
    _neighbourhoods(out)
    if assumed is not None:
        assumed |= forms.assumed
    return out


def _root(ptr):
    """The pointer a chain of GEPs starts from."""
    while isinstance(ptr, Inst) and ptr.op in ("getelementptr", "bitcast"):
        ptr = ptr.ops[0]
    return ptr


def _name(space: str, key: str, params) -> tuple:
    """(space, name) of a buffer key: a parameter's own address space and name."""
    if key.startswith("base"):
        k = int(key[4:])
        if k < len(params):
            p = params[k]
            return (p.kind if p.kind in ("global", "constant", "local") else space), p.name
        return space, key
    return space, key[6:] if key.startswith("table:") else "__local" if key == "local" else key


def _neighbourhoods(accesses: list) -> None:
    """Accesses of one buffer whose offsets differ only by constants and uniform multiples (a
    pitch): a stencil's neighbourhood."""
    groups = {}
    for a in accesses:
        if a.form is None or a.cls in ("uniform", "irregular"):
            continue
        moving = tuple(sorted((m, c) for m, c in a.form.items() if any(_is_id(v) or _is_loop(v) for v in m)))
        groups.setdefault((a.space, a.buffer, moving), []).append(a)
    for g in groups.values():
        shifts = {tuple(sorted((m, c) for m, c in a.form.items() if not any(_is_id(v) or _is_loop(v) for v in m)))
                  for a in g}
        if len(shifts) > 1:
            for a in g:
                a.cls = "neighbourhood"


class _LaneBoolForms(_Forms):
    """_Forms where a boolean widened to an integer (``r + (r > 0 ? -1 : 0)``, as LLVM writes a
    clamped neighbour ``r > 0 ? r - 1 : r``) is a variable ``bool:<n>`` in {0, 1} (times -1 for
    sext), and so is the condition of a select between two forms (``f - (y >= 2 ? 2 W : 0)``);
    ``bools[n]`` is its i1 IR value.  Not for classes: the variable is not uniform."""

    def __init__(self, func: Func, loops: dict, no_offset: bool = False):
        super().__init__(func, loops, no_offset=no_offset)
        self.bools = []

    def _form(self, x):
        if isinstance(x, Inst) and x.op in ("sext", "zext") and getattr(x.ops[0], "type", "") == "i1":
            return {(self._bool(x.ops[0]),): -1 if x.op == "sext" else 1}
        if isinstance(x, Inst) and x.op == "select" and getattr(x.ops[0], "type", "") == "i1":
            # c ? a : b = b + (a - b) c: LLVM's f - (c ? s : 0) for the clamped neighbour c ? f - s : f
            a, b = self.of(x.ops[1]), self.of(x.ops[2])
            if a is None or b is None:
                return None
            return _add(b, _mul(_add(a, b, -1), {(self._bool(x.ops[0]),): 1}))
        return super()._form(x)

    def _bool(self, c) -> str:
        if c not in self.bools:
            self.bools.append(c)
        return f"bool:{self.bools.index(c)}"


class PointerForms:
    """The byte-offset polynomial of each pointer IR value of one function, as the analysis above
    computes it, for the code generator (rows.py reads a row-major index off it); with lane_bools,
    widened booleans are variables too (_LaneBoolForms), their i1 IR values in ``bools``."""

    def __init__(self, func: Func, lane_bools: bool = False, no_offset: bool = False):
        self._forms = (_LaneBoolForms if lane_bools else _Forms)(func, cfg_of(func).loops, no_offset=no_offset)
        self.bools = getattr(self._forms, "bools", [])

    def value(self, x) -> dict | None:
        """The polynomial of integer IR value x (None: not one)."""
        return self._forms.of(x)

    @property
    def assumed(self) -> set:
        """(d, C): local sizes the forms took a constant block for (_Forms.ids_of_groups)."""
        return self._forms.assumed

    def offset(self, ptr) -> tuple | None:
        """(buffer key: "base<k>" for parameter k, offset polynomial in bytes) of pointer ptr, or None."""
        f = self._forms.of(ptr)
        based = None if f is None else _base(f)
        return None if based is None else based[1:]
