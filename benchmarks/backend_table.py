"""Static steps, executed steps and emulated cycles of every corpus and public case: the table a
backend change that should not slow code down is checked with (issue 21).

    python benchmarks/backend_table.py run OUT.csv [--machine tiny] [--only NAME ...]
    python benchmarks/backend_table.py compare BEFORE.csv AFTER.csv

``run`` builds and launches, on the emulator device, every case of tests/kernels (default
options) and every case of tests/public, checks each result against the case's numpy
reference, and writes one row per case: static steps (the statements of the launched kernels'
1d and nd builds), steps executed and cycles (summed over the case's launches), or the error.  Run it once per checkout, importing that checkout
(``PYTHONPATH=/path/to/checkout python benchmarks/backend_table.py run before.csv``).

``compare`` prints every case whose figures differ and the totals over the cases both runs
passed, and exits 1 when a case got slower (more static steps or more cycles) or stopped passing.
"""
from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
FIELDS = ("case", "static_steps", "steps", "cycles", "seconds", "error")


def _static_steps(case, kernels, machine) -> int:
    """Statements of the kernels' 1d and nd builds (compile_kernel, assembled): a figure of the
    code alone, not of which variants the runtime happened to build."""
    import translator
    from emulator.asm import assemble
    from emulator.machine import load_machine
    from translator.backend import compile_kernel
    m = load_machine(machine)
    module = translator.compile_opencl(case.source, options=case.options.split(), spmd=True)
    return sum(assemble(compile_kernel(module, k, m, mode).asm).n_statements()
               for k in sorted(kernels) for mode in ("1d", "nd"))


def _device(machine: str):
    """The emulator device for `machine`; checkouts from before mncl.get_device existed only had
    the private helper."""
    import mncl as cl
    if hasattr(cl, "get_device"):
        return cl.get_device("emulator", machine)
    from mncl.context import _emulator_for
    return _emulator_for(machine, cl.get_platforms()[0].get_devices())


def _cases():
    sys.path.insert(0, str(TESTS))
    import test_kernel_corpus as corpus
    from public.cases import PUBLIC
    from public.host import run_launches
    yield from ((name, corpus, None, case) for name, case in sorted(corpus.CASES.items()))
    yield from ((f"public/{name}", corpus, run_launches, case) for name, case in PUBLIC.items())


def run(out: str, machine: str, only: list) -> None:
    import mncl as cl
    dev = _device(machine)
    ctx = cl.Context([dev])
    queue = cl.CommandQueue(ctx)
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        for name, corpus, launches, case in _cases():
            if only and name not in only:
                continue
            row = {"case": name}
            t0 = time.perf_counter()
            try:
                program = cl.Program(ctx, case.source).build(options=case.options)
                initial = case.initial_buffers()
                if launches is None:
                    args, _, outputs = corpus.make_args(cl, ctx, case, initial)
                    extra = {"global_offset": case.global_offset} if case.global_offset else {}
                    events = [getattr(program, case.kernel)(queue, case.global_size, case.local_size, *args,
                                                            **extra)]
                    result = corpus.read_back(cl, queue, outputs, initial)
                else:
                    result, events = launches(cl, ctx, queue, case)
                expected = case.expected(case.initial_buffers())
                flushed = case.expected(case.initial_buffers(), flush_float_denormals=True) \
                    if corpus.flushes_float_denormals(ctx) else {}
                for k, v in result.items():
                    corpus.check(case, k, v, expected[k], "numpy reference", flushed.get(k))
                row.update(steps=sum(ev.stats.steps for ev in events),
                           cycles=round(sum(ev.stats.cycles for ev in events)))
                kernels = {case.kernel} if launches is None else {la.kernel for la in case.launches}
                row["static_steps"] = _static_steps(case, kernels, machine)
            except BaseException as e:          # noqa: BLE001 - a row says what failed
                if isinstance(e, KeyboardInterrupt):
                    raise
                row["error"] = " ".join(str(e).split())[:160] or type(e).__name__
            row["seconds"] = f"{time.perf_counter() - t0:.2f}"
            w.writerow(row)
            f.flush()
            print(f"{name}: {row.get('error') or row['cycles']}", flush=True)


def _read(path):
    with open(path) as f:
        return {r["case"]: r for r in csv.DictReader(f)}


def compare(before: str, after: str) -> int:
    a, b = _read(before), _read(after)
    worse, totals = [], {k: [0, 0] for k in ("static_steps", "steps", "cycles")}
    print("| case | static steps | steps executed | cycles |\n|---|---|---|---|")
    for name in a.keys() | b.keys():
        ra, rb = a.get(name, {}), b.get(name, {})
        if ra.get("error") or rb.get("error") or not ra or not rb:
            if not ra.get("error") and (rb.get("error") or not rb):
                worse.append(name)
            if ra.get("error") != rb.get("error"):
                print(f"| {name} | before: {ra.get('error') or 'ok'} | after: {rb.get('error') or 'ok'} | |")
            continue
        cells = []
        for k in totals:
            x, y = int(ra[k]), int(rb[k])
            totals[k][0] += x
            totals[k][1] += y
            cells.append(f"{x:,}" if x == y else f"{x:,} -> {y:,}")
        if any("->" in c for c in cells):
            print(f"| {name} | " + " | ".join(cells) + " |")
        if int(rb["static_steps"]) > int(ra["static_steps"]) or int(rb["cycles"]) > int(ra["cycles"]):
            worse.append(name)
    print("| **total** | " + " | ".join(f"{x:,} -> {y:,}" for x, y in totals.values()) + " |")
    print(f"{len(a)} cases before, {len(b)} after; slower or failing now: {', '.join(sorted(worse)) or 'none'}")
    return 1 if worse else 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("out")
    r.add_argument("--machine", default="tiny")
    r.add_argument("--only", nargs="*", default=[])
    c = sub.add_parser("compare")
    c.add_argument("before")
    c.add_argument("after")
    args = p.parse_args(argv)
    if args.cmd == "run":
        run(args.out, args.machine, args.only)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
