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

import numpy as np
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


# -- item 12: Ctrl-C during a long launch -----------------------------------------------------------

_LONG_LAUNCH = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)    # a shell may start us with SIGINT ignored
import numpy as np, mncl as cl
ctx = cl.create_some_context(); q = cl.CommandQueue(ctx)
prg = cl.Program(ctx, "__kernel void spin(__global float *y, int n) { int i = get_global_id(0); "
                      "float a = y[i]; for (int k = 0; k < n; k++) a = a * 0.999f + 1.0f; y[i] = a; }").build()
y = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 256)
events = [prg.spin(q, (64,), None, y, np.int32(10**8)) for _ in range(3)]     # minutes each
print("started", flush=True)
"""


def _interrupt(code: str, wait_s: float = 1.0):
    """Start ``code``, send one SIGINT once it prints 'started', return (exit code, seconds to exit,
    stdout after 'started', stderr)."""
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=_env(MNCL_DEVICE="emulator"), cwd=ROOT)
    try:
        line = p.stdout.readline()
        assert line.strip() == "started", p.communicate(timeout=60)
        time.sleep(wait_s)
        t = time.monotonic()
        p.send_signal(signal.SIGINT)
        try:
            out, err = p.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGINT)                     # what a user would have had to do
            out, err = p.communicate(timeout=20)
            pytest.fail(f"one Ctrl-C did not end the program (a second one did); stderr:\n{err}")
        return p.returncode, time.monotonic() - t, out, err
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_ctrl_c_while_waiting_for_a_launch_exits_at_once():
    rc, took, _, err = _interrupt(_LONG_LAUNCH + "q.finish()\n")
    assert rc in (-signal.SIGINT, 130, 1), err
    assert took < 10, err
    assert err.count("Traceback") == 1 and err.rstrip().endswith("KeyboardInterrupt"), err
    assert "atexit" not in err


def test_ctrl_c_outside_mncl_does_not_wait_for_the_launch_at_exit():
    """The interrupt lands in the user's own code; the exit-time finish must not run the launch out."""
    rc, took, _, err = _interrupt(_LONG_LAUNCH + "time.sleep(600)\n")
    assert rc in (-signal.SIGINT, 130, 1), err
    assert took < 10, err
    assert err.count("Traceback") == 1 and "atexit" not in err, err


def test_a_caught_ctrl_c_cancels_the_launch_and_the_queued_ones_and_the_queue_runs_on():
    """As in a notebook: the interrupt is caught; the running and queued launches are cancelled (their
    events say so), finish() does not raise for them, and later commands run."""
    code = _LONG_LAUNCH + """
t = time.monotonic()
try:
    q.finish()
except KeyboardInterrupt:
    print("interrupted", flush=True)
for ev in events:
    try:
        ev.wait()
        print("event ran")
    except cl.Error as e:
        print("event:", e)
q.finish()
h = np.zeros(64, np.float32)
cl.enqueue_copy(q, y, np.arange(64, dtype=np.float32))
prg.spin(q, (64,), None, y, np.int32(2))
cl.enqueue_copy(q, h, y)
q.finish()
print("after:", h[:3].tolist(), f"{time.monotonic() - t:.1f}", flush=True)
"""
    rc, took, out, err = _interrupt(code)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "interrupted"
    assert lines[1:4] == ["event: enqueue failed: OUT_OF_RESOURCES - cancelled: a KeyboardInterrupt (Ctrl-C) "
                          "interrupted the program before this command finished"] * 3
    ref = np.arange(3, dtype=np.float32)
    for _ in range(2):
        ref = ref * np.float32(0.999) + np.float32(1)
    after = lines[4].split(" ", 1)[1].rsplit(" ", 1)
    assert np.allclose(eval(after[0]), ref)
    assert float(after[1]) < 15


# -- item 10: the translator's limits and the CLIs' inputs -------------------------------------------

def _limit_memory(gib: int = 4):
    """For a child that reads /dev/zero on an unfixed tree: MemoryError, not the host's memory gone."""
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (gib << 30, gib << 30))


_BOMB = "#define A0 x\n" + "".join(f"#define A{k} A{k - 1} A{k - 1}\n" for k in range(1, 21)) + \
        "__kernel void k(__global int *y) {\n    y[0] = A20;\n}\n"


def test_a_macro_bomb_stops_at_the_expansion_limit():
    r = run_py(f"""
        import time
        from translator import CompileError, compile_opencl
        t = time.monotonic()
        try:
            compile_opencl({_BOMB!r}, filename="bomb.cl")
        except CompileError as e:
            print(f"{{time.monotonic() - t:.1f}}")
            print(e)
    """, timeout=90)
    assert r.returncode == 0, r.stderr
    took, msg = r.stdout.split("\n", 1)
    assert msg.startswith("bomb.cl:23:12: error: the expansion of macro 'A20' makes macro replacement produce more "
                          "than 262144 tokens in this translation unit, the translator's limit"), msg
    assert "    y[0] = A20;\n           ^" in msg
    assert float(took) < 30


def test_function_like_macro_bomb_stops_too():
    from translator import CompileError, compile_opencl
    src = "#define F(x) x x x x\n__kernel void k(__global int *y) { y[0] = F(F(F(F(F(F(F(F(F(F(1)))))))))); }\n"
    with pytest.raises(CompileError, match=r"f.cl:2:\d+: error: the expansion of macro 'F' makes macro replacement"):
        compile_opencl(src, filename="f.cl")


