"""Index forms in the work-item ids, and when the lanes of a wave can store to one element.

A scatter whose lanes may meet claims its elements (scatter.scatter_pass), which costs a
max-reduction over the machine per store.  Where a store's byte offset is an affine
function of the work-item ids whose lanes can never meet, the claim is skipped; where that
depends on the launch (the local or global size), a sequencer condition decides per launch.

A form maps terms to integer coefficients:

* ``1``: the constant part (bytes);
* ``("u", key)``: a value uniform over the lanes that may meet (a kernel argument, a group id
  for ``__local`` memory, a sequencer loop's counter, ...), opaque;
* ``("id", d, lo, hi, s)``: bits ``lo``..``hi`` (``hi`` None: all above ``lo``) of the id in
  dimension d (the local id for ``__local`` memory, where a global id is the local id plus a
  uniform part; the global id for ``__global``), times the sequencer expression s (a uniform
  integer the sequencer knows, such as a row pitch argument; None for 1).

Bit fields come from ``t >> k`` and ``t & (2^k - 1)``, so the transposes of an FFT
(``lds[(t >> 3) * 64 + (t & 7)]``) are forms too.  The lanes of one store never meet when the
form is a mixed-radix number: the fields of each dimension cover all of its bits, a dimension
without fields has extent 1, and with the digits ordered by coefficient each coefficient is at
least the one below times that digit's range (the lowest at least the element's size).  Then
two different lanes' offsets differ by at least the lowest coefficient.
"""
from __future__ import annotations

import re
from math import gcd

from . import irtypes
from .irread import Const, Inst, Unsupported

ONE = 1


def add(a: dict, b: dict, sign: int = 1) -> dict:
    out = dict(a)
    for k, c in b.items():
        out[k] = out.get(k, 0) + sign * c
        if not out[k]:
            del out[k]
    return out


def _scale(a: dict, k: int) -> dict:
    return {t: c * k for t, c in a.items()} if k else {}


def _ids(f: dict) -> list:
    return [t for t in f if isinstance(t, tuple) and t[0] == "id"]


def form_of(x, leaf, memo: dict | None = None):
    """The form of integer or pointer IR value x, or None.  leaf(x) gives the form of a value the
    walk does not take apart (a load of an id, an argument, ...) or None; pointers: a GEP adds
    its scaled indices to its base's form."""
    memo = {} if memo is None else memo
    if id(x) in memo:
        return memo[id(x)]
    out = _form(x, leaf, memo)
    memo[id(x)] = out
    return out


def sext_of_trunc(x) -> bool:
    """``ashr (shl y, k), k``: how LLVM's instcombine writes ``sext (trunc y)`` (an ``int`` made from
    ``get_global_id`` and used as a 64-bit index); the same value as y while y fits the narrow type,
    the wrap sext and trunc are already taken to not have."""
    if not (isinstance(x, Inst) and x.op == "ashr" and isinstance(x.ops[0], Inst) and x.ops[0].op == "shl"):
        return False
    k1, k2 = x.ops[1], x.ops[0].ops[1]
    return isinstance(k1, Const) and isinstance(k2, Const) and k1.value == k2.value and isinstance(k1.value, int)


def int_bits(t) -> int | None:
    """The width of LLVM integer type t ("i32": 32), or None for anything else."""
    return int(t[1:]) if isinstance(t, str) and t[:1] == "i" and t[1:].isdigit() else None


def narrow_bits(x) -> int | None:
    """The width an integer conversion x keeps of its operand's value (a trunc's result, a sext's
    or zext's operand, sext_of_trunc's 64 - k), or None where x is none of them."""
    if sext_of_trunc(x):
        return 64 - x.ops[1].value if int_bits(x.type) == 64 else None
    if x.op == "trunc":
        return int_bits(x.type)
    if x.op in ("sext", "zext"):
        return int_bits(getattr(x.ops[0], "type", None))
    return None


def wrapped(form: dict | None, bits: int | None) -> dict | None:
    """form as a value of `bits` bits: each coefficient reduced to that width's signed range.  Only
    the low bits of a value a conversion narrows count, so LLVM may spell an int's -1 as the i64
    constant 4294967295 before a ``sext (trunc)`` (instcombine's demanded bits); the form must say
    -1, or a span or plan built from it points 2^32 elements away.  (The value is the reduced
    form's while it fits the type: what sext and trunc are already taken to keep.)"""
    if form is None or bits is None or bits >= 64:
        return form
    half, full = 1 << (bits - 1), 1 << bits
    out = {t: (c + half) % full - half for t, c in form.items()}
    return {t: c for t, c in out.items() if c}


