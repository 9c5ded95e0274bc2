"""The executor's step plans and the cheaper computations of issue 22, against what they replace.

A step plan (emulator/plan.py) binds a step's operands once per block offset; a run with plans
must leave exactly the state, dumps and cycles of a run where every operand goes through the
general path.  The cheaper computations (fp32 FMA through reused float64 buffers, integer
reductions along a moved axis, MAB rotations by slices, T-indirect word indexing) must give the
bits of the straightforward formulas.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import emulator.executor as executor
from emulator.asm import assemble
from emulator.executor import Emulator
from emulator.numbers import WIDTH, lanes, pack
from emulator.plan import StepPlan
from emulator.semantics import _mab_rotate
from emulator.transfers import reduce
from test_fast_paths import fp32_values, reference_normalize

FIDELITY = Path(__file__).parent / "fidelity"

# Operand forms the plans bind or leave alone: block offsets, ll pairs, words, _Same (no auto-stride),
# fixed values, forwarding, cycle-uniform expressions, fixed and flag-entry masks, T-indirect reads
# and writes, a base-address register, the L1BM and the reduce network; direct stores (plan.py) whose
# forwarding views are overwritten before they are read, by a plain and by a masked store.
PROGRAM = """
.block b
    linc $lr0v $lr64v
    ladd $aluf $lr16v $lr128v; fvfma $lm0v $ln0v $lr0v $ls64v
    lpassa $mauf $llr160v
    lpassa $peid $lr136
    imax $lr8v $lr16v $omr3; l1bmp $lb0 $llm64v
    ladd $lbf $lr16v $lr240v
    iadd $lr24v $lm0v $lr96v
    nop
    lpassa $lr8v $lr192v/$imr3
    lpassa $lm8v $lr200v/1010
    ipassa $lm2 $ls8
    msl $lr8v $ls128v; l1bmriiadd $ln16v $lb64
    msr $ls16v $ls136v
    zero $ln128v
    nop
    ipassa $mt4 $ls200v
    nop
    nop
    ipassa $ls200v $mt16
    nop
    nop
    fvfma -$lm16v $ln16v -$lr16v $ls224v
    l1bmd $lb0 $lr232v
    ladd $ls0v $lm0v $ls224v
    lpassa $mauf $lr248v; l1bmd $ls232v $lb128
    lpassa $lm8v $lr232v/1010
    lpassa $lbf $ls240v
    lsub $lr8 $ln16v $ls248v
    fvmul $lm16v $ln16v $ls232v
    fvadd $lm24v $ln24v $ls216v; iadd $ls240v $lr24v $lr96v
    fvmul $mauf $ln24v $ls208v
.endblock
.loop %i = 0, 3
    .call b m=%i*8 r=%i*16 s=%i*32
.endloop
d get $ls200n0c0b0m0p0 4
d get $ln16n0c0b0m0p0 2
ipassa $subpeid $lmb
nop
nop
lpassa $lm0v $lr220v
zero $lmb
nop
nop
"""


def _fill(emu, seed):
    rng = np.random.default_rng(seed)
    for sp, mem in emu.state.mem.items():
        mem[:256] = fp32_values(rng, mem[:256].size * 2).view(np.uint64).reshape(mem[:256].shape)
    emu.state.t[...] = rng.integers(0, 64, emu.state.t.shape, dtype=np.uint64)
    emu.state.l1bm[:, :256] = rng.integers(0, 1 << 63, emu.state.l1bm[:, :256].shape, dtype=np.uint64)


def _run(text, machine="tiny", seed=0, pfn=False):
    """Two runs of the program on one emulator (a step binds its operands at its second run with the
    same offsets), then the state."""
    emu = Emulator(machine, pfn=pfn)
    _fill(emu, seed)
    prog = assemble(text, "plan_test.vsm")
    emu.run(prog)
    prof = emu.run(prog)
    st = emu.state
    arrays = {**{f"mem_{k}": v for k, v in st.mem.items()}, "t": st.t, "omr": st.omr, "l1bm": st.l1bm,
              "l2bm": st.l2bm, **{f"fwd_{k}_{i}": v[i].reshape(4, -1) for k, v in st.fwd.items() for i in (0, 1)}}
    return {k: np.array(v) for k, v in arrays.items()}, emu.dump, prof.cycles, prof.steps


class _Unbound(StepPlan):
    """A plan that binds nothing: every operand through the executor's general path."""

    __slots__ = ()

    def bound(self, emu, st):
        return self


