"""The machine description: presets, TOML files and their validation."""
import pytest

from emulator import Emulator, MachineError, load_machine


def test_mncore2_preset_has_the_published_tree_and_sizes():
    m = load_machine("mncore2")
    assert (m.groups, m.l2b_per_group, m.l1b_per_l2b, m.mab_per_l1b, m.pe_per_mab) == (4, 2, 8, 16, 4)
    assert m.n_pe == 4096 and m.n_mab == 1024
    assert (m.lm_words, m.grf_words, m.l1bm_longs, m.l2bm_longs) == (4096, 512, 8192, 32768)
    assert m.dram_longs * 8 == 4 << 30 and m.pdm_longs * 8 == 4 << 20
    assert m.peak_flops("d", "matrix") == pytest.approx(12.3e12, rel=0.01)     # published: 12 TFLOPS
    assert m.peak_flops("h", "matrix") == pytest.approx(393e12, rel=0.01)      # published: 393 TFLOPS


def test_pe_location_names_the_tree_path():
    m = load_machine("mncore2")
    assert m.pe_location(0) == "n0c0b0m0p0"
    assert m.pe_location(4095) == "n3c1b7m15p3"
    assert m.pe_location(4 * 16 * 8 + 5) == "n0c1b0m1p1"


def test_full_machine_state_fits_the_memory_budget():
    emu = Emulator("mncore2")
    assert emu.state.nbytes() < 256 << 20       # DRAM is lazy: nothing resident yet


@pytest.mark.parametrize("change,msg", [
    (("pe_per_mab = 4", "pe_per_mab = 3"), "pe_per_mab must be 4"),
    (("groups = 1", "groups = 0"), "groups must be positive"),
    (("[links]", "[linkz]"), "missing machine field 'links'"),
    (("clock_hz = 750e6", "clock_hz = 'fast'"), "bad machine field"),
])
def test_bad_machine_files_are_reported(tmp_path, change, msg):
    from importlib import resources
    text = resources.files("emulator").joinpath("presets/tiny.toml").read_text()
    assert change[0] in text
    p = tmp_path / "bad.toml"
    p.write_text(text.replace(*change))
    with pytest.raises(MachineError, match=msg):
        load_machine(p)


def test_unknown_machine_and_bad_toml():
    with pytest.raises(MachineError, match="unknown machine"):
        load_machine("mncore9")
