"""Every instruction row has semantics, a cost, documentation and an example that runs."""
import pytest

from emulator import Emulator, assemble, isa
from emulator.docgen import main as docgen_main


@pytest.mark.parametrize("row", isa.TABLE, ids=lambda d: d.name)
def test_row_is_complete_and_its_example_runs(row):
    assert row.cost and row.doc and row.example
    assert row.sem is not None or row.group in (isa.NOP, isa.NOFORWARD, isa.WAIT)
    prog = assemble(row.example, f"{row.name}.vsm")
    Emulator("tiny").run(prog)


def test_opcode_patterns_do_not_overlap():
    """Each example's opcode is claimed by its own row only (Spike checks its encodings the same way)."""
    for row in isa.TABLE:
        for line in row.example.splitlines():
            for expr in line.split(";"):
                op = expr.split()[0]
                owners = [d.name for d in isa.TABLE if d.regex.match(op)]
                if row.name in owners:
                    assert owners == [row.name], (op, owners)


def test_docs_table_is_current():
    assert docgen_main(["--check"]) == 0
