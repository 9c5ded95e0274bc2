"""Bounded time and memory (issue 20, items 10-12): every probe runs in a child process with a
timeout, so a regression (a hang, a process eating memory) shows as a failed test, not a stuck
or dead pytest.

- item 11: the emulator's step and time limits count sequencer loop iterations, and sequencer
  registers are 64-bit signed (an overflow is a fault naming the .set line);
- item 12: one Ctrl-C cancels a long launch and the process exits at once (no second SIGINT);
- item 10: the translator's limits on source size and macro expansion; the CLIs read only
  regular files under a size cap (/dev/zero, FIFOs).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _env(**extra):
    env = dict(os.environ, PYTHONPATH=ROOT, MNCL_MACHINE="tiny")
    env.pop("MNCL_EMU_TIME_LIMIT", None)
    env.update(extra)
    return env


def run_py(code: str, timeout: float = 60, **env) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter; a probe that outlives ``timeout`` fails the test."""
    try:
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                              timeout=timeout, env=_env(**env), cwd=ROOT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the probe ran past {timeout} s (a runaway that no limit stopped)")


def run_cli(args, timeout: float = 60, stdin=None, **env) -> subprocess.CompletedProcess:
    try:
        return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, timeout=timeout,
                              env=_env(**env), cwd=ROOT, input=stdin)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{' '.join(args)} ran past {timeout} s")


# -- item 11: runaway sequencer programs ----------------------------------------------------------

def test_max_steps_stops_an_empty_loop(tmp_path):
    """An empty loop to 2^31 has no PE step; --max-steps counts its iterations."""
    prog = tmp_path / "empty.vsm"
    prog.write_text(".loop %i = 0, 1 << 31\n.endloop\n")
    r = run_cli(["emulator.cli", str(prog), "--machine", "tiny", "--max-steps", "100000"])
    assert r.returncode == 1, r.stderr
    assert "empty.vsm:1: fault: step limit of 100000 reached after 0 PE steps and 100000 sequencer loop " \
           "iterations" in r.stderr


def test_max_steps_is_exact_over_steps_and_iterations():
    """Each PE step and each loop iteration is one unit: N units run, the (N+1)-th faults."""
    from emulator.asm import assemble
    from emulator.errors import EmuFault
    from emulator.executor import Emulator
    prog = assemble(".block b\nnop\n.endblock\n.loop %i = 0, 10\n.call b\n.call b\n.endloop\nnop\nnop", "x.vsm")
    assert Emulator("tiny", max_steps=32).run(prog).steps == 22          # 22 steps + 10 iterations
    with pytest.raises(EmuFault, match="step limit of 31 reached after 21 PE steps and 10 sequencer"):
        Emulator("tiny", max_steps=31).run(prog)
    with pytest.raises(EmuFault, match=r"x.vsm:2: fault: step limit of 5 reached after 3 PE steps and 2 "):
        Emulator("tiny", max_steps=5).run(prog)


def test_time_limit_stops_a_set_only_loop():
    r = run_py("""
        import time
        from emulator.asm import assemble
        from emulator.errors import EmuFault
        from emulator.executor import Emulator
        emu = Emulator("tiny")
        emu.time_limit = 0.5
        prog = assemble(".set %a = 0\\n.loop %i = 0, 1 << 40\\n.set %a = (%a + %i) & 0xffff\\n.endloop\\n", "s.vsm")
        t = time.monotonic()
        try:
            emu.run(prog)
        except EmuFault as e:
            print(f"{time.monotonic() - t:.2f}", e)
    """, timeout=60)
    assert r.returncode == 0, r.stderr
    took, _, msg = r.stdout.partition(" ")
    assert "s.vsm:2: fault: time limit of 0.5 s of emulation reached after 0 PE steps" in msg
    assert float(took) < 5


def test_task_kernel_empty_loop_meets_the_runtime_time_limit():
    """An empty task-kernel loop to 2^31 - 1 (sequencer only) fails the launch at MNCL_EMU_TIME_LIMIT."""
    r = run_py("""
        import numpy as np, mncl as cl
        ctx = cl.create_some_context(); q = cl.CommandQueue(ctx)
        prg = cl.Program(ctx, "__task void spin(DRAM float *y, int n) "
                              "{ int s = 0; for (int i = 0; i < n; i++) { s += i; } }").build()
        k = prg.spin
        k.set_args(cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 256), np.int32(2**31 - 1))
        try:
            cl.enqueue_task(q, k).wait()
        except cl.Error as e:
            print(e)
    """, timeout=90, MNCL_DEVICE="emulator", MNCL_EMU_TIME_LIMIT="1")
    assert r.returncode == 0, r.stderr
    assert "OUT_OF_RESOURCES" in r.stdout and "kernel 'spin'" in r.stdout
    assert "time limit of 1 s of emulation reached" in r.stdout


def test_sequencer_register_overflow_is_a_fault_naming_the_set():
    """`.set %a = %a * %a` squares past 64 bits: a fault at that line, not a growing Python int."""
    from emulator.asm import assemble
    from emulator.errors import EmuFault
    from emulator.executor import Emulator
    prog = assemble(".set %a = 3\n.loop %i = 0, 7\n.set %a = %a * %a\n.endloop\n", "sq.vsm")
    with pytest.raises(EmuFault) as e:
        Emulator("tiny").run(prog)
    assert e.value.line == 3
    assert "'%a * %a' = 3433683820292512484657849089281 overflows a sequencer register (64-bit signed" in str(e.value)


@pytest.mark.parametrize("expr, ok", [("(1 << 62) + ((1 << 62) - 1)", True), ("(1 << 62) + (1 << 62)", False),
                                      ("-(1 << 62) - (1 << 62)", True), ("-(1 << 62) - (1 << 62) - 1", False)])
def test_sequencer_registers_are_64_bit_signed(expr, ok):
    from emulator.asm import assemble
    from emulator.errors import EmuFault
    from emulator.executor import Emulator
    prog = assemble(f".set %a = {expr}\n", "w.vsm")
    if ok:
        Emulator("tiny").run(prog)
    else:
        with pytest.raises(EmuFault, match="w.vsm:1: fault: .* overflows a sequencer register"):
            Emulator("tiny").run(prog)


def test_an_argument_beyond_64_bits_is_refused():
    from emulator.asm import assemble
    from emulator.errors import EmulatorError
    from emulator.executor import Emulator
    with pytest.raises(EmulatorError, match="argument n=18446744073709551616 does not fit a sequencer register"):
        Emulator("tiny").run(assemble(".arg %n\n.set %a = %n\n", "a.vsm"), {"n": 1 << 64})