def _same_with_and_without_plans(monkeypatch, text, **kw):
    got = _run(text, **kw)
    monkeypatch.setattr(executor, "StepPlan", _Unbound)
    want = _run(text, **kw)
    assert got[1:] == want[1:]
    for k in want[0]:
        assert np.array_equal(got[0][k], want[0][k]), k


def test_the_program_uses_the_forms_it_claims():
    """PROGRAM really runs bound operands, general ones and both kinds of writer."""
    emu = Emulator("tiny")
    prog = assemble(PROGRAM)
    emu.run(prog)
    steps = [st for st in prog.blocks["b"].stmts if st.exprs]
    assert not [p for st in steps for p in st.plans.values() if p is not None and p.readers]
    emu.run(prog)                      # the second run with the same offsets binds
    plans = [p for st in steps for p in st.plans.values() if p is not None]
    # one per offset, and the one that binds nothing; 'zero $ln128v' names only LM1, whose offset
    # the calls leave at 0: one bound plan for the three calls
    assert len(plans) == 4 * len(steps) - 2
    kinds = {w.__qualname__.split(".")[0] for p in plans for ws in p.writers.values() for w in ws}
    assert kinds == {"_memory_writer", "_general_writer", "_direct_writer", "_same_writer"}
    assert any(p.readers for p in plans)


def test_a_plan_is_keyed_by_the_offsets_of_the_memories_its_step_names():
    """A step of GRF operands in a block whose LM0 offset moves at every call binds once: its key
    holds the GRF offsets only (and a step of LM0 operands binds once per LM0 offset)."""
    emu = Emulator("tiny")
    prog = assemble("""
.block b
    iadd $lr0v $lr8v $lr16v
    iadd $lm0v $lr8v $lr24v
.endblock
.loop %i = 0, 5
    .call b m=%i*8
.endloop
""")
    emu.run(prog)
    grf, lm = prog.blocks["b"].stmts
    assert [p for p in grf.plans.values() if p is not None and p.readers]
    assert not [p for p in lm.plans.values() if p is not None and p.readers]


def test_plans_change_no_result(monkeypatch):
    _same_with_and_without_plans(monkeypatch, PROGRAM)


@pytest.mark.parametrize("path", sorted(FIDELITY.glob("*.vsm")), ids=lambda p: p.stem)
def test_plans_change_no_published_program(monkeypatch, path):
    text = path.read_text()
    machine = re.search(r"^# machine:\s*(\S+)", text, re.M)
    _same_with_and_without_plans(monkeypatch, text, pfn="# mode: pfn" in text,
                                 machine=machine[1] if machine else "tiny")


def test_a_base_address_register_unbinds_the_plan(monkeypatch):
    """While $lmb is set, LM0 addresses are per PE: the step's plan binds no LM0 operand (its GRF
    ones it does), and binds LM0 again once $lmb is 0."""
    text = ".block b\nlpassa $lm0v $lr8v\nnop\nnop\nladd $lm8v $lr0v $lr16v\nnop\nnop\n.endblock\n" \
           ".call b\nipassa $subpeid $lmb\nnop\nnop\n.call b\n.call b\nzero $lmb\nnop\nnop\n.call b\n.call b\n"
    _same_with_and_without_plans(monkeypatch, text)


def test_offsets_past_the_plans_kept_run_unbound(monkeypatch):
    """A step called with more block offsets than PLANS_PER_STEP runs the later ones unbound."""
    monkeypatch.setattr(executor, "PLANS_PER_STEP", 2)
    got = _run(PROGRAM)
    prog = assemble(PROGRAM)
    emu = Emulator("tiny")
    emu.run(prog)
    emu.run(prog)
    plans = [p for p in prog.blocks["b"].stmts[0].plans.values() if p is not None]
    assert sorted(bool(p.readers) for p in plans) == [False, True, True]   # two offsets' and the general one
    monkeypatch.setattr(executor, "StepPlan", _Unbound)
    want = _run(PROGRAM)
    assert got[1:] == want[1:] and all(np.array_equal(got[0][k], want[0][k]) for k in want[0])


