"""Every code block of README.md and docs/*.md marked runnable runs as written.

A fenced block preceded by the line ``<!-- runnable -->`` is run:

* ``python`` blocks of one file form one script, in order (a later block may use what an
  earlier one defined, as a reader following the page would), run in a new process;
* ``sh`` blocks are shell sessions: each ``$ command`` runs, and the lines after it are its
  expected output, matched in order against what it printed (stdout and stderr as one stream,
  in the order printed); ``...`` as a
  line skips any lines, and ``...`` inside a line matches any text.

Blocks run in a scratch folder that links every top-level entry of the repository, so relative
paths work as in a checkout and files a command writes do not land in it.  The fast suite runs
them on the ``tiny`` machine (``MNCL_MACHINE=tiny``; commands that name ``--machine`` keep
theirs); ``-m slow`` runs them exactly as written, on the default ``mncore2``.
"""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARK = "<!-- runnable -->"
FENCE = re.compile(r"^```(\w*)\s*$")


def blocks(page: pathlib.Path):
    """(language, first line number, text) of each runnable block of page."""
    lines = page.read_text().splitlines()
    out, i = [], 0
    while i < len(lines):
        if lines[i].strip() == MARK:
            m = FENCE.match(lines[i + 1]) if i + 1 < len(lines) else None
            assert m, f"{page.name}:{i + 1}: '{MARK}' must be followed by a fenced code block"
            end = next(j for j in range(i + 2, len(lines)) if lines[j].startswith("```"))
            out.append((m.group(1), i + 3, "\n".join(lines[i + 2:end])))
            i = end
        i += 1
    return out


def sessions(text: str):
    """(command, expected output lines) of each '$ ' line of a shell block."""
    out = []
    for line in text.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
    return out


def line_matches(expected: str, got: str) -> bool:
    parts = [re.escape(p) for p in expected.strip().split("...")]
    return re.fullmatch(".*".join(parts), got.strip()) is not None


def output_matches(expected: list[str], got: list[str]) -> bool:
    """expected's lines in order within got; a '...' line skips any number of lines."""
    def match(e, g):
        if e == len(expected):
            return g == len(got)
        if expected[e].strip() == "...":
            return any(match(e + 1, k) for k in range(g, len(got) + 1))
        return g < len(got) and line_matches(expected[e], got[g]) and match(e + 1, g + 1)
    return match(0, 0)


def scratch(tmp_path: pathlib.Path) -> pathlib.Path:
    for entry in ROOT.iterdir():
        if not entry.name.startswith("."):
            (tmp_path / entry.name).symlink_to(entry)
    return tmp_path


def environment(as_written: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("MNCL_DEVICE", "MNCL_MACHINE")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["PATH"] = os.pathsep.join([str(pathlib.Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONUNBUFFERED"] = "1"          # a command's stdout and stderr lines in the order printed
    if not as_written:
        env["MNCL_MACHINE"] = "tiny"
    return env


CASES = [(page, lang) for page in PAGES for lang in ("python", "sh")
         if any(b[0] == lang for b in blocks(page))]


def run_page(page: pathlib.Path, lang: str, tmp_path, as_written: bool):
    cwd, env = scratch(tmp_path), environment(as_written)
    chosen = [b for b in blocks(page) if b[0] == lang]
    if lang == "python":
        script = "\n".join(f"# {page.name}:{line}\n{text}" for _, line, text in chosen)
        r = subprocess.run([sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True,
                           text=True, timeout=900)
        assert r.returncode == 0, f"{page.name}'s python blocks failed:\n{r.stdout}\n{r.stderr}"
        return
    for _, line, text in chosen:
        for command, expected in sessions(text):
            r = subprocess.run(command, shell=True, cwd=cwd, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=900)
            got = r.stdout.splitlines()
            assert output_matches(expected, got), (
                f"{page.name}:{line}: '$ {command}' printed\n" + "\n".join(got) +
                "\n--- expected ---\n" + "\n".join(expected))


@pytest.mark.parametrize("page, lang", CASES, ids=[f"{p.name}-{lang}" for p, lang in CASES])
def test_runnable_blocks_on_tiny(page, lang, tmp_path):
    run_page(page, lang, tmp_path, as_written=False)


@pytest.mark.slow
@pytest.mark.parametrize("page, lang", CASES, ids=[f"{p.name}-{lang}" for p, lang in CASES])
def test_runnable_blocks_as_written(page, lang, tmp_path):
    run_page(page, lang, tmp_path, as_written=True)


def test_output_matching_rules():
    assert output_matches(["a", "...", "c ... d"], ["a", "x", "y", "c 12 d"])
    assert output_matches(["...", "tiny: ... cycles"], ["tiny: 4 steps, 16 cycles"])
    assert not output_matches(["a", "b"], ["a", "c"])
    assert not output_matches(["a"], ["a", "extra"])
    assert output_matches([], [])
