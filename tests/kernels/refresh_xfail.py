"""Re-run every corpus case on mncl and rewrite xfail-mncl-<device>.txt with the errors seen.

Usage: ``python tests/kernels/refresh_xfail.py`` from the repository root
(``MNCL_CORPUS_DEVICE=emulator`` for another device).  It runs the same host
code and checks as tests/test_kernel_corpus.py, ignoring the current table,
and writes one line per failing test id: the error's type and its most
telling line.  Review the diff before committing; the driver's xfails are strict, so a
stale entry shows up as XPASS.
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE.parent.parent)]   # tests/, and the repository root

import pytest  # noqa: E402
import test_kernel_corpus as corpus  # noqa: E402
from kernels.spec import write_xfails  # noqa: E402



def summarise(error: BaseException) -> str:
    text = str(error)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    telling = [ln for ln in lines if "error:" in ln or "fault:" in ln] or lines[-1:]   # a diagnostic or fault, else the last line
    line = telling[0] if telling else ""
    line = line.split("faulted on the emulator: ", 1)[-1]        # an emulator fault: from its place on
    line = f"{type(error).__name__}: {line}"
    return line if len(line) <= 160 else line[:157] + "..."


def failures() -> dict:
    found = {}
    runs = [(t, corpus.run_and_check_mncl) for t in corpus.mncl_ids()]
    runs += [(t, corpus.run_and_check_random) for t in corpus.random_ids()]
    for test_id, run in runs:
        try:
            run(test_id)
        except pytest.skip.Exception as e:
            print(f"skip {test_id}: {e}", flush=True)
        except (Exception, pytest.fail.Exception) as e:  # noqa: BLE001 - every failure (and timeout) is recorded
            found[test_id] = summarise(e)
            print(f"FAIL {test_id}: {found[test_id]}", flush=True)
        else:
            print(f"ok   {test_id}", flush=True)
    return found


def main():
    found = failures()
    path = write_xfails(corpus.CORPUS_DEVICE, found)
    print(f"{len(found)} tests fail on mncl '{corpus.CORPUS_DEVICE}'; written to {path}")


if __name__ == "__main__":
    main()