def not_of(x) -> bool:
    """``xor y, -1`` (~y): what LLVM's instcombine makes of ``-y - 1``, e.g. the index f - n - 1
    (f + ~n); the same value as -y - 1 at any width."""
    return isinstance(x, Inst) and x.op == "xor" and isinstance(x.ops[1], Const) and x.ops[1].value == -1


def _form(x, leaf, memo):
    if isinstance(x, Const):
        return {ONE: x.value} if isinstance(x.value, int) and not isinstance(x.value, bool) and x.value else \
            ({} if x.value == 0 else None)
    got = leaf(x)
    if got is not None or not isinstance(x, Inst):
        return got
    op, ops = x.op, x.ops
    if op in ("sext", "zext", "trunc", "freeze"):     # (wraps: see injective)
        return wrapped(form_of(ops[0], leaf, memo), narrow_bits(x))
    if sext_of_trunc(x):
        return wrapped(form_of(ops[0].ops[0], leaf, memo), narrow_bits(x))
    if op in ("add", "sub") or op == "or" and " disjoint " in f" {x.text} ":
        a, b = form_of(ops[0], leaf, memo), form_of(ops[1], leaf, memo)
        return None if a is None or b is None else add(a, b, -1 if op == "sub" else 1)
    if not_of(x):
        a = form_of(ops[0], leaf, memo)
        return None if a is None else add(_scale(a, -1), {ONE: -1})
    if op in ("mul", "shl"):
        a, b = form_of(ops[0], leaf, memo), form_of(ops[1], leaf, memo)
        if a is None or b is None:
            return None
        if op == "shl":
            return _scale(a, 1 << b[ONE]) if set(b) == {ONE} and 0 <= b[ONE] < 32 else None
        for p, q in ((a, b), (b, a)):
            if set(q) <= {ONE}:
                return _scale(p, q.get(ONE, 0))
        return _times_uniform(a, b) or _times_uniform(b, a)
    if op in ("lshr", "ashr", "and"):                   # a bit field of one id
        a, b = form_of(ops[0], leaf, memo), form_of(ops[1], leaf, memo)
        if a is None or b is None or set(b) != {ONE} or len(a) != 1 or next(iter(a.values())) != 1:
            return None
        (t,) = a
        if not isinstance(t, tuple) or t[0] != "id" or t[4] is not None:
            return None
        _, d, lo, hi, _ = t
        k = b[ONE]
        if op == "and":
            if k <= 0 or k & (k + 1):
                return None
            top = lo + k.bit_length() if hi is None else min(hi, lo + k.bit_length())
            return {("id", d, lo, None if top >= 32 else top, None): 1}     # (ids are below 2^32)
        if not 0 <= k < 32:
            return None
        return {("id", d, lo + k, None if hi is None else max(hi, lo + k), None): 1} \
            if hi is None or lo + k < hi else {}
    if op == "getelementptr":
        return _gep(x, leaf, memo)
    if op == "phi":                 # a join of one form on every edge (LLVM's PRE: `%.pre = mul n, gid1` before
        memo[id(x)] = None          # a loop and the same product in it) is that form; a cycle is none
        forms = [form_of(o, leaf, memo) for o in ops]
        return forms[0] if forms[0] is not None and all(f == forms[0] for f in forms[1:]) else None
    return None


def _gep(x: Inst, leaf, memo):
    """A GEP's form: its base's plus each index's times the size it steps (as memory.gep)."""
    out, ty = form_of(x.ops[0], leaf, memo), x.elem
    for k, idx in enumerate(x.ops[1:]):
        if out is None:
            return None
        if k:
            try:
                sub = irtypes.element_type(ty, idx.value if isinstance(idx, Const) else None)
            except (Unsupported, IndexError, TypeError):
                return None
            if sub is None:
                return None
            ty, fo = sub
            if fo is not None:                 # a struct field
                out = add(out, {ONE: fo} if fo else {})
                continue
        try:
            size = irtypes.size(ty)
        except Unsupported:
            return None
        f = form_of(idx, leaf, memo)
        out = None if f is None else add(out, _scale(f, size))
    return out


