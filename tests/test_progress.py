"""Long emulations show a progress bar on a terminal, and nothing anywhere else."""
import io

import numpy as np

import mncl as cl
from emulator import Emulator, assemble, progress

LOOP = ".loop %i = 0, 2000\n    nop\n.endloop\n"      # 2,000 steps: several limit checks


class Terminal(io.StringIO):
    def isatty(self):
        return True


def run_loop(label):
    """LOOP on tiny with a progress bar on a pretend terminal: what the terminal got."""
    term = Terminal()
    emu = Emulator("tiny")
    emu.progress = progress.progress_for(label, term)
    emu.run(assemble(LOOP, "loop.vsm"))
    emu.progress.close()
    return term.getvalue()


def test_bar_on_a_terminal_after_the_delay(monkeypatch):
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "REFRESH", 0.0)
    shown = run_loop("loop.vsm on tiny")
    assert "loop.vsm on tiny:" in shown and "steps/s" in shown


def test_silent_off_a_terminal_or_when_turned_off(monkeypatch):
    assert progress.progress_for("x", io.StringIO()) is None
    monkeypatch.setenv("MNCL_PROGRESS", "0")
    assert progress.progress_for("x", Terminal()) is None


def test_no_bar_for_short_runs(monkeypatch):
    monkeypatch.setattr(progress, "REFRESH", 0.0)
    assert run_loop("loop.vsm") == ""


def test_a_launch_on_the_emulator_device_shows_it(monkeypatch):
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "REFRESH", 0.0)
    term = Terminal()
    monkeypatch.setattr("sys.stderr", term)
    ctx = cl.Context([cl.get_device(machine="tiny")])
    q = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, """__kernel void k(__global float *a, int n)
        { float s = 0; for (int j = 0; j < n; j++) s += a[j]; a[get_global_id(0)] = s; }""").build()
    a = np.ones(64, np.float32)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
    prg.k(q, (64,), None, buf, np.int32(64)).wait()
    assert "k on tiny:" in term.getvalue()
