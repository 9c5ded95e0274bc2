"""A progress bar for long emulations on a terminal: PE steps, emulated cycles, steps per second.

The executor calls a ``Progress`` at each of its limit checks (every ``CHECK_EVERY`` PE steps or
sequencer loop iterations, executor.py), so a run pays nothing per step.  The bar (rich's, on
standard error) appears only once a run has taken ``DELAY`` seconds and only when standard error
is a terminal, and is erased when the run ends: a script's output and a log stay as they were.
``MNCL_PROGRESS=0`` turns it off.
"""
from __future__ import annotations

import os
import sys
import time

DELAY = 1.0          # seconds a run must take before the bar appears
REFRESH = 0.25       # seconds between two updates of its text


class Progress:
    """Call with the emulator at each limit check; ``close()`` when the run ends (fault or not)."""

    def __init__(self, label: str, stream=None):
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.start = time.monotonic()
        self.last = 0.0
        self.bar = None

    def __call__(self, emu) -> None:
        now = time.monotonic()
        if now - self.start < DELAY or now - self.last < REFRESH:
            return
        self.last = now
        if self.bar is None:
            self._open()
        cycles = getattr(getattr(emu, "cycle_model", None), "now", 0)
        rate = emu.steps / (now - self.start)
        self.bar.update(self.task, description=(f"{self.label}: {emu.steps:,} steps, {cycles:,.0f} emulated "
                                                f"cycles, {rate:,.0f} steps/s"))

    def _open(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress as Bar, SpinnerColumn, TextColumn, TimeElapsedColumn
        self.bar = Bar(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                       console=Console(file=self.stream), transient=True)
        self.bar.start()
        self.task = self.bar.add_task(self.label, total=None)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def progress_for(label: str, stream=None) -> Progress | None:
    """A Progress when one would be seen (stream, default standard error, is a terminal and
    MNCL_PROGRESS is not 0), else None."""
    stream = stream if stream is not None else sys.stderr
    if os.environ.get("MNCL_PROGRESS") == "0" or not getattr(stream, "isatty", lambda: False)():
        return None
    import importlib.util
    return Progress(label, stream) if importlib.util.find_spec("rich") else None
