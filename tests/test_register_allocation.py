"""The backend's register allocator (translator/backend/emit.py) on programs with more live
values than the GRFs hold: no two values that are live at once share a place."""
import random

import pytest

from translator.backend.emit import allocate
from translator.backend.ops import Op, VReg


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
