"""emulator/native.py's compiled fp32 loops against numpy's formulas, and bound plans that use them.

A loop must give the bits of semantics.vfma / vmul / vadd (then the output rule) wherever the
result is not a NaN, and count the NaNs it makes: the caller redoes those with numpy, whose NaN
sign the rule keeps (tests/test_emu_plan.py's programs, whose memories hold NaNs, check that
path; the program here holds none, so the loops' results are what is compared).
"""
from __future__ import annotations

import numpy as np
import pytest

import emulator.executor as executor
from emulator import native
from test_emu_plan import PROGRAM, _Unbound, _run
from test_fast_paths import fp32_values, reference_normalize


def _no_nan(rng, n):
    v = fp32_values(rng, n)
    nan = (v & np.uint32(0x7F800000)) == np.uint32(0x7F800000)
    nan &= (v & np.uint32(0x7FFFFF)) != 0
    v[nan] = np.uint32(0x7F800000)           # NaN operands -> infinities (inf * 0, inf - inf stay)
    return v


def _reference(op, x, y, z, neg_x, neg_z):
    with np.errstate(all="ignore"):
        xd, yd, zd = (a.view(np.float32).astype(np.float64) for a in (x, y, z))
        if op == "fma":
            s = (-xd if neg_x else xd) * yd + (-zd if neg_z else zd)
            r = s.astype(np.float32)
        elif op == "mul":
            s = xd * yd
            r = x.view(np.float32) * y.view(np.float32) + np.float32(0)
        else:
            s = xd + yd
            r = x.view(np.float32) + y.view(np.float32)
    return reference_normalize(r.view(np.uint32), 32), np.isnan(s)


def test_the_loops_compile():
    """llvmlite is a dependency: without the loops the emulator is right but twice as slow."""
    assert all(native.kernel(op) is not None for op in ("fma", "mul", "add"))


@pytest.mark.parametrize("op,neg_x,neg_z", [("fma", False, False), ("fma", True, False), ("fma", False, True),
                                            ("fma", True, True), ("mul", False, False), ("add", False, False)])
@pytest.mark.parametrize("rows,stride", [(4, 1), (4, 3), (1, 1)])
def test_loops_match_numpy_bit_for_bit(op, neg_x, neg_z, rows, stride):
    rng = np.random.default_rng(rows * 10 + stride)
    n = 96
    mems = [_no_nan(rng, rows * stride * n).reshape(rows * stride, n) for _ in range(3)]
    x, y, z = (m[::stride] for m in mems)                 # rows `stride` apart, as strided operands
    d = np.zeros((rows * 2, n), np.uint32)[::2]
    nans = native.kernel(op)(native.args(d, x, y, z, neg_x, neg_z).address)
    want, isnan = _reference(op, x, y, z, neg_x, neg_z)
    assert nans == isnan.sum()
    assert np.array_equal(d[~isnan], want[~isnan])


def test_args_refuse_arrays_whose_rows_are_not_runs():
    a = np.zeros((4, 8), np.uint64)
    assert native.args(a, a) is not None
    assert native.args(a, a[:, ::2].copy()) is None       # another shape
    assert native.args(a[:, ::2], a[:, ::2]) is None      # lanes not contiguous


def _finite(rng, n):
    v = fp32_values(rng, n)
    v[(v & np.uint32(0x7F800000)) == np.uint32(0x7F800000)] = np.uint32(0x3F800000)
    return v


def _fill_finite(emu, seed):
    """Finite values (denormals, zeros of both signs, huge ones): no operation makes a NaN."""
    rng = np.random.default_rng(seed)
    for mem in emu.state.mem.values():
        mem[:256] = _finite(rng, mem[:256].size * 2).view(np.uint64).reshape(mem[:256].shape)
    emu.state.t[...] = rng.integers(0, 64, emu.state.t.shape, dtype=np.uint64)
    emu.state.l1bm[:, :256] = rng.integers(0, 1 << 63, emu.state.l1bm[:, :256].shape, dtype=np.uint64)


def same_as_without_plans(monkeypatch, program):
    """program with bound plans (and their compiled loops) ends in the state it ends in without."""
    got = _run(program)
    monkeypatch.setattr(executor, "StepPlan", _Unbound)
    want = _run(program)
    assert got[1:] == want[1:]
    for k in want[0]:
        assert np.array_equal(got[0][k], want[0][k]), k


def test_plans_with_the_loops_change_no_result(monkeypatch):
    """The plan test program on finite memories: the loops' results, not numpy's redo, are compared."""
    import test_emu_plan
    monkeypatch.setattr(test_emu_plan, "_fill", _fill_finite)
    same_as_without_plans(monkeypatch, PROGRAM)


# the three ways a bound fp32 kernel ends (plan._fp32_kernel): into the destination rows at the
# commit (the first fvadd), now into a buffer copied there at the commit (the step's lpassa writes
# an operand row of the first fvfma; the second fvadd accumulates in place), and into a new array
# for the general writer (a masked store)
PATHS = """
.block b
    imax $lr8v $lr16v $omr3
    fvfma $lm0v $ln0v $lr0v $ls64v; lpassa $ls8v $lr0v
    fvfma -$lm16v $ln16v $lr16v $ls96v/$imr3
    fvmul $lm24v $ln24v $ls128v/$imr3
    fvadd $lm32v $ln32v $ls160v
    fvadd $ls192v $lm40v $ls192v
    nop
    nop
.endblock
.loop %i = 0, 2
    .call b m=%i*8 s=%i*16
.endloop
"""


@pytest.mark.parametrize("fill", ["finite", "with NaNs"])
def test_every_way_a_kernel_ends_changes_no_result(monkeypatch, fill):
    import test_emu_plan
    if fill == "finite":
        monkeypatch.setattr(test_emu_plan, "_fill", _fill_finite)
    same_as_without_plans(monkeypatch, PATHS)


@pytest.mark.parametrize("lut_name", ["LUT_L", "LUT_LL0", "LUT_LL1"])
@pytest.mark.parametrize("v_rows", ["own", "one for all"])
def test_merge_matches_numpy(lut_name, v_rows):
    """native.merge keeps, per element, the bits its nibble's table entry names, as the executor's
    numpy merge does: strided destination rows, a value row read for every cycle."""
    assert native.kernel("merge") is not None
    lut = getattr(executor, lut_name)
    rng = np.random.default_rng(3)
    mem = rng.integers(0, 2**63, (16, 4096), dtype=np.uint64)
    d = mem[2:10:2]                                  # four rows, two apart
    v = rng.integers(0, 2**63, (4, 4096), dtype=np.uint64)
    if v_rows == "one for all":
        v = np.broadcast_to(v[1], (4, 4096))
    k = rng.integers(0, 16, (4, 4096)).astype(np.uint8)
    want = d ^ ((d ^ v) & lut[k])
    assert native.merge(d, v, k, lut)
    np.testing.assert_array_equal(mem[2:10:2], want)


def test_merge_refuses_what_it_cannot_do_in_place():
    """Overlapping source and destination, or rows that are not runs of long words: False, nothing
    written (the executor then merges with numpy)."""
    mem = np.arange(64 * 8, dtype=np.uint64).reshape(64, 8)
    before = mem.copy()
    k = np.full((4, 8), 15, np.uint8)
    assert not native.merge(mem[0:4], mem[1:5], k, executor.LUT_L)
    assert not native.merge(mem[0:4, ::2], mem[8:12, ::2], k[:, :4], executor.LUT_L)
    np.testing.assert_array_equal(mem, before)
