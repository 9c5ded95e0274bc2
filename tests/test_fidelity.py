"""Public MN-Core programs, rewritten in our own words, give the values PFN's material publishes.

tests/fidelity/NAME.vsm runs (header '# mode: strict' or '# mode: pfn', '# machine: ...', default
tiny; a pfn program may say '# breaches: N', what strict mode would fault on) and its 'd get'
output must equal NAME.expected line for line.  tests/fidelity/judge_*/ hold a contest testcase
and answers: answer_accepted*.vsm must be ACCEPTED by 'mncl-emu --judge', answer_rejected*.vsm
rejected with a mismatch.  forms_* files belong to tests/test_fidelity_forms.py.
Provenance of each: tests/fidelity/README.md."""
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from emulator import EmuFault, Emulator, assemble
from emulator.cli import main

HERE = Path(__file__).parent / "fidelity"
PROGRAMS = sorted(p for p in HERE.glob("*.vsm") if not p.name.startswith("forms_"))
JUDGED = sorted((d, a) for d in HERE.glob("judge_*") for a in sorted(d.glob("answer_*.vsm")))


def _header(text: str, key: str, default=None):
    m = re.search(rf"^# {key}:\s*(\S+)", text, re.M)
    return m[1] if m else default


def test_the_collection_is_complete():
    assert len(PROGRAMS) + len(JUDGED) >= 20
    assert all(p.with_suffix(".expected").exists() for p in PROGRAMS)
    readme = (HERE / "README.md").read_text()
    missing = [p.stem for p in PROGRAMS if p.stem not in readme] + [d.name for d in {d for d, _ in JUDGED}
                                                                    if d.name not in readme]
    assert not missing, f"tests/fidelity/README.md gives no provenance for {missing}"


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_program_gives_the_published_dump(path):
    text = path.read_text()
    mode = _header(text, "mode")
    assert mode in ("strict", "pfn"), f"{path.name}: say '# mode: strict' or '# mode: pfn'"
    machine = _header(text, "machine", "tiny")
    emu = Emulator(machine, pfn=mode == "pfn")
    emu.run(assemble(text, str(path)))
    assert emu.dump == path.with_suffix(".expected").read_text().splitlines()
    if mode == "pfn":
        assert emu.breaches == int(_header(text, "breaches", 0)), emu.pfn_report()
        if emu.breaches:                    # it really needs PFN mode: strict faults on it
            with pytest.raises(EmuFault):
                Emulator(machine).run(assemble(text, str(path)))


@pytest.mark.parametrize("case", JUDGED, ids=lambda c: f"{c[0].name}-{c[1].stem}")
def test_judge_verdict(case):
    folder, answer = case
    res = CliRunner().invoke(main, ["--judge", str(folder / "testcase.vsm"), str(answer)])
    if answer.stem.startswith("answer_accepted"):
        assert res.exit_code == 0 and res.output.startswith("ACCEPTED"), res.output
    else:
        assert res.exit_code == 1 and "REJECTED: MISMATCH" in res.output, res.output
