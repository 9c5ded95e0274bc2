"""ALU, MAU and transfer semantics on every PE of `tiny`, against numpy."""
import numpy as np
import pytest

from emulator import Emulator, assemble
from emulator.numbers import f32_to_mnhalf, mnhalf_to_f32

RNG = np.random.default_rng(11)


def machine_with(x, y):
    """tiny with long words x at $lr0.. and y at $ls0.. of every PE (4 cycles: (P, 4) arrays)."""
    emu = Emulator("tiny")
    emu.write_pe("r", 0, x)
    emu.write_pe("s", 0, y)
    return emu


def run_one(line, x, y):
    emu = machine_with(x, y)
    emu.run(assemble(line, "t.vsm"))
    return emu


def rand_u64(shape):
    return RNG.integers(0, 2**64, shape, dtype=np.uint64)


P = 64


@pytest.mark.parametrize("op,fn", [
    ("ladd", lambda a, b: a + b), ("lsub", lambda a, b: a - b), ("land", np.bitwise_and),
    ("lor", np.bitwise_or), ("lxor", np.bitwise_xor),
    ("llsl", lambda a, b: a << (b & np.uint64(63))), ("ulsr", lambda a, b: a >> (b & np.uint64(63))),
    ("llsr", lambda a, b: (a.view(np.int64) >> (b & np.uint64(63)).astype(np.int64)).view(np.uint64)),
    ("ulmax", np.maximum), ("lmin", lambda a, b: np.minimum(a.view(np.int64), b.view(np.int64)).view(np.uint64)),
])
def test_int64_binary_ops(op, fn):
    x, y = rand_u64((P, 4)), rand_u64((P, 4))
    emu = run_one(f"{op} $lr0v $ls0v $ln0v", x, y)
    with np.errstate(over="ignore"):
        assert np.array_equal(emu.read_pe("n", 0, 4), fn(x, y))


def test_int32_lanes_add_independently_and_keep_the_second_long_word():
    x, y = rand_u64((P, 4)), rand_u64((P, 4))
    emu = run_one("iadd $lr0v $ls0v $ln0v", x, y)
    got = emu.read_pe("n", 0, 4).view(np.uint32)
    with np.errstate(over="ignore"):
        assert np.array_equal(got, x.view(np.uint32) + y.view(np.uint32))


def test_add_flags_mark_non_negative_results_per_lane():
    x = np.array([1, -5, 7, -1], dtype=np.int64).view(np.uint64)
    y = np.array([1, 2, -9, 1], dtype=np.int64).view(np.uint64)
    emu = run_one("ladd $lr0v $ls0v $omr3", np.tile(x, (P, 1)), np.tile(y, (P, 1)))
    assert emu.state.omr[3, :, 0].tolist() == [15, 0, 0, 15]
    x32 = np.array([[0x00000001FFFFFFF0]], dtype=np.uint64)    # lanes (1, -16)
    emu = run_one("iinc $lr0 $omr2", np.tile(x32, (P, 4)), np.zeros((P, 4), np.uint64))
    assert emu.state.omr[2, :, 0].tolist() == [0b1100] * 4


def test_float_max_min_and_relu():
    x = RNG.standard_normal((P, 4))
    y = RNG.standard_normal((P, 4))
    emu = run_one("dmax $lr0v $ls0v $ln0v; dvadd $lr0v $ls0v $lm0v", x.view(np.uint64), y.view(np.uint64))
    assert np.array_equal(emu.read_pe("n", 0, 4).view(np.float64), np.maximum(x, y))
    assert np.array_equal(emu.read_pe("m", 0, 4).view(np.float64), x + y)
    emu = run_one("drelu $lr0v $ls0v $ln0v", x.view(np.uint64), y.view(np.uint64))
    want = np.where(x >= 0, y, -0.0)
    got = emu.read_pe("n", 0, 4).view(np.float64)
    assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want))


def test_ftoi_truncates_and_clips_and_itof_rounds():
    x = np.array([2.7, -2.7, 1e30, -1e30]).reshape(1, 4).repeat(P, 0)
    emu = run_one("dftoi $lr0v $ln0v", x.view(np.uint64), x.view(np.uint64))
    assert emu.read_pe("n", 0, 4)[0].view(np.int64).tolist() == [2, -2, 2**63 - 1, -2**63]
    i = np.array([3, -7, 2**53 + 1, 0], dtype=np.int64).reshape(1, 4).repeat(P, 0)
    emu = run_one("ditof $lr0v $ln0v", i.view(np.uint64), i.view(np.uint64))
    assert emu.read_pe("n", 0, 4)[0].view(np.float64).tolist() == [3.0, -7.0, float(2**53), 0.0]