def test_macros_within_the_limit_still_work():
    from translator import compile_opencl
    src = "#define A0 1\n" + "".join(f"#define A{k} (A{k - 1} + A{k - 1})\n" for k in range(1, 11)) + \
          "__kernel void k(__global int *y) { y[0] = A10; }\n"
    assert "k" in compile_opencl(src, filename="ok.cl").kernels


def test_a_source_over_the_size_limit_is_an_error():
    import mncl as cl
    from translator import CompileError, compile_opencl
    from translator.limits import MAX_SOURCE_CHARS
    src = "__kernel void k(__global int *y) { y[0] = 1; }\n//" + "x" * MAX_SOURCE_CHARS + "\n"
    with pytest.raises(CompileError, match=r"big.cl:0:0: error: the source is 1048626 characters \(2 lines\), "
                                           r"over the translator's limit of 1048576"):
        compile_opencl(src, filename="big.cl")
    ctx = cl.Context([cl.get_platforms()[0].get_devices()[0]])
    prg = cl.Program(ctx, src)
    with pytest.raises(cl.Error, match="over the translator's limit of 1048576"):
        prg.build()


def test_running_out_of_memory_is_a_compile_error(monkeypatch):
    import translator.preprocess
    from translator import CompileError, compile_opencl

    def exhausted(*a, **k):
        raise MemoryError
    monkeypatch.setattr(translator.preprocess, "preprocess", exhausted)
    with pytest.raises(CompileError, match=r"m.cl:0:0: error: the translator ran out of memory compiling this "
                                           r"source \(10 characters\)"):
        compile_opencl("int x = 1;", filename="m.cl")


def _cli(args, timeout=60, stdin=None):
    try:
        return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, timeout=timeout,
                              env=_env(), cwd=ROOT, input=stdin, preexec_fn=_limit_memory)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{' '.join(args)} ran past {timeout} s")


@pytest.mark.parametrize("cli, rc, text", [
    (["translator.cli"], 1, "mncl-cc: error: /dev/zero: a character device, not a regular file: "
                            "a kernel source must be a file"),
    (["mncl.cli", "profile", "-k", "k", "--global", "1"], 2,
     "cannot read /dev/zero: a character device, not a regular file: a kernel source must be a file"),
    (["emulator.cli", "--machine", "tiny"], 2,
     "cannot read /dev/zero: a character device, not a regular file: an assembly file must be a file"),
])
def test_clis_refuse_dev_zero(cli, rc, text):
    r = _cli([*cli[:1], *cli[1:2], "/dev/zero", *cli[2:]] if cli[0] == "mncl.cli" else [*cli, "/dev/zero"])
    assert r.returncode == rc and text in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("cli", [["translator.cli"], ["emulator.cli", "--machine", "tiny"]])
def test_clis_refuse_a_fifo_without_waiting_for_a_writer(cli, tmp_path):
    fifo = tmp_path / "k.fifo"
    os.mkfifo(fifo)
    r = _cli([*cli, str(fifo)], timeout=30)
    assert r.returncode in (1, 2) and f"{fifo}: a FIFO, not a regular file" in r.stderr, r.stderr


def test_clis_refuse_a_file_over_the_cap(tmp_path):
    big = tmp_path / "big.cl"
    with open(big, "wb") as f:
        f.truncate(5 << 20)                      # sparse: 5 MiB of zeros, no disk used
    r = _cli(["translator.cli", str(big)])
    assert r.returncode == 1 and f"{big}: 5242880 bytes is over the 4194304-byte limit for a kernel source" \
        in r.stderr, r.stderr
    r = _cli(["translator.cli", "-"], stdin="x" * (5 << 20))
    assert r.returncode == 1 and "<stdin>: more than 4194304 bytes is over the 4194304-byte limit" in r.stderr, \
        r.stderr
    asm = tmp_path / "big.vsm"
    with open(asm, "wb") as f:
        f.truncate(65 << 20)
    r = _cli(["emulator.cli", "--machine", "tiny", str(asm)])
    assert r.returncode == 2 and "68157440 bytes is over the 67108864-byte limit for an assembly file" in r.stderr


def test_read_mnb_refuses_what_is_not_a_file():
    try:
        r = subprocess.run([sys.executable, "-c", "from translator.container import MnbError, read_mnb\n"
                            "try:\n    read_mnb('/dev/zero')\nexcept MnbError as e:\n    print(e)"],
                           capture_output=True, text=True, timeout=60, env=_env(), cwd=ROOT, preexec_fn=_limit_memory)
    except subprocess.TimeoutExpired:
        pytest.fail("read_mnb('/dev/zero') ran past 60 s")
    assert r.stdout.strip() == "/dev/zero: a character device, not a regular file: an .mnb program must be a file", \
        r.stderr


@pytest.mark.parametrize("open_, close", [(".loop %i{k} = 0, 1", ".endloop"), (".if 1", ".endif"),
                                          (".while any $imr1", ".endwhile")])
def test_directives_nested_1000_deep_are_an_error_not_a_recursion_error(open_, close):
    """`.if` / `.loop` nested 1000 deep ended mncl-emu in a RecursionError traceback."""
    from emulator import assemble
    from emulator.asm import MAX_NESTING
    from emulator.errors import AsmError

    def nest(n):
        return "".join(open_.format(k=k) + "\n" for k in range(n)) + "nop\n" + (close + "\n") * n
    assemble(nest(MAX_NESTING))
    with pytest.raises(AsmError, match=f"nested more than {MAX_NESTING} deep"):
        assemble(nest(1000))
