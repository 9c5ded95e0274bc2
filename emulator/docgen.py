"""Render the instruction table into docs/isa.md, between its table markers.

    python -m emulator.docgen            # rewrite the section in docs/isa.md
    python -m emulator.docgen --check    # exit 1 if it is out of date (the tests do this)
"""
from __future__ import annotations

import sys
from pathlib import Path

from .isa import TABLE

BEGIN, END = "<!-- instruction-table:begin -->", "<!-- instruction-table:end -->"


def render() -> str:
    rows = ["| instruction | unit group | precisions | sources -> destination | semantics | cost | example |",
            "|---|---|---|---|---|---|---|"]
    for d in TABLE:
        ops = ", ".join(d.srcs) + (f" -> {d.dst}" if d.dst else "")
        ex = d.example.replace("\n", "; then ").replace("|", "\\|")
        rows.append(f"| `{d.name}` | {d.group} | {d.precs or '-'} | {ops or '-'} | "
                    f"{d.doc.replace('|', '/')}{'' if d.flags else ' (no flags)'} | {d.cost} | `{ex}` |")
    return "\n".join(rows)


def splice(text: str) -> str:
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\n{render()}\n{END}{tail}"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    path = Path(__file__).resolve().parent.parent / "docs" / "isa.md"
    text = path.read_text()
    new = splice(text)
    if "--check" in argv:
        if new != text:
            print(f"{path} is out of date: run python -m emulator.docgen", file=sys.stderr)
            return 1
        return 0
    path.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