def test_fp32_fma_matches_numpy_rounding():
    a, b, c = (RNG.standard_normal((P, 4, 2)).astype(np.float32) for _ in range(3))
    pack = lambda f: np.ascontiguousarray(f[..., ::-1]).view(np.uint64)[..., 0]
    emu = machine_with(pack(a), pack(b))
    emu.write_pe("m", 16, pack(c))
    emu.run(assemble("fvfma $lr0v $ls0v $lm16v $ln0v", "t.vsm"))
    got = emu.read_pe("n", 0, 4).view(np.float32).reshape(P, 4, 2)[..., ::-1]
    want = (a.astype(np.float64) * b + c).astype(np.float32)
    assert np.array_equal(got, want)


def test_half_fma_accumulates_in_fp32():
    a = f32_to_mnhalf(RNG.standard_normal((P, 4, 4)).astype(np.float32))
    b = f32_to_mnhalf(RNG.standard_normal((P, 4, 4)).astype(np.float32))
    pk = lambda h: np.ascontiguousarray(h[..., ::-1]).view(np.uint64)[..., 0]
    emu = machine_with(pk(a), pk(b))
    emu.run(assemble("hvmul $lr0v $ls0v $lln0v", "t.vsm"))
    got = emu.read_pe("n", 0, 8).view(np.float32).reshape(P, 4, 2, 2)[..., ::-1].reshape(P, 4, 4)
    want = (mnhalf_to_f32(a).astype(np.float64) * mnhalf_to_f32(b)).astype(np.float32)
    assert np.array_equal(got, want)


def test_msl_rotates_within_each_mab():
    x = np.arange(P * 4, dtype=np.uint64).reshape(P, 4)
    emu = run_one("msl $lr0v $ln0v\nmsr $lr0v $ls8v", x, x)
    got = emu.read_pe("n", 0, 4).reshape(-1, 4, 4)
    assert np.array_equal(got, np.roll(x.reshape(-1, 4, 4), 1, axis=1))
    assert np.array_equal(emu.read_pe("s", 8, 4).reshape(-1, 4, 4), np.roll(x.reshape(-1, 4, 4), -1, axis=1))


def test_masked_write_with_flag_register_keeps_unflagged_lanes():
    x = np.array([0, 5, 0, 9], dtype=np.uint64).reshape(1, 4).repeat(P, 0)
    y = rand_u64((P, 4))
    emu = run_one("lpassa $lr0v $omr1\nlpassa $ls0v $ln0v/$imr1", x, y)
    got = emu.read_pe("n", 0, 4)
    assert np.array_equal(got[:, [0, 2]], y[:, [0, 2]]) and not got[:, [1, 3]].any()


@pytest.mark.parametrize("form,layout", [
    ("l1bmp", lambda lb, m: np.broadcast_to(lb[:, None, :4], (lb.shape[0], 4 * m, 4))),
    ("l1bmm", lambda lb, m: np.tile(lb[:, :16].reshape(-1, 4, 4).transpose(0, 2, 1), (1, m, 1))),
    ("l1bmd", lambda lb, m: lb[:, :16 * m].reshape(-1, 4, 4 * m).transpose(0, 2, 1)),
])
def test_l1bm_down_layouts(form, layout):
    emu = Emulator("tiny")
    lb = rand_u64(emu.state.l1bm.shape)
    emu.state.l1bm[:] = lb
    emu.run(assemble(f"{form} $lb0 $lr0v", "t.vsm"))
    want = layout(lb, emu.m.mab_per_l1b).reshape(emu.m.n_pe, 4)
    assert np.array_equal(emu.read_pe("r", 0, 4), want)


def test_l2bm_broadcast_distribute_and_reduce():
    emu = Emulator("tiny")
    lc = rand_u64(emu.state.l2bm.shape)
    emu.state.l2bm[:] = lc
    emu.run(assemble("l2bmb $lc0 $lb0\nl2bmd $lc64 $lb64\nnop\nnop\nl2bmrliadd $lb0 $lc4096", "t.vsm"))
    n1 = emu.m.l1b_per_l2b
    lb = emu.state.l1bm.reshape(emu.m.n_l2b, n1, -1)
    assert np.array_equal(lb[:, :, :64], np.broadcast_to(lc[:, None, :64], (emu.m.n_l2b, n1, 64)))
    for i in range(n1):
        want = np.concatenate([lc[:, 64 + 8 * n1 * c + 8 * i: 64 + 8 * n1 * c + 8 * i + 8] for c in range(4)], 1)
        assert np.array_equal(lb[:, i, 64:96], want)
    with np.errstate(over="ignore"):
        assert np.array_equal(emu.state.l2bm[:, 4096:4160], lc[:, :64] * np.uint64(n1))


