"""Each ISA table row's semantics is the instruction's own function, and each such function has
its row: no second dispatch table on the mnemonic, no dead stub (issue 21)."""
import inspect

from emulator import isa, semantics, transfers


def _implementations():
    """The public functions of semantics.py and transfers.py that take (e, ctx): a row's semantics."""
    found = {}
    for mod in (semantics, transfers):
        for name, fn in vars(mod).items():
            if (inspect.isfunction(fn) and not name.startswith("_") and fn.__module__ == mod.__name__
                    and list(inspect.signature(fn).parameters) == ["e", "ctx"]):
                found[fn] = name
    return found


def test_every_row_has_its_own_function_and_every_function_its_row():
    impls = _implementations()
    rows = [d for d in isa.TABLE if d.sem is not None]
    assert len({d.sem for d in rows}) == len(rows), "two rows share one semantics function"
    assert {d.sem for d in rows} == set(impls), "a semantics function without a row, or a row's function elsewhere"
    for d in rows:     # named for the row: '@' reads '_at', a Python keyword or builtin takes a '_'
        assert impls[d.sem].rstrip("_") == d.name.replace("@", "_at"), (d.name, impls[d.sem])
    assert {d.group for d in isa.TABLE if d.sem is None} <= {isa.NOP, isa.NOFORWARD, isa.WAIT}


def test_no_semantics_dispatches_on_the_mnemonic():
    for mod in (semantics, transfers):
        src = inspect.getsource(mod)
        for form in ("defn.name ==", "defn.name in", "defn.name]", "[e.defn.name"):
            assert form not in src, (mod.__name__, form)
