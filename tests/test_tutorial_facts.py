"""The public MN-Core 2 tutorial's worked facts, with our own data where it matters.

Each test runs assembly on the emulator and checks the machine state against
values computed here with numpy (or, for the formats, the dump lines the
public tutorial prints).
"""
import numpy as np
import pytest

from emulator import Emulator, assemble
from emulator.numbers import f32_to_mnhalf, mnhalf_to_f32


def run(src, machine="tiny"):
    emu = Emulator(machine)
    emu.run(assemble(src, "test.vsm"))
    return emu


def lm(emu, sp, word, dtype=np.uint64, n=1):
    """(PE, n) long words of PE memory sp from word address `word`."""
    return emu.read_pe(sp, word, n).view(dtype)


def hexd(x):
    return format(int(np.float64(x).view(np.uint64)), "016X")


def test_subpeid_gives_0_to_3_across_a_mab():
    emu = run("lpassa $subpeid $lm0\nd get $lm0n0c0b0m0 1")
    assert emu.dump == [f"DEBUG-LM0(n0c0b0m0p{p},0):(f:0, i:{{{{0x0,0x0}},{{0x0,0x{p}}}}}, v:0x{p}) "
                        "#d get $lm0n0c0b0m0 1" for p in range(4)]
    assert np.array_equal(lm(emu, "m", 0)[:, 0], np.tile(np.arange(4), emu.m.n_mab))


def test_linc_increments_a_long_word_and_ladd_adds():
    emu = run("""
d set $lm0n0c0b0m0p0 1 00000000FFFFFFFF
linc $lm0 $ln0
nop
nop
linc $ln0 $lm2
nop/2
ladd $ln0 $lm2 $ln0
""")
    assert lm(emu, "n", 0)[0, 0] == 0x1_0000_0000 + 0x1_0000_0001
    assert lm(emu, "n", 0)[1, 0] == 1 + 2      # other PEs started from 0


def test_passa_zero_flags_mask_a_later_write():
    emu = run("""
d set $lm0n0c0b0m0p0 4 l0000000000000000l0000000000000007l0000000000000042l0000000000000000
d set $lm8n0c0b0m0p0 4 l3FF0000000000000l4000000000000000l4008000000000000l4010000000000000
lpassa $lm0v $omr1
maskn 1
lpassa $lm8v $ln0v
mask 0
d get $omr1n0c0b0m0p0 1
""")
    assert [l.split(":")[1].split(" ")[0] for l in emu.dump] == ["Mask{15}", "Mask{0}", "Mask{0}", "Mask{15}"]
    got = lm(emu, "n", 0, np.float64, 4)[0]
    assert got.tolist() == [1.0, 0.0, 0.0, 4.0]


def test_t_indirect_reads_in_the_order_t_gives():
    rng = np.random.default_rng(1)
    data = rng.standard_normal(8)
    order = np.array([5, 2, 7, 0])
    sets = "".join(f"l{hexd(x)}" for x in data)
    tset = "".join(f"l{2 * int(i):016X}" for i in order)
    emu = run(f"""
d set $lm0n0c0b0m0p0 8 {sets}
d set $ltn0c0b0m0p0 4 {tset}
lpassa $lmt $ln0v
""")
    assert np.array_equal(lm(emu, "n", 0, np.float64, 4)[0], data[order])


def _per_pe_sets(reg, word, values):
    """d set lines giving PE p of MAB 0 the long word values[p]."""
    return "\n".join(f"d set ${reg}{word}n0c0b0m0p{p} 1 {v}" for p, v in enumerate(values))


def test_dvmulu_then_dvfmad_yields_per_pe_fp64_products():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal(4), rng.standard_normal(4)
    emu = run(_per_pe_sets("lm", 0, map(hexd, a)) + "\n" + _per_pe_sets("ln", 0, map(hexd, b)) + """
dvmulu $lm0 $ln0 $nowrite
dvfmad $lm0 $ln0 $mauf $ls2
""")
    assert np.array_equal(lm(emu, "s", 2, np.float64)[:4, 0], a * b)


