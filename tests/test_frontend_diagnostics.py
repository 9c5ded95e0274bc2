"""The malformed-kernel corpus: each tests/diagnostics/NAME.cl fails to build with exactly
the diagnostic in NAME.expected (``file:line:col: error: message``, the source line and the
caret), and the build raises CompileError and nothing else.  An optional NAME.options holds
build options."""
from __future__ import annotations

from pathlib import Path

import pytest

from translator import CompileError, compile_opencl

DIR = Path(__file__).resolve().parent / "diagnostics"
CASES = sorted(p.stem for p in DIR.glob("*.cl"))


def test_corpus_is_big_enough():
    assert len(CASES) >= 20
    for name in CASES:
        assert (DIR / f"{name}.expected").exists(), f"{name}.cl has no .expected file"


@pytest.mark.parametrize("name", CASES)
def test_diagnostic(name):
    src = (DIR / f"{name}.cl").read_text()
    opts = (DIR / f"{name}.options").read_text().strip() if (DIR / f"{name}.options").exists() else ""
    with pytest.raises(CompileError) as ei:
        compile_opencl(src, filename=f"{name}.cl", options=opts)
    expected = (DIR / f"{name}.expected").read_text().rstrip("\n")
    got = ei.value.diagnostics[0].format()
    assert got == expected
    assert ei.value.diagnostics[0].severity == "error"
    assert "internal compiler error" not in got
    # the log carries the same text
    assert expected.splitlines()[0] in ei.value.log