def test_fp32_fma_rounds_as_before_with_specials():
    """fvfma: the float64 sum of the exact product, rounded once to fp32, normalised."""
    emu = Emulator("tiny")
    P = emu.m.n_pe
    rng = np.random.default_rng(5)
    xs, ys, zs = (fp32_values(rng, 4 * P * 2).reshape(4, P, 2) for _ in range(3))
    for c in range(4):
        emu.write_pe("r", 8 + 2 * c, xs[c].view(np.uint64))
        emu.write_pe("r", 16 + 2 * c, ys[c].view(np.uint64))
        emu.write_pe("r", 24 + 2 * c, zs[c].view(np.uint64))
    emu.run(assemble("fvfma $lr8v -$lr16v $lr24v $lr0v\nnop\nnop\n"))
    got = np.stack([emu.read_pe("r", 2 * c)[:, 0] for c in range(4)])
    with np.errstate(all="ignore"):
        x, y, z = (v.view(np.float32).astype(np.float64) for v in (xs, ys ^ np.uint32(0x80000000), zs))
        r = (x * y + z).astype(np.float32)
    assert np.array_equal(got, reference_normalize(r.view(np.uint32), 32).view(np.uint64)[..., 0])


@pytest.mark.parametrize("rop", ["liadd", "iiadd", "siadd", "land", "ior", "sband", "lbor"])
@pytest.mark.parametrize("shape,axis", [((4, 2, 16, 4, 1), 2), ((4, 3, 4, 4, 2), 2), ((3, 16, 8), 1), ((5, 7), 0)])
def test_integer_reductions_lane_by_lane(rop, shape, axis):
    rng = np.random.default_rng(len(shape) * 10 + axis)
    data = rng.integers(0, 1 << 64, shape, dtype=np.uint64)
    w = WIDTH[rop[0]]
    op = rop[1:].replace("band", "and").replace("bor", "or")
    lanes_in = lanes(data, w)
    ufunc = {"iadd": np.add, "and": np.bitwise_and, "or": np.bitwise_or}[op]
    want = pack(ufunc.reduce(lanes_in, axis=axis, dtype=lanes_in.dtype))
    assert np.array_equal(reduce(data, axis, rop), want)


@pytest.mark.parametrize("cycles", [4, 1])
def test_mab_rotation_is_a_roll_within_each_mab(cycles):
    rng = np.random.default_rng(cycles)
    x = rng.integers(0, 1 << 63, (cycles, 64), dtype=np.uint64)
    for shift, sem_shift in ((1, 1), (3, -1)):
        want = np.roll(x.reshape(cycles, -1, 4), sem_shift, axis=2).reshape(cycles, -1)
        assert np.array_equal(_mab_rotate(x, shift), want)
        wide = np.broadcast_to(x[:1], (4, 64))          # a broadcast operand (one long word, all cycles)
        assert np.array_equal(_mab_rotate(wide, shift),
                              np.roll(np.array(wide).reshape(4, -1, 4), sem_shift, axis=2).reshape(4, -1))


def test_t_indirect_words_read_and_write_the_addressed_words():
    """$mt<a>: PE p's word a + T[c, p] (low 32 bits of T's first long word) in each cycle c."""
    emu = Emulator("tiny")
    P = emu.m.n_pe
    rng = np.random.default_rng(3)
    words = rng.integers(0, 1 << 32, (P, 64), dtype=np.uint64).astype(np.uint32)
    for a in range(0, 64, 2):
        emu.write_pe("m", a, ((words[:, a].astype(np.uint64) << np.uint64(32)) | words[:, a + 1])[:, None])
    t = rng.integers(0, 40, (4, P), dtype=np.uint64)
    emu.state.t[:, :, 0] = t | (rng.integers(1, 8, (4, P), dtype=np.uint64) << np.uint64(32))  # high bits ignored
    for c in range(4):
        emu.write_pe("r", 16 + 2 * c, rng.integers(0, 1 << 63, P, dtype=np.uint64))
    emu.run(assemble("ipassa $mt3 $lr0v\nnop\nnop\nipassa $lr16v $mt64\nnop\n"))
    got = np.stack([emu.read_pe("r", 2 * c)[:, 0] for c in range(4)])
    addr = 3 + t.astype(np.int64)
    want = words[np.arange(P)[None, :], addr].astype(np.uint64) << np.uint64(32)
    assert np.array_equal(got >> np.uint64(32), want >> np.uint64(32))
    # the write: cycle c's word of $lr16v (its upper half) to word 64 + T[c, p] of LM0, later cycles last
    src = np.stack([emu.read_pe("r", 16 + 2 * c)[:, 0] >> np.uint64(32) for c in range(4)]).astype(np.uint32)
    lm0 = emu.read_words("m", 0, 128)
    for p in range(P):
        expect = {}
        for c in range(4):
            expect[64 + int(t[c, p])] = src[c, p]
        for a, v in expect.items():
            assert lm0[p, a] == v, (p, a)