def _times_uniform(a: dict, b: dict):
    """a * b where b is one uniform term the sequencer knows, ("u", key, expr), and a has no
    term with a factor already: ids take the factor, uniform terms stay uniform."""
    if len(b) != 1:
        return None
    (t, c), = b.items()
    if not (isinstance(t, tuple) and t[0] == "u" and len(t) == 3 and t[2] is not None):
        return None
    out = {}
    for term, k in a.items():
        if term == ONE:
            out[t] = out.get(t, 0) + k * c
        elif term[0] == "id" and term[4] is None:
            out[term[:4] + (t[2],)] = k * c
        elif term[0] == "u":
            out[("u", (term, t))] = k * c
        else:
            return None
    return out


GROUP_DIM = 3        # id fields' dimensions for the group id and the local id in dimension 0, which
LOCAL_DIM = 4        # together stand for dimension 0 (scatter.id_form: a 1-D build's global stores)


def _merged(fields: list) -> list:
    """Fields (lo, hi, factor or None, coefficient) of one dimension, lowest bits first, those of
    the same bits as one with a factor that sums them (`grp * 16 * w - grp * 16`: one digit)."""
    by = {}
    for lo, hi, s, c in fields:
        by.setdefault((lo, hi), []).append((s, c))
    out = []
    for (lo, hi), terms in sorted(by.items(), key=lambda t: (t[0][0], t[0][1] is None, t[0][1] or 0)):
        if len(terms) == 1:
            out.append((lo, hi, *terms[0]))
        else:
            out.append((lo, hi, " + ".join(f"{c} * ({s})" if s else str(c) for s, c in terms), 1))
    return out


def _digits(f: dict, extent):
    """[(coefficient, factor expr or None, range)] of form f's id fields, or None where a
    dimension's fields do not cover its bits; with the conditions (sequencer text) that the
    dimensions without fields have extent 1.  extent(d): a sequencer expression or 1.  A form in
    the group and local ids (GROUP_DIM, LOCAL_DIM) stands for dimension 0 (not with it: None)."""
    digits, conds = [], []
    dims = {t[1] for t in _ids(f)}
    grouped = bool(dims & {GROUP_DIM, LOCAL_DIM})
    if grouped and 0 in dims:
        return None, None
    for d in (1, 2, GROUP_DIM, LOCAL_DIM) if grouped else range(3):
        fields = _merged([(t[2], t[3], t[4], f[t]) for t in _ids(f) if t[1] == d])
        e = extent(d)
        if not fields:
            if e != 1:
                conds.append(f"{e} == 1")
            continue
        at = 0
        for lo, hi, s, c in fields:
            if lo != at:
                return None, None
            at = hi
            if hi is not None:
                r = 1 << (hi - lo)
            elif e == 1:
                r = 1
            else:
                r = e if lo == 0 else (e + (1 << lo) - 1) >> lo if isinstance(e, int) else \
                    f"(({e} + {(1 << lo) - 1}) >> {lo})"
            if r != 1:
                digits.append((c, s, r))
        if at is not None:
            return None, None
    return digits, conds


def _ordered(digits):
    """The digits lowest first: plain ones by magnitude, then at most one with a factor (a row
    pitch: checked at run time to lie above the others), else None."""
    plain = sorted((d for d in digits if d[1] is None), key=lambda d: abs(d[0]))
    scaled = [d for d in digits if d[1] is not None]
    return None if len(scaled) > 1 else plain + scaled


def _mag(c, s):
    return str(abs(c)) if s is None else f"{c} * ({s})"


def _span(digits) -> str:
    """The furthest apart two lanes' offsets can be (sequencer text): each digit's coefficient
    times its range less one."""
    return " + ".join(f"{_mag(c, s)} * ({r} - 1)" for c, s, r in digits)