def test_fvmul_and_fvfma_on_the_two_floats_of_a_long_word():
    emu = run("""
d set $lm0n0c0b0m0p0 1 3F80000040A00000
d set $lm0n0c0b0m0p1 1 4000000040C00000
d set $ln0n0c0b0m0p0 1 3F80000041100000
d set $ln0n0c0b0m0p1 1 4040000041300000
d set $lr0n0c0b0m0p0 1 3F8000003F800000
d set $lr0n0c0b0m0p1 1 3F8000003F800000
fvmul $lm0 $ln0 $ls0
d getf $ls0n0c0b0m0p0 1
fvfma $lm0 $ln0 $lr0 $ls0
d getf $ls0n0c0b0m0 1
""")
    assert emu.dump[0] == "DEBUG-GREG1(n0c0b0m0p0,0):(1, 45) (0x3f800000, 0x42340000) #d getf $ls0n0c0b0m0p0 1"
    assert emu.dump[1] == "DEBUG-GREG1(n0c0b0m0p0,0):(2, 46) (0x40000000, 0x42380000) #d getf $ls0n0c0b0m0 1"
    assert emu.dump[2].startswith("DEBUG-GREG1(n0c0b0m0p1,0):(7, 67) (0x40e00000, 0x42860000)")


def test_dvpassar_packs_doubles_into_floats_and_hvpassa_widens_halves():
    rng = np.random.default_rng(3)
    d = rng.standard_normal(4)
    halves = f32_to_mnhalf(rng.standard_normal(4).astype(np.float32))
    emu = run(f"""
d set $lm0n0c0b0m0p0 4 {''.join('l' + hexd(x) for x in d)}
dvpassar $lm0v $n0v
d set $lm8n0c0b0m0p0 1 {''.join(f'{int(h):04X}' for h in halves)}
hvpassa $lm8 $lln8
""")
    got = emu.read_words("n", 0, 4)[0].view(np.float32)
    assert np.array_equal(got, d.astype(np.float32))
    wide = emu.read_words("n", 8, 4)[0].view(np.float32)
    assert np.array_equal(wide, mnhalf_to_f32(halves))


def test_tutorial_dump_of_dvpassar_and_hvpassa():
    emu = run("""
d set $lm0n0c0b0m0p0 4 l3FF0000000000000l4000000000000000l4008000000000000l4010000000000000
dvpassar $lm0v $n0v
d getf $ln0n0c0b0m0p0 2
d set $lm0n0c0b0m0p0 1 3E00428044404540
hvpassa $lm0 $lln0
d getf $ln0n0c0b0m0p0 2
""")
    assert emu.dump == [
        "DEBUG-LM1(n0c0b0m0p0,0):(1, 2) (0x3f800000, 0x40000000) #d getf $ln0n0c0b0m0p0 2",
        "DEBUG-LM1(n0c0b0m0p0,2):(3, 4) (0x40400000, 0x40800000) #d getf $ln0n0c0b0m0p0 2",
        "DEBUG-LM1(n0c0b0m0p0,0):(1, 5) (0x3f800000, 0x40a00000) #d getf $ln0n0c0b0m0p0 2",
        "DEBUG-LM1(n0c0b0m0p0,2):(9, 13) (0x41100000, 0x41500000) #d getf $ln0n0c0b0m0p0 2"]


