"""MV statements (DRAM / PDM <-> L2BM) on the full machine: where the data lands and what it costs."""
import numpy as np
import pytest

from emulator import EmuFault, Emulator, assemble

RNG = np.random.default_rng(21)


@pytest.fixture(scope="module")
def emu():
    return Emulator("mncore2")


def run(emu, src):
    return emu.run(assemble(src, "mv.vsm"))


def test_mvp_unicast_both_ways_and_per_group(emu):
    x = RNG.integers(0, 2**63, 128, dtype=np.uint64)
    emu.write_dram(2, 1000, x)
    p = run(emu, "mvp/n128i1 $d1000@2 $lc64@2.1\nnop; wait i1\nmvp/n128i2 $lc64@2.1 $d5000@2\nnop; wait i2")
    assert np.array_equal(emu.state.l2bm[2 * 2 + 1, 64:192], x)
    assert np.array_equal(emu.read_dram(2, 5000, 128), x)
    assert p.bytes_by_link == {"dram_l2bm.down": 1024, "dram_l2bm.up": 1024}
    # no group named: every group in parallel, each from its own DRAM
    for g in range(4):
        emu.write_dram(g, 0, np.full(64, g + 10, np.uint64))
    run(emu, "mvp/n64i3 $d0 $lc0@.0\nnop; wait i3")
    assert [int(emu.state.l2bm[g * 2, 0]) for g in range(4)] == [10, 11, 12, 13]


def test_mvb_reaches_every_l2bm_and_mvb2_a_groups_two(emu):
    x = RNG.integers(0, 2**63, 64, dtype=np.uint64)
    emu.write_dram(1, 0, x)
    p = run(emu, "mvb/n64i1 $d0@1 $lc256\nnop; wait i1")
    assert all(np.array_equal(emu.state.l2bm[k, 256:320], x) for k in range(8))
    assert set(p.bytes_by_link) == {"dram_l2bm.broadcast", "group_bus.broadcast"}
    emu.write_dram(3, 64, x[::-1].copy())
    run(emu, "mvb2/n64i2 $d64@3 $lc512\nnop; wait i2")
    assert np.array_equal(emu.state.l2bm[6, 512:576], x[::-1]) and np.array_equal(emu.state.l2bm[7, 512:576], x[::-1])
    assert not emu.state.l2bm[5, 512:576].any()


def test_mvd_splits_over_a_groups_l2bms_and_gathers_back(emu):
    x = RNG.integers(0, 2**63, 256, dtype=np.uint64)
    emu.write_dram(0, 2048, x)
    run(emu, "mvd/n256i1 $d2048@0 $lc1024\nnop; wait i1\nmvd/n256i2 $lc1024 $d4096@0\nnop; wait i2")
    assert np.array_equal(emu.state.l2bm[0, 1024:1152], x[:128])
    assert np.array_equal(emu.state.l2bm[1, 1024:1152], x[128:])
    assert np.array_equal(emu.read_dram(0, 4096, 256), x)


def test_mvr_reduces_every_l2bm_and_mvr2_a_group(emu):
    vals = RNG.standard_normal((8, 64))
    emu.state.l2bm[:, 2048:2112] = vals.view(np.uint64)
    run(emu, "mvrdfadd/n64i1 $lc2048 $d8192@0\nnop; wait i1\nmvr2dmax/n64i2 $lc2048 $d9000\nnop; wait i2")
    assert np.allclose(emu.read_dram(0, 8192, 64, np.float64), vals.sum(0), rtol=1e-14)
    for g in range(4):
        assert np.array_equal(emu.read_dram(g, 9000, 64, np.float64), vals[2 * g:2 * g + 2].max(0))


def test_pdm_transfers_use_the_pdm_link(emu):
    x = RNG.integers(0, 2**63, 64, dtype=np.uint64)
    emu.write_dram(0, 0, x, space="p")
    p = run(emu, "mvp/n64i1 $p0@0 $lc3000@0.0\nnop; wait i1")
    assert np.array_equal(emu.state.l2bm[0, 3000:3064], x)
    assert p.bytes_by_link == {"pdm_l2bm.down": 512}


def test_a_transfer_past_the_end_faults_even_when_wrapping():
    emu = Emulator("tiny", wrap=True)
    with pytest.raises(EmuFault, match="does not wrap across the end"):
        emu.run(assemble("mvp/n128i1 $d0 $lc32704@.0", "mv.vsm"))
