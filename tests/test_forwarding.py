"""Forwarding paths in compiled code (translator/backend/schedule.py): a value an ALU or MAU op
reads in the step right after the ALU or MAU op that made it comes from `$aluf` / `$mauf`, so a
dependent chain issues one op a step instead of one every two.  Each kernel is built with and
without forwarding (schedule.FORWARD emptied) and run on the emulator device in strict mode:
the same results (checked against numpy), fewer steps with it."""

import numpy as np
import pytest

from emulator.machine import load_machine
from translator import compile_opencl
from translator.backend import compile_kernel, schedule

from emulator_harness import device_env, launch

# a row per work-item: the sum's carried adds of a packed loop are a chain, cycle-uniform
ROWS = """
__kernel void rows(__global const float *A, __global const float *x, __global float *y, int n)
{
    int i = get_global_id(0);
    float s = 0.0f;
    for (int k = 0; k < n; k++)
        s += A[i * n + k] * x[k];
    y[i] = s;
}
"""

# a chain of dependent float and integer ops on each work-item's own values (per-cycle results)
CHAIN = """
__kernel void chain(__global float *f, __global int *u)
{
    int i = get_global_id(0);
    float a = f[i];
    int b = u[i];
    for (int r = 0; r < 3; r++) {
        a = a * 0.5f + 1.0f;
        a = a * a - 2.0f;
        b = (b ^ (b >> 3)) + i;
        b = b * 3 - (b & 7);
    }
    f[i] = a;
    u[i] = b;
}
"""


def chain_ref(f, u):
    f, u = f.astype(np.float32).copy(), u.astype(np.int64).copy()
    i = np.arange(len(f))
    for _ in range(3):
        f = (f * np.float32(0.5) + np.float32(1.0)).astype(np.float32)
        f = (f * f - np.float32(2.0)).astype(np.float32)
        u = (u ^ (u >> 3)) + i
        u = u * 3 - (u & 7)
        u = ((u + 2**31) % 2**32) - 2**31
    return f, u.astype(np.int32)


@pytest.fixture(params=["forwarding", "none"])
def forwarding(request, monkeypatch):
    monkeypatch.setenv("MNCL_CACHE", "0")
    if request.param == "none":
        monkeypatch.setattr(schedule, "FORWARD", {})
    return request.param


def run_rows(env, n):
    rng = np.random.default_rng(3)
    A = rng.integers(-3, 4, (n, n)).astype(np.float32)
    x = rng.integers(-3, 4, n).astype(np.float32)
    (_, _, y), ev = launch(env, ROWS, "rows", n, A, x, np.zeros(n, np.float32), np.int32(n))
    np.testing.assert_array_equal(y, A.astype(np.float64) @ x)
    return ev.stats.steps


def run_chain(env, n):
    rng = np.random.default_rng(4)
    f = rng.uniform(-2, 2, n).astype(np.float32)
    u = rng.integers(-2**20, 2**20, n).astype(np.int32)
    (fo, uo), ev = launch(env, CHAIN, "chain", n, f, u)
    rf, ru = chain_ref(f, u)
    np.testing.assert_array_equal(fo, rf)
    np.testing.assert_array_equal(uo, ru)
    return ev.stats.steps


@pytest.mark.parametrize("machine", ["tiny", "mncore2"])
def test_results_are_the_same_with_and_without_forwarding(forwarding, machine):
    env = device_env(machine, new=True)
    run_rows(env, 96)
    run_chain(env, 1000)


def test_forwarding_takes_fewer_steps(monkeypatch):
    monkeypatch.setenv("MNCL_CACHE", "0")
    env = device_env("tiny", new=True)
    with_fwd = run_rows(env, 64), run_chain(env, 700)
    monkeypatch.setattr(schedule, "FORWARD", {})
    env = device_env("tiny", new=True)
    without = run_rows(env, 64), run_chain(env, 700)
    # the packed sum's four carried adds were one every two steps
    assert with_fwd[0] < 0.9 * without[0], (with_fwd, without)
    assert with_fwd[1] < without[1], (with_fwd, without)


def test_the_asm_reads_the_paths():
    """The loop's add reads the product from $mauf, in the step right after the product's."""
    m = compile_opencl(ROWS, filename="rows.cl", spmd=True)
    lines = compile_kernel(m, "rows", load_machine("tiny"), "1d").asm.splitlines()
    hits = [k for k, line in enumerate(lines) if "fvadd" in line and "$mauf" in line]
    assert hits
    for k in hits:
        assert lines[k - 1].split()[0] in ("fvmul", "fvadd"), lines[k - 1:k + 1]


# -- the emulator: a forwarding read that names its producer's destination (asm.alias_forwarding) --

# each pair: a producer, then a reader of its path; the comment says whether the read may be taken
# from the producer's destination (the same value) or must come from the path
ALIAS = """
.block b
    nop
    fvadd $lr0v $lr8v $ls0v
    fvmul $mauf $lr16v $ls8v          # aliased: a whole per-cycle write
    ladd $lr0 $lr2 $ls16
    ladd $aluf $lr24v $ls24v          # aliased: a cycle-uniform producer, one long word every cycle
    lpassa $lr8v $ls32
    ladd $aluf $lr24v $ls40v          # not: one long word every cycle, a value per cycle (cycle 3's stays)
    fvadd $lr0v $lr8v $ls48v/1111
    fvadd $lr0v $mauf $ls56v          # not: a write mask (one that keeps every cycle, but still)
    imax $lr8v $lr16v $omr3
    fvadd $lr0v $lr8v $ls64v/$imr3
    fvadd $lr0v $mauf $ls72v          # not: a masked write
    fvadd/1010 $lr0v $lr8v $ls96v
    fvadd $lr0v $mauf $ls104v         # not: a zero-flush mask
.endblock
.call b
"""


def test_aliased_forwarding_reads_change_nothing(monkeypatch):
    """The program's forwarding reads, taken from the producers' destinations where asm says so,
    leave the state, dumps and cycles that reading the paths leaves (strict mode: no hazard
    reported for them)."""
    import emulator.asm as asm
    from test_emu_plan import _run
    prog = asm.assemble(ALIAS, "alias.vsm")
    vias = [o.via for st in prog.blocks["b"].stmts for e in st.exprs for o in e.srcs
            if o.space in ("aluf", "mauf") or o.via]
    assert vias == ["mauf", "aluf", None, None, None, None], vias
    with_alias = _run(ALIAS)
    monkeypatch.setattr(asm, "alias_forwarding", lambda block: None)
    without = _run(ALIAS)
    assert with_alias[1:] == without[1:]
    for k, v in without[0].items():
        np.testing.assert_array_equal(with_alias[0][k], v, err_msg=k)