def test_half_vector_products_with_reduced_output():
    """The tutorial's hvmul / hvfma exercise, written as hv*r with the addend extended from half."""
    a = ["3E00428044404540", "4000430044804580", "4100438044C045C0", "4200440045004600"]
    b = ["3E00444046204720", "410044C046604760", "4280454046A047A0", "438045C046E047E0"]
    ones = ["3E003E003E003E00"] * 4
    emu = run("\n".join([_per_pe_sets("lm", 0, a), _per_pe_sets("ln", 0, b), _per_pe_sets("lr", 0, ones),
                         "hvmulr $lm0 $ln0 $ls0", "d geth $ls0n0c0b0m0 1",
                         "hvfmar $lm0 $ln0 $lr0e $ls0", "d geth $ls0n0c0b0m0 1"]))
    vals = [l.split(":")[1].split(")")[0] + ")" for l in emu.dump]
    assert vals == ["(1, 45, 153, 325)", "(6, 66, 190, 378)", "(15, 91, 231, 435)", "(28, 120, 276, 496)",
                    "(2, 46, 154, 326)", "(7, 67, 191, 379)", "(16, 92, 232, 436)", "(29, 121, 277, 497)"]


@pytest.mark.parametrize("machine", ["mncore2"])
def test_l1bmr_sums_over_the_16_mabs_of_an_l1b_per_pe_position(machine):
    rng = np.random.default_rng(4)
    emu = Emulator(machine)
    x = rng.standard_normal(emu.m.n_pe)
    emu.write_pe("m", 0, x.view(np.uint64)[:, None])
    emu.run(assemble("l1bmrdfadd $lm0 $lb0\nnop\nnop\nl1bmm $lb0 $lm4v/1000", "t.vsm"))
    expect = x.reshape(emu.m.n_l1b, 16, 4).sum(axis=1)                 # l1b, pe position
    got = lm(emu, "m", 4, np.float64)[:, 0].reshape(emu.m.n_l1b, 16, 4)
    assert np.allclose(got, expect[:, None, :], rtol=1e-15, atol=0)
    # /1000 wrote only cycle 0: the words of cycles 1..3 ($lm6, $lm8, $lm10) stay zero
    assert not emu.read_pe("m", 6, 3).any()


def test_dmwrite_dmmul_computes_a_times_b_transposed_transposed():
    rng = np.random.default_rng(5)
    A = rng.integers(-4, 5, (4, 4)).astype(np.float64)   # rows along addresses, columns along PEs
    B = rng.integers(-4, 5, (4, 4)).astype(np.float64)
    sets = []
    for p in range(4):
        sets.append(f"d set $lm0n0c0b0m0p{p} 4 " + "".join(hexd(A[r, p]) for r in range(4)))
        sets.append(f"d set $ln0n0c0b0m0p{p} 4 " + "".join(hexd(B[r, p]) for r in range(4)))
    emu = run("\n".join(sets) + """
dbfn $lm0v $lr0v
dbfn $ln0v $ls0v
dmwrite $lr0v $lx0
dmmulu $lx $ls0v $nowrite
dmfmad $lx $ls0v $mauf $lm8v
""")
    got = lm(emu, "m", 8, np.float64, 4)[:4].T        # rows = address, columns = PE
    assert np.array_equal(got, (A @ B.T).T)


def test_tutorial_matrix_example_values():
    """The 4x4 example printed in the public tutorial, value for value."""
    A = np.array([[-0.0, 0, 2, -1], [0, 4, -1, -4], [-1, 1, -1, -1], [-1, -1, 1, -1]]).T
    B = np.array([[-0.0, 1, -1, -4], [1, -1, 3, 1], [1, 1, 1, -3], [-1, 1, 1, -1]]).T
    sets = [f"d set $lm0n0c0b0m0p{p} 4 " + "".join(hexd(A[p, r]) for r in range(4)) for p in range(4)]
    sets += [f"d set $ln0n0c0b0m0p{p} 4 " + "".join(hexd(B[p, r]) for r in range(4)) for p in range(4)]
    emu = run("\n".join(sets) + "\ndbfn $lm0v $lr0v\ndbfn $ln0v $ls0v\ndmwrite $lr0v $lx0\n"
              "dmmulu $lx $ls0v $nowrite\ndmfmad $lx $ls0v $mauf $lm8v\n")
    got = lm(emu, "m", 8, np.float64, 4)[:4]
    assert got.tolist() == [[2, 5, 5, 3], [21, -11, 15, 7], [6, -6, 2, 2], [2, 2, 2, 2]]
