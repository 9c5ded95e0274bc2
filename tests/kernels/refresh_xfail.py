"""Re-run every corpus case on mncl and rewrite cases.MNCL_XFAIL with the errors seen.

Usage: ``python tests/kernels/refresh_xfail.py`` (from the repository root).
It runs the same host code and checks as tests/test_kernel_corpus.py, ignoring
the current xfail table, and replaces the table between the markers in
cases.py with one line per failing case: the error's type and its most telling
line.  Review the diff before committing; the driver's xfails are strict, so a
stale entry shows up as XPASS.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE.parent.parent)]   # tests/, and the repository root

import test_kernel_corpus as corpus  # noqa: E402
from kernels.cases import CASES  # noqa: E402

BEGIN = "MNCL_XFAIL: dict[str, str] = {"
END = "}\n\nfor _name, _reason in MNCL_XFAIL.items():"


def summarise(error: BaseException) -> str:
    text = str(error)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    telling = [ln for ln in lines if "error:" in ln] or lines[-1:]     # a compiler diagnostic, else the last line
    line = telling[0] if telling else ""
    line = f"{type(error).__name__}: {line}"
    return line if len(line) <= 160 else line[:157] + "..."


def failures() -> dict:
    found = {}
    for name in sorted(CASES):
        case = CASES[name]
        try:
            cl, ctx, queue = corpus.mncl()
            result = corpus.run_with_timeout(corpus.run_case, cl, ctx, queue, case)
            expected = case.expected(case.initial_buffers())
            for out, value in result.items():
                corpus.check(case, out, value, expected[out], "numpy reference")
            reference = corpus.pocl_result(name)
            if reference is not None:
                for out, value in result.items():
                    corpus.check(case, out, value, corpus.same_mask(reference[out], expected[out]), "PoCL output")
        except BaseException as e:  # noqa: BLE001 - every failure is recorded, KeyboardInterrupt aside
            if isinstance(e, KeyboardInterrupt):
                raise
            found[name] = summarise(e)
            print(f"FAIL {name}: {found[name]}", flush=True)
        else:
            print(f"ok   {name}", flush=True)
    return found


def main():
    found = failures()
    path = HERE / "cases.py"
    text = path.read_text()
    start = text.index(BEGIN) + len(BEGIN)
    stop = text.index(END, start)
    body = "".join(f"\n    {name!r}: {reason!r}," for name, reason in sorted(found.items()))
    path.write_text(text[:start] + body + ("\n" if body else "") + text[stop:])
    print(f"{len(found)} of {len(CASES)} cases fail on mncl; table written to {path}")


if __name__ == "__main__":
    main()