def test_expressions_of_one_step_read_the_state_before_it():
    """A pass-through read and its flags are not affected by another expression's write in the same step."""
    emu = Emulator("tiny")
    x = rand_u64((P, 4))
    x[:, [1, 3]] = 0
    ones = np.full((P, 4), 0x3F8000003F800000, dtype=np.uint64)          # 1.0f in both lanes
    emu.write_pe("m", 0, x)
    emu.write_pe("n", 8, ones)
    emu.run(assemble("lpassa $lm0v $lr0v; fvadd $ln8v $ln8v $lm0v", "t.vsm"))
    assert np.array_equal(emu.read_pe("r", 0, 4), x)                 # passa saw LM0 before fvadd wrote it
    emu.write_pe("m", 0, x)
    emu.run(assemble("lpassa $lm0v $omr1; fvadd $ln8v $ln8v $lm0v", "t.vsm"))
    assert emu.state.omr[1].tolist() == [[15 if c in (1, 3) else 0] * P for c in range(4)]   # flags of the old LM0
    assert (emu.read_pe("m", 0, 4) == 0x4000000040000000).all()       # and LM0 now holds 2.0f


def test_forwarding_paths_take_the_right_unit_results():
    """An up-transfer in the step produces no $lbf value; the ALU result still reaches $aluf."""
    emu = Emulator("tiny")
    x = rand_u64((P, 4))
    emu.write_pe("r", 0, x)
    emu.run(assemble("l1bmm@0 $lr0v $lb0; linc $lr8v $ls0v\nlpassa $aluf $ln0v; l1bmp $lb64 $ls8v\n"
                     "lpassa $lbf $ln8v", "t.vsm"))
    with np.errstate(over="ignore"):
        assert np.array_equal(emu.read_pe("n", 0, 4), np.zeros((P, 4), np.uint64) + np.uint64(1))
    assert not emu.read_pe("n", 8, 4).any()      # $lbf: the l1bmp of zeros, not the ALU's value


def test_masked_writes_of_one_address_land_cycle_by_cycle():
    """$lr0 (no stride) names one long word in all 4 cycles: the last enabled cycle's value stays."""
    emu = Emulator("tiny")
    x = rand_u64((P, 4))
    flags = np.zeros((P, 4), np.uint64)
    flags[:, 1] = 1                       # only cycle 1 non-zero -> its flag (passa: zero) is clear
    emu.write_pe("s", 0, x)
    emu.write_pe("s", 8, flags)
    emu.run(assemble("lpassa $ls8v $omr1\nlpassa $ls0v $lr0/$imr1", "t.vsm"))
    # cycles 0, 2, 3 are enabled (their flag value was zero): cycle 3's value lands last
    assert np.array_equal(emu.read_pe("r", 0)[:, 0], x[:, 3])
    only1 = np.ones((P, 4), np.uint64)
    only1[:, 1] = 0                       # only cycle 1 zero -> only cycle 1 enabled
    emu.write_pe("s", 16, only1)
    emu.run(assemble("lpassa $ls16v $omr2\nlpassa $ls0v $lr0/$imr2", "t.vsm"))
    assert np.array_equal(emu.read_pe("r", 0)[:, 0], x[:, 1])


def test_masked_t_indirect_store_keeps_the_unmasked_cycles_write_when_cycles_share_an_address():
    """All four cycles name LM0 word 5; only cycle 0 is unmasked: its value must land (a vectorised
    read-modify-write of the masked-off cycles must not put back the old word)."""
    emu = Emulator("tiny")
    emu.run(assemble("""
.block b
    imm 5 $t
    imm 0xAAAA $lr8v
    imm -1 $lr0/1000
    zero $lr2
    zero $lr4
    zero $lr6
    nop
    inot $lr0v $omr1
    nop
    ipassa $lr8v $mt0/$imr1
    nop
    nop
    nop
.endblock
.call b
""", "t.vsm"))
    st = emu._state if hasattr(emu, "_state") else emu.state
    assert int(st.mem32["m"][2, 0, 0]) == 0xAAAA      # word 5: the low half of long word 2
