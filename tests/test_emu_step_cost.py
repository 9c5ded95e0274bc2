"""Issue 22's cheaper step computations leave the bits of the formulas they replace."""
from __future__ import annotations

import numpy as np
import pytest

from emulator import Emulator, assemble
from emulator.semantics import flags_nibble, lanes_le

P = 64
RNG = np.random.default_rng(22)


def _edge_lanes(width: int, n: int) -> np.ndarray:
    """n long words of `width`-bit lanes drawn from the edges (0, 1, -1, the extremes) and at random."""
    t = {32: np.uint32, 16: np.uint16, 64: np.uint64}[width]
    edges = np.array([0, 1, (1 << width) - 1, 1 << (width - 1), (1 << (width - 1)) - 1, 2], dtype=t)
    lanes = np.where(RNG.random(n * 64 // width) < 0.5, RNG.choice(edges, n * 64 // width),
                     RNG.integers(0, 1 << width, n * 64 // width, dtype=np.uint64).astype(t))
    return lanes.view(np.uint64).reshape(P, -1)


@pytest.mark.parametrize("op", ["imax", "imin", "uimax", "uimin", "lmax", "ulmin", "smax", "usmin"])
def test_integer_max_min_and_their_flags_are_the_choice_formulas(op):
    """max / min of integer lanes: the lane np.where(x >= y, x, y) (x <= y) chooses, and the flag
    'x chosen or equal', as the executor computed them before issue 22."""
    width = {"i": 32, "u": 32, "l": 64, "s": 16}[op.lstrip("u")[0]]
    x, y = _edge_lanes(width, 4 * P), _edge_lanes(width, 4 * P)
    y[:, 1] = x[:, 1]                                       # equal lanes in cycle 1
    emu = Emulator("tiny")
    emu.write_pe("r", 0, x)
    emu.write_pe("s", 0, y)
    emu.run(assemble(f"{op} $lr0v $ls0v $ln0v\n{op} $lr0v $ls0v $omr3\nnop\nnop", "t.vsm"))
    signed = not op.startswith("u")
    xs, ys = lanes_le(x.T.copy(), width, signed), lanes_le(y.T.copy(), width, signed)
    take_x = xs >= ys if "max" in op else xs <= ys
    want = np.where(take_x, xs, ys).view(lanes_le(x, width).dtype)
    assert np.array_equal(emu.read_pe("n", 0, 4).T, np.ascontiguousarray(want).view(np.uint64)[..., 0])
    assert np.array_equal(emu.state.omr[3], flags_nibble(take_x | (xs == ys), False))


def assert_same_state(got, want):
    """Two _final_state results agree: every memory and register array, cycles and steps."""
    assert got[1:] == want[1:]
    for k in want[0]:
        assert np.array_equal(got[0][k], want[0][k]), k


def _final_state(text, monkeypatch=None, machine="tiny", wrap=False):
    """State, cycles and steps after two runs (the second binds the plans) of text on an emulator
    whose memories hold random values; with monkeypatch, every plan binds nothing."""
    import emulator.executor as executor
    from test_emu_plan import _fill, _Unbound
    if monkeypatch is not None:
        monkeypatch.setattr(executor, "StepPlan", _Unbound)
    emu = Emulator(machine, wrap=wrap)
    _fill(emu, 5)
    rng = np.random.default_rng(5)
    st = emu.state
    st.l1bm[...] = rng.integers(0, 1 << 63, st.l1bm.shape, dtype=np.uint64)
    st.l2bm[...] = rng.integers(0, 1 << 63, st.l2bm.shape, dtype=np.uint64)
    prog = assemble(text, "t.vsm")
    emu.run(prog)
    prof = emu.run(prog)
    arrays = {"l1bm": st.l1bm, "l2bm": st.l2bm, **{f"mem_{k}": v for k, v in st.mem.items()}}
    return {k: v.copy() for k, v in arrays.items()}, prof.cycles, prof.steps


L2BMD = """
.block b
    l2bmd $lc0 $lb64
    l2bmd $lc64 $lb0; l1bmd $lb128 $lr0v
    l2bmd $lb96 $lc128
    l2bmd $lc480 $lb96
    nop
.endblock
.loop %i = 0, 3
    .call b lc=%i*32 lb=%i*8
.endloop
"""


@pytest.mark.parametrize("wrap", [False, True])
def test_l2bm_distribution_through_the_plan_lands_what_the_general_path_lands(monkeypatch, wrap):
    """l2bmd from L2BM in a bound plan (one copy at the step's end, plan._l2bm_distribute), wrapped
    addresses included, leaves the state of transfers.l2bmd."""
    text = L2BMD.replace("$lc480", "$lc32740") if wrap else L2BMD
    got = _final_state(text, wrap=wrap)
    want = _final_state(text, monkeypatch, wrap=wrap)
    assert_same_state(got, want)


SAME_ROWS = """
.block b
    lpassa $lr8v $ls0
    fvadd $ls104 $lr112 $ls104
    nop
    fvadd $ls104 $lr114 $ls104
    lpassa $llm64v $llr16
    lpassa $lr24v $lr40/$imr3
    nop
.endblock
ixor $peid $ls200v $omr3
nop
.loop %i = 0, 3
    .call b
.endloop
"""


def test_stores_of_one_long_word_in_every_cycle_keep_the_last_cycles_value(monkeypatch):
    """A bound plan's store where all four cycles name one long word (plan._same_writer), l and ll,
    leaves what executor._write's cycle-by-cycle loop leaves."""
    got = _final_state(SAME_ROWS)
    want = _final_state(SAME_ROWS, monkeypatch)
    assert_same_state(got, want)


@pytest.mark.parametrize("op", ["fftoi", "ufftoi"])
def test_fp32_to_int32_is_the_float64_clip_of_the_truncation(op):
    """fftoi / ufftoi: trunc in float64, |x| for u, clipped to the lane's range, NaN -> 0, as the
    executor computed it before issue 22 (through int64)."""
    specials = np.array([0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.0**31, -2.0**31, 2.0**31 - 128, 2.0**32, -2.0**32,
                         4294967040.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 3.4e38, -3.4e38,
                         123456.789, -99999.99], np.float32)
    bits = RNG.integers(0, 1 << 32, 8 * P, dtype=np.uint64).astype(np.uint32).view(np.float32)
    lanes = np.concatenate([np.tile(specials, 8 * P // specials.size + 1)[:8 * P], bits])[-8 * P:]
    lanes[: specials.size] = specials
    x = lanes.view(np.uint64).reshape(P, 4)
    emu = Emulator("tiny")
    emu.write_pe("r", 0, x)
    emu.run(assemble(f"{op} $lr0v $ln0v", "t.vsm"))
    with np.errstate(invalid="ignore"):
        t = np.trunc(x.T.copy().view(np.float32).astype(np.float64))
    if op == "ufftoi":
        t = np.abs(t)
    info = np.iinfo(np.uint32 if op == "ufftoi" else np.int32)
    t = np.clip(t, float(info.min), float(info.max))
    t[np.isnan(t)] = 0.0
    want = t.astype(np.int64).astype(info.dtype).view(np.uint64)
    assert np.array_equal(emu.read_pe("n", 0, 4).T, want)


ACCUMULATE = """
.block b
    iadd $lr0v $ls0v $lr0v
    nop
    ssub $lr8v $lr16v $lr8v
    nop
    ladd $ls16v $lr24v $ls16v
    lpassa $aluf $lr40v
    uiadd $lr48v $lr48v $lr48v
    isub $ls32v $lr56v $lr56v
    lor $lr64v $ls40v $lr64v
    land $ls48v $lr72v $lr80v
    lnot $lr88v $lr88v
    lpassa $ls56v $lr96v
    ixor $ls64v $lr104v $ls64v
    fpassa $peid $lr112v
    nop
    nop
.endblock
.loop %i = 0, 3
    .call b
.endloop
"""


def test_integer_accumulators_added_in_place_at_the_commit(monkeypatch):
    """Integer add / sub of l, i and s lanes, bitwise rows and copies, some whose destination is one of
    their operands' rows, finish at the commit (plan._alu's direct store, in place): the state and
    forwarding of the general path."""
    got = _final_state(ACCUMULATE)
    want = _final_state(ACCUMULATE, monkeypatch)
    assert_same_state(got, want)


SHIFTS = """
.block b
    llsl $lm8 $lr0v $lr16v
    ulsr $lm16 $lr0v $lr24v
    llsr $lm24 $lr8v $ls0v
    ilsl $lr32v $ls8v $ls16v
    ilsr $lr40v $ls24v $lr48v
    uslsr $lr56v $ls32v $lr64v
    nop
.endblock
.loop %i = 0, 3
    .call b
.endloop
"""


def test_shifts_finish_into_the_destination_rows(monkeypatch):
    """lsl / lsr (logical and arithmetic) of l, i and s lanes with a direct store (plan._shift):
    the counts, then the shift, in the destination rows at the commit, as semantics.lsl / lsr."""
    got = _final_state(SHIFTS)
    want = _final_state(SHIFTS, monkeypatch)
    assert_same_state(got, want)


TABLE_FILL = """
lpassa $peid $lr0v
limm l"3" $ls16v
limm l"1" $ls32v
imm i"5" $ls24v
imm i"1" $ls40v
nop
nop
.block b
    lxor $lr0v $ls16v $omr4
    ixor $lr0v $ls24v $omr5
    nop
    nop
    l1bmp $llb0 $llm64v/$imr4
    l1bmp $llb8 $llm80v/$imr4
    l1bmp $lb16 $lm96v/$imr4
    l1bmp $llb24 $lln64v/$imr4
    l1bmp $llb32 $llm112v/$imr5
    l1bmp $lb40 $lm128v/$imr5
    l1bmm $lb32 $lm136v/$imr4
    ladd $ls16v $ls32v $ls16v
    iadd $ls24v $ls40v $ls24v
    nop
    nop
.endblock
.loop %i = 0, 4
    .call b lb=%i*8
.endloop
"""


@pytest.mark.parametrize("machine", ["tiny", "mncore2"])
def test_table_fills_to_a_few_pes_store_both_long_words_at_once(monkeypatch, machine):
    """L1BM broadcasts under a flag entry that keeps one PE, the PE moving from call to call (a table
    fill hands out one long word per PE): the steps of one mask share one gather and one scatter for
    both long words of an ll store (plan._fused_few), and leave the state, cycles and steps of the
    parts stored one by one and of the general path."""
    import emulator.plan as plan
    fused = []
    fuse = plan._fused_few
    monkeypatch.setattr(plan, "_fused_few", lambda *a: (lambda r: fused.append(r) or r)(fuse(*a)))
    got = _final_state(TABLE_FILL, machine=machine)
    assert any(r is not None and r[2] is None for r in fused)          # every bit kept
    assert any(r is not None and r[2] is not None for r in fused)      # some bits kept
    assert any(r is not None and r[0].size > r[1][:1].size and len(set(r[1].tolist())) == r[1].size
               for r in fused)
    monkeypatch.setattr(plan, "_fused_few", lambda *a: None)
    parts = _final_state(TABLE_FILL, machine=machine)
    want = _final_state(TABLE_FILL, monkeypatch, machine=machine)
    for other in (parts, want):
        assert_same_state(got, other)


T_INDIRECT = """
ixor $peid $ls200v $omr3
nop
.block b
    ipassa $mt4 $ls64v
    lpassa $lmt8 $ls80v
    lpassa $llmt16 $llr96v
    ipassa $ls64v $mt40
    lpassa $lr8v $lmt48/$imr3
    nop
    nop
.endblock
.loop %i = 0, 3
    .call b m=%i*16
.endloop
"""


@pytest.mark.parametrize("machine", ["tiny", "mncore2"])
def test_t_indirect_reads_take_the_flat_index(monkeypatch, machine):
    """T-indirect reads (words, long words, pairs) in native.t_read's compiled pass, and a masked
    T-indirect store by ndarray.take on the memory's flat view (executor._gather): the state,
    cycles and steps of plain numpy indexing."""
    import emulator.executor as executor
    from emulator import native
    reads, flat = [], []
    t_read, gather = native.t_read, executor._gather
    monkeypatch.setattr(native, "t_read", lambda *a: reads.append(1) or t_read(*a))
    monkeypatch.setattr(executor, "_gather", lambda m, at: flat.append(m.ndim == 1) or gather(m, at))
    got = _final_state(T_INDIRECT, machine=machine)
    assert len(reads) == 2 * 3 * 3 and flat.count(True) >= 3       # (two runs: _final_state)
    monkeypatch.setattr(native, "t_read", lambda *a: None)
    monkeypatch.setattr(executor, "_gather", lambda m, at: m[at])
    want = _final_state(T_INDIRECT, machine=machine)
    assert_same_state(got, want)


def test_t_indirect_read_outside_the_memory_is_named():
    """An address past the end: the compiled read reads nothing and the numpy path faults, naming
    the word address and the memory."""
    from emulator import EmuFault, Emulator, assemble
    emu = Emulator("tiny")
    emu.write_pe("r", 0, np.full((emu.m.n_pe, 4), 0xFFFFF, np.uint64))
    with pytest.raises(EmuFault, match=r"word address \d+ is outside LM0"):
        emu.run(assemble("lpassa $lr0v $t\nnop\nnop\nlpassa $lmt8 $ls80v\n", "t.vsm"))


@pytest.mark.parametrize("msb_first", [True, False])
def test_two_lane_flag_nibbles_are_the_per_lane_definition(msb_first):
    """flags_nibble of two lanes a long word (i / f precision: 2 bits a lane), worked out by shifts of
    the lanes' bytes as one uint16, for contiguous, reversed and strided flags: the nibble the
    per-lane definition (semantics._flags_nibble_general) gives."""
    from emulator.semantics import _flags_nibble_general
    rng = np.random.default_rng(11)
    f = rng.random((4, 96, 2)) < 0.5
    for v in (f, f[..., ::-1], f[:, ::3], np.ascontiguousarray(f.transpose(1, 0, 2)).transpose(1, 0, 2)):
        got = flags_nibble(v, msb_first)
        want = _flags_nibble_general(v, msb_first)
        assert got.dtype == np.uint8 and np.array_equal(got, want)
    assert sorted(set(flags_nibble(f, msb_first).reshape(-1).tolist())) == [0, 3, 12, 15]


@pytest.mark.parametrize("text, message", [
    (".set %a = %b + 1", "register %b is not set"),
    (".set %a = 4 / (%n - 3)", "division by zero in '4 / (%n - 3)'"),
    (".if %b > 0\n    nop\n.endif", "register %b is not set"),
    (".if 4 % (%n - 3)\n    nop\n.endif", "division by zero in '4 % (%n - 3)'"),
    (".call b m=%b*2", "register %b is not set"),
    (".call b m=8/(%n-3)", "division by zero in '8/(%n-3)'"),
])
def test_sequencer_expressions_fault_at_their_statement(text, message):
    """The sequencer runs a .set's, an .if's and a .call offset's compiled code itself; an unset
    register or a division by zero still faults with the statement's line and text (Emulator._eval)."""
    from emulator.errors import EmuFault
    prog = assemble(".block b\n    nop\n.endblock\n.set %n = 3\n" + text + "\n", "t.vsm")
    with pytest.raises(EmuFault) as err:
        Emulator("tiny").run(prog)
    assert message in str(err.value) and "t.vsm:5" in str(err.value)
