"""The examples' timings, printed at the end of the run (per example, per backend, per size)."""


def pytest_terminal_summary(terminalreporter):
    from .harness import TIMINGS
    if not TIMINGS:
        return
    terminalreporter.section("PyOpenCL examples: wall seconds per run (first run includes builds)")
    for name, backend, size, dt in TIMINGS:
        terminalreporter.write_line(f"{name:18s} {backend:14s} {size:6s} {dt:8.3f}")
