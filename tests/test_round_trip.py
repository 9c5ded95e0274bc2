"""DRAM -> L2BM -> L1BM -> every PE's LM0 -> back to another DRAM buffer, on the full machine."""
import numpy as np

from emulator import Emulator, assemble

ROUND_TRIP = """
# down: each group's 4096 long words over its two L2BMs, then 8 l2bmd steps, then one l1bmd
.block l2_down
l2bmd $lc0 $lb0
.endblock
.block l2_up
l2bmd $lb512 $lc8192
.endblock

mvd/n4096i1 $d0 $lc0
nop; wait i1
.loop %k = 0, 8
.call l2_down lc=%k*256 lb=%k*32
.endloop
nop
nop
l1bmd $lb0 $lm0v
nop
nop
l1bmd $lm0v $lb512
nop
nop
.loop %k = 0, 8
.call l2_up lc=%k*256 lb=%k*32
.endloop
nop
nop
mvd/n4096i2 $lc8192 $d8192
nop; wait i2
"""


def expected_lm0(src, m):
    """Which source long word each PE holds at each cycle, from the documented layouts."""
    out = np.zeros((m.n_pe, 4), dtype=np.uint64)
    per_l2b = 4096 // m.l2b_per_group
    for g in range(m.groups):
        for t in range(4096):
            j, u = divmod(t, per_l2b)
            k, r = divmod(u, 256)                 # l2bmd step k moves lc[256k : 256k+256]
            c, rest = divmod(r, 8 * m.l1b_per_l2b)
            i, jj = divmod(rest, 8)               # L1B i gets lb[32k + 8c + jj]
            v = 32 * k + 8 * c + jj
            c2, pe = divmod(v, m.pe_per_l1b)      # l1bmd: PE pe gets lb[64c + pe] at cycle c
            l1b = (g * m.l2b_per_group + j) * m.l1b_per_l2b + i
            out[l1b * m.pe_per_l1b + pe, c2] = src[g][t]
    return out


def test_round_trip_on_mncore2_checks_every_value_and_byte_count():
    emu = Emulator("mncore2")
    m = emu.m
    rng = np.random.default_rng(7)
    src = [rng.integers(0, 2**63, 4096, dtype=np.uint64) for _ in range(m.groups)]
    for g in range(m.groups):
        emu.write_dram(g, 0, src[g])
    prof = emu.run(assemble(ROUND_TRIP, "round_trip.vsm"))
    # every PE's LM0 holds its documented share
    assert np.array_equal(emu.read_pe("m", 0, 4), expected_lm0(src, m))
    # and it all came back, in order, to the second buffer
    for g in range(m.groups):
        assert np.array_equal(emu.read_dram(g, 8192, 4096), src[g])
    moved = m.groups * 4096 * 8
    assert prof.bytes_by_link == {
        "dram_l2bm.down": moved, "dram_l2bm.up": moved,
        "l1bm_pe.down": moved, "l1bm_pe.up": moved,
        "l2bm_l1bm.down": moved, "l2bm_l1bm.up": moved,
    }
    s = prof.summary()
    assert s["dram_bytes"] == 2 * moved
    assert s["stall_cycles"]["wait i1 (down via dram_l2bm)"] > 0
