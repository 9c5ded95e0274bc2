"""The backend's register allocator (translator/backend/regalloc.py) on programs with more live
values than the GRFs hold: no two values that are live at once share a place; and what keeps
values few and their registers out of each other's way (merging repeated ops, FIFO reuse)."""
import random

import pytest

from translator.backend.cleanup import merge_recomputed
from translator.backend.regalloc import allocate
from translator.backend.schedule import schedule
from translator.backend.ops import Op, SeqLoop, VReg, flat_ops


def _program(seed: int, n_ops: int = 3000):
    """Straight-line ops, each defining a value and reading earlier ones; a value's last read
    comes soon after it (most) or long after (some), so values of every length of life overlap
    and the allocator has to spill."""
    rng = random.Random(seed)
    first = VReg("v0")
    ops, live, last_read = [Op("zero {d0}", "alu", (first,), ())], [first], {}
    for k in range(1, n_ops):
        due = last_read.pop(k, [])
        v = VReg(f"v{k}")
        ops.append(Op("iadd {s0} {s1} {d0}", "alu", (v,), (rng.choice(live[-8:]), due[0] if due else live[-1])))
        ops += [Op("lpassa {s0} $t", "alu", (), (r,)) for r in due[1:]]
        live = [r for r in live if r not in due] + [v]
        end = k + (rng.randint(1, 30) if rng.random() < 0.8 else rng.randint(200, 2000))
        last_read.setdefault(min(end, n_ops - 1) if end < n_ops else n_ops, []).append(v)
    ops += [Op("lpassa {s0} $t", "alu", (), (r,)) for rs in last_read.values() for r in rs]
    return ops


def _intervals(ops):
    iv = {}
    for k, op in enumerate(ops):
        for r in op.srcs + op.dsts:
            lo, hi = iv.get(r, (k, k))
            iv[r] = (min(lo, k), max(hi, k))
    return iv


@pytest.mark.parametrize("seed", range(6))
def test_values_live_at_once_never_share_a_place(seed):
    """Spilling moves the value whose interval ends last to LM1 for all of its life, so the LM1
    slot it gets must be free for all of it (not only from where the spill happens)."""
    ops = _program(seed)
    out = allocate(ops)
    iv = _intervals(ops)
    assert any(out[r][0] == "n" for r in iv), "the program is meant to spill"
    by_place = {}
    for r, (lo, hi) in iv.items():
        by_place.setdefault(out[r], []).append((lo, hi, r))
    for place, spans in by_place.items():
        spans.sort(key=lambda s: s[0])
        for (lo1, hi1, r1), (lo2, hi2, r2) in zip(spans, spans[1:]):
            assert hi1 < lo2, f"{r1} and {r2} are both live at {lo2} and share {place}"


def _to_t(r):
    return Op("lpassa {s0} $t", "alu", (), (r,), mem=(("w", "t", 0, 1),))


def test_identical_ops_merge_and_cascade():
    """-O0 IR recomputes an address at every use: the repeat goes, its readers read the first
    result, and an op that thereby repeats another goes too."""
    x, c, a1, b1, a2, b2 = (VReg(h) for h in "x c a1 b1 a2 b2".split())
    tree = [Op("limm 0x1 {d0}", "alu", (c,)), Op("lpassa $ln38 {d0}", "alu", (x,), mem=(("r", "n", 38, 40),)),
            Op("iadd {s0} {s1} {d0}", "alu", (a1,), (x, c)), Op("ilsl {s0} {s1} {d0}", "alu", (a2,), (a1, c)),
            _to_t(a2),
            Op("iadd {s0} {s1} {d0}", "alu", (b1,), (x, c)), Op("ilsl {s0} {s1} {d0}", "alu", (b2,), (b1, c)),
            _to_t(b2)]
    ops = list(flat_ops(merge_recomputed(tree)))
    assert len(ops) == 6 and ops[-1].srcs == (a2,)


def test_no_merge_when_a_source_or_memory_changes_between():
    """A source rewritten between the two ops (here a counter's increment), or the memory read
    written, and the second op computes something else; an op in another list (a loop body) is
    left alone too."""
    i, c, a, b, m1, m2, d = (VReg(h) for h in "i c a b m1 m2 d".split())
    loop_op = Op("iadd {s0} {s1} {d0}", "alu", (d,), (i, c))
    tree = [Op("limm 0x1 {d0}", "alu", (c,)), Op("zero {d0}", "alu", (i,)),
            Op("iadd {s0} {s1} {d0}", "alu", (a,), (i, c)), Op("iadd {s0} {s1} {d0}", "alu", (i,), (i, c)),
            Op("iadd {s0} {s1} {d0}", "alu", (b,), (i, c)),
            Op("lpassa $lm0 {d0}", "alu", (m1,), mem=(("r", "m", 0, 2),)),
            Op("zero $llm0v", "alu", mem=(("w", "m", 0, 16),)),
            Op("lpassa $lm0 {d0}", "alu", (m2,), mem=(("r", "m", 0, 2),)),
            SeqLoop("%r1", "0", "4", [loop_op, _to_t(d)])]
    tree += [_to_t(r) for r in (a, b, m1, m2)]
    n = len(list(flat_ops(tree)))
    assert len(list(flat_ops(merge_recomputed(tree)))) == n


def test_free_registers_are_taken_first_freed_first():
    """Short-lived independent values in one register would each wait for the previous one's
    reader; taking the register freed longest ago lets the scheduler overlap them."""
    ops = []
    for k in range(8):
        v = VReg(f"v{k}")
        ops += [Op("zero {d0}", "alu", (v,)), _to_t(v)]
    out = allocate(ops)
    assert len({out[o.dsts[0]] for o in ops if o.dsts}) == 8
    assert len(schedule(ops, out)) <= 16         # one ALU op a step; 24 in one register


def test_vector_17_at_O0_fits():
    """The random vector kernel vector_17 at -cl-opt-disable needed 654 values live at once
    (more than the GRFs and LM1 hold) before repeated ops were merged."""
    from emulator.machine import load_machine
    from kernels.randvec import random_vector_kernel
    import translator
    from translator.backend import compile_kernel
    module = translator.compile_opencl(random_vector_kernel(17)[0], spmd=True, options="-cl-opt-disable")
    assert compile_kernel(module, "rndv", load_machine("tiny"), "1d").registers <= 480