def injective(f: dict, size: int, extent, most: int = 1 << 30):
    """Conditions (sequencer text; [] for always) under which no two lanes of form f store to
    overlapping `size`-byte elements, or None when that cannot be shown.  most: an upper bound of
    every extent (the lanes that may meet are at most a wave)."""
    digits, conds = _digits(f, extent)
    if digits is None or not digits:
        return None
    digits = _ordered(digits)
    if digits is None:
        return None
    # 32-bit arithmetic wraps (unsigned C arithmetic, truncation): add, multiply and truncate
    # agree with the form modulo 2^32, so lanes stay apart while the ids' part spans less than
    # 2^31 (a multiple of an id that wraps, `gid * 0x80000000u`, fails this)
    if any(s is not None for _, s, _ in digits) or \
            sum(abs(c) * ((r if isinstance(r, int) else most) - 1) for c, _, r in digits) >= 1 << 31:
        if all(s is None and isinstance(r, int) for _, s, r in digits):
            return None
        conds.append(f"{_span(digits)} < {1 << 31}")
    below = size
    for c, s, r in digits:
        if s is None and isinstance(below, int):
            if abs(c) < below:
                return None
        else:
            conds.append(f"{_mag(c, s)} >= {below}")
        below = abs(c) * r if s is None and isinstance(r, int) else f"{_mag(c, s)} * {r}"
    return conds


def meet(f1: dict, f2: dict, s1: int, s2: int, extent):
    """When the `s1`-byte element one lane stores at form f1 may overlap the `s2`-byte element
    another lane stores at f2 (both forms one-to-one, see injective): [] for never, None for
    always (or unknown), else [(m, span)]: when m <= span (sequencer text), the furthest apart
    two lanes' offsets can be."""
    if {t: c for t, c in f1.items() if t != ONE} != {t: c for t, c in f2.items() if t != ONE}:
        return None
    digits, _ = _digits(f1, extent)
    if not digits:
        return None
    delta = f2.get(ONE, 0) - f1.get(ONE, 0)
    g = 0
    for c, _, _ in digits:
        g = gcd(g, c)
    # offsets differ by D, a non-zero multiple of g with |D| <= the digits' span; they overlap
    # when -s2 < D - delta < s1
    ms = [m for m in range((delta - s2) // g * g, delta + s1 + g, g) if m and -s2 < m - delta < s1]
    if not ms:
        return []
    return [(min(abs(m) for m in ms), _span(digits))]


def dominators(rpo: list, preds: dict) -> dict:
    """block -> the set of blocks that dominate it (itself included), by the iterative data-flow
    over the blocks in reverse postorder."""
    dom = {n: set(rpo) for n in rpo}
    dom[rpo[0]] = {rpo[0]}
    changed = True
    while changed:
        changed = False
        for n in rpo[1:]:
            ps = [dom[p] for p in preds[n] if p in dom]
            new = set.intersection(*ps) | {n} if ps else {n}
            if new != dom[n]:
                dom[n], changed = new, True
    return dom


_BELOW = {"slt": (0, 0), "ult": (0, 0), "sle": (0, 1), "ule": (0, 1),      # a < b (+1): (id side, slack)
          "sgt": (1, 0), "ugt": (1, 0), "sge": (1, 1), "uge": (1, 1)}
NEGATE = {"slt": "sge", "ult": "uge", "sle": "sgt", "ule": "ugt", "sgt": "sle", "ugt": "ule", "sge": "slt",
          "uge": "ult", "eq": "ne", "ne": "eq"}     # an integer compare's predicate on its false edge


def id_below(cond, truth: bool, form, expr) -> dict:
    """{d: U}: what `cond` being `truth` says of the ids, an id (form exactly that id's) below the
    uniform U (sequencer text, from expr(x)); through `and` (true) and `or` (false), LLVM's
    `select c1, c2, false` included.  form(x) and expr(x): as idforms.form_of and seq_expr."""
    if not isinstance(cond, Inst):
        return {}
    parts = None
    if cond.op == "and" and truth or cond.op == "or" and not truth:
        parts = cond.ops[:2]
    elif cond.op == "select" and isinstance(cond.ops[2], Const) and cond.ops[2].value in (0, False) and truth:
        parts = cond.ops[:2]
    if parts is not None:
        out = {}
        for c in parts:
            out.update(id_below(c, truth, form, expr))
        return out
    if cond.op != "icmp" or cond.pred not in _BELOW:
        return {}
    pred = cond.pred if truth else NEGATE[cond.pred]
    side, slack = _BELOW[pred]
    x, u = cond.ops[side], cond.ops[1 - side]
    f, e = form(x), expr(u)
    if e is None or re.search(r"%(?!p\d)", e) or f is None or len(f) != 1:
        return {}                 # (a loop counter may have moved on since the branch)
    (t, c), = f.items()
    if not (isinstance(t, tuple) and t[0] == "id" and t[2:] == (0, None, None) and c == 1):
        return {}
    return {t[1]: f"({e}) + 1" if slack else e}