FEW_PES = """
lpassa $peid $lr0v
limm l"3" $ls16v
imm i"3" $ls24v
nop
ixor $lr0v $ls0v $omr3
lxor $lr0v $ls16v $omr4
ixor $lr0v $ls24v $omr5
nop
nop
l1bmp $llb0 $llm64v/$imr3
l1bmm $lb32 $lm80v/$imr4
l1bmm4 $llb64 $lln64v/$imr5
l1bmp $lb16 $lm96v/$imr4
l1bmp $llb8 $lln96v/$imr4
lpassa $lr8v $lm200v/$imr3
ipassa $lr16v $lm300v/$imr3
ipassa $lr24v $mt16/$imr3
lpassa $lr32v $mt64/$imr3
nop
nop
"""


@pytest.mark.parametrize("machine", ["tiny", "mncore2"])
def test_stores_to_a_few_pes_write_what_the_whole_merge_writes(monkeypatch, machine):
    """A store under a mask that keeps few PEs (the row plan's l1bmp to one PE of each L1B) writes
    only those PEs' words (Emulator._few): the state a merge over every PE leaves."""
    calls = []
    few = Emulator._few
    monkeypatch.setattr(Emulator, "_few", lambda self, key, keep: calls.append(1) or few(self, key, keep))
    got = _run(FEW_PES, machine=machine, seed=3)
    assert calls
    monkeypatch.setattr(Emulator, "_few", lambda self, key, keep: None)
    want = _run(FEW_PES, machine=machine, seed=3)
    assert got[1:] == want[1:]
    for k in want[0]:
        assert np.array_equal(got[0][k], want[0][k]), k


@pytest.mark.parametrize("machine", ["tiny", "mncore2"])
def test_few_pe_broadcasts_through_the_plan_write_what_the_general_path_writes(monkeypatch, machine):
    """A bound L1BM broadcast under a flag entry (plan._few_broadcast_writer: the kept long words
    taken from L1BM by position) leaves the state of the general path's merge."""
    import emulator.plan as plan
    made = []
    writer = plan._few_broadcast_writer
    monkeypatch.setattr(plan, "_few_broadcast_writer", lambda *a: made.append(1) or writer(*a))
    _same_with_and_without_plans(monkeypatch, FEW_PES, machine=machine, seed=3)
    assert len(made) == 5


# a packed loop's carried fp32 sum (packing.py): cycle-uniform adds into one long word every cycle
# names, each reading the previous one's result through $mauf (asm.alias_forwarding: the row);
# then a sum into the row an ALU result's path views, that path read after it; the MAU path read
# after its row was overwritten; and a sum into LM0 at a block offset
CHAIN = """
.block c
    fvmul $lr0v $lm0v $lr144v
    nop
    fvadd $ls240 $lr144 $ls240
    fvadd $mauf $lr146 $ls240
    fvadd $mauf $lr148 $ls240
    fvadd $mauf $lr150 $ls240
    lpassa $lr8v $ls240v
    fvadd $lr152 $lr154 $ls240
    ladd $aluf $lr16v $ls248v
    lpassa $lr16v $ls240v
    fvadd $mauf $lr152 $ls232
    fvadd $mauf $lr154 $lm40
    nop
    nop
    fvadd $lm40 $ls232 $lm40
.endblock
.loop %i = 0, 3
    .call c m=%i*8
.endloop
"""


@pytest.mark.parametrize("machine", ["tiny", "mncore2"])
def test_cycle_uniform_sums_into_one_long_word_change_no_result(monkeypatch, machine):
    """The cycle-uniform fp32 kernels that store into the one long word every cycle names
    (plan._same_row_kernel) leave the state of the general path, NaN and all (fp32_values)."""
    emu = Emulator(machine)
    prog = assemble(CHAIN)
    emu.run(prog)
    emu.run(prog)
    kinds = {getattr(w, "__qualname__", "").split(".")[0] for st in prog.blocks["c"].stmts
             for p in (st.plans or {}).values() if p is not None for ws in p.writers.values() for w in ws}
    assert "_same_row_kernel" in kinds
    _same_with_and_without_plans(monkeypatch, CHAIN, machine=machine)
