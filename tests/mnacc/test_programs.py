"""MNACC programs against gcc: each of tests/mnacc/programs/*.c compiled with gcc
(-O2 -ffp-contract=off) is the reference; mnacc runs it on the CPU device and on the emulator
device (tiny; mncore2 for the programs marked so, in the slow suite), and the outputs are
compared line by line: exactly for programs marked ``exact`` (their loops' arithmetic is exact
in floating point), within the program's ``rtol`` otherwise."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAMS = os.path.join(ROOT, "tests", "mnacc", "programs")
NAMES = sorted(f[:-2] for f in os.listdir(PROGRAMS) if f.endswith(".c"))
SLOW_ON_TINY = {"gram_schmidt_d", "heat3d_d", "helper_func_d", "covariance_d"}   # > 5 s each

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


def meta(name):
    """('exact', None) or ('rtol', x), and whether the program is marked for mncore2."""
    text = open(os.path.join(PROGRAMS, name + ".c")).read()
    m = re.search(r"/\* mnacc-test: ([^*]*)\*/", text)
    assert m, f"{name}.c has no mnacc-test line"
    words = m.group(1).split()
    rtol = next((float(w.split("=")[1]) for w in words if w.startswith("rtol=")), None)
    return rtol, "mncore2" in words


@pytest.fixture(scope="session")
def reference(tmp_path_factory):
    """name -> gcc's output, built once per session."""
    out, tmp = {}, tmp_path_factory.mktemp("gcc")

    def get(name):
        if name not in out:
            exe = str(tmp / name)
            subprocess.run(["gcc", "-O2", "-ffp-contract=off", "-o", exe, os.path.join(PROGRAMS, name + ".c"),
                            "-lm"], check=True, capture_output=True)
            out[name] = subprocess.run([exe], check=True, capture_output=True, text=True, timeout=60).stdout
        return out[name]
    return get


def mnacc(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "mnacc.cli", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def compare(name, got: str, want: str):
    rtol, _ = meta(name)
    if rtol is None:
        assert got == want, f"{name}: output differs from gcc's"
        return
    g, w = got.split("\n"), want.split("\n")
    assert len(g) == len(w), f"{name}: {len(g)} lines, gcc printed {len(w)}"
    values = [abs(float(x)) for line in w for x in line.split() if _num(x)]
    scale = max(values, default=1.0)
    for k, (a, b) in enumerate(zip(g, w)):
        for x, y in zip(a.split(), b.split()):
            if _num(y):
                assert abs(float(x) - float(y)) <= rtol * max(abs(float(y)), 1e-3 * scale), \
                    f"{name}: line {k + 1}: {x} against gcc's {y}"
            else:
                assert x == y, f"{name}: line {k + 1}"


def _num(s):
    try:
        float(s)
        return True
    except ValueError:
        return False


def _run(name, reference, *device):
    res = mnacc(os.path.join("tests", "mnacc", "programs", name + ".c"), *device)
    assert res.returncode == 0, res.stderr[-3000:]
    compare(name, res.stdout, reference(name))


@pytest.mark.parametrize("name", NAMES)
def test_cpu_device(name, reference):
    _run(name, reference, "--device", "cpu")


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_ON_TINY else n
                                  for n in NAMES])
def test_emulator_tiny(name, reference):
    _run(name, reference, "--machine", "tiny")


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in NAMES if meta(n)[1]])
def test_emulator_mncore2(name, reference):
    _run(name, reference, "--machine", "mncore2")


def test_sequential_is_gcc(reference):
    res = mnacc("tests/mnacc/programs/nbody_d.c", "--sequential")
    assert res.returncode == 0 and res.stdout == reference("nbody_d")


def test_check_mode_agrees_and_reports_a_difference(tmp_path):
    """--check runs each loop on the device and sequentially; a loop-carried dependence the
    device cannot honour is reported with its loop and element."""
    ok = mnacc("tests/mnacc/programs/jacobi2d_f.c", "--check", "--machine", "tiny")
    assert ok.returncode == 0, ok.stderr
    assert "check:" not in ok.stderr
    src = tmp_path / "dep.c"
    src.write_text("""#include <stdio.h>
double a[16];
int main(void) {
    int i;
    for (i = 0; i < 16; i++) a[i] = i;
#pragma goose parallel for loopcounter(i) result(a[i])
    for (i = 1; i < 16; i++)
        a[i] = a[i - 1] * 2.0;
    printf("%g\\n", a[15]);
    return 0;
}
""")
    bad = mnacc(str(src), "--check", "--device", "cpu")
    assert "warning: loop-carried dependence" in bad.stderr
    assert f"{src}:6: loop 1: a[2]: device 2.0, sequential 0.0" in bad.stderr, bad.stderr
    assert bad.returncode == 1
    assert bad.stdout == "0\n"          # the program goes on with the sequential values


def test_exit_status_argv_and_output_order(tmp_path):
    src = tmp_path / "args.c"
    src.write_text("""#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    int i, n = argc > 1 ? atoi(argv[1]) : 4;
    static float x[64];
    printf("before\\n");
#pragma acc parallel loop
    for (i = 0; i < n; i++)
        x[i] = 2.0f * i;
    printf("after %g %d\\n", x[n - 1], argc);
    return n == 5 ? 3 : 0;
}
""")
    res = mnacc(str(src), "--device", "cpu", "--", "5")
    assert (res.stdout, res.returncode) == ("before\nafter 8 2\n", 3), res.stderr


def test_host_py_and_emitted_kernels(tmp_path, reference):
    """-o writes a Python program that runs the same thing; --emit-kernels writes MNCL C that
    mncl-cc compiles as it stands."""
    host = tmp_path / "host.py"
    res = mnacc("tests/mnacc/programs/matvec_f.c", "-o", str(host), "--emit-kernels", str(tmp_path / "k"))
    assert res.returncode == 0, res.stderr
    run = subprocess.run([sys.executable, str(host), "--device", "cpu"], capture_output=True, text=True,
                         timeout=300, cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT})
    assert run.returncode == 0, run.stderr
    compare("matvec_f", run.stdout, reference("matvec_f"))
    kernel = (tmp_path / "k" / "matvec_f_loop1.cl").read_text()
    assert "__kernel void mnacc_loop1(" in kernel and '#line' in kernel
    cc = subprocess.run([sys.executable, "-m", "translator.cli", str(tmp_path / "k" / "matvec_f_loop1.cl"),
                         "--machine", "tiny", "-o", str(tmp_path / "k.mnb")], capture_output=True, text=True,
                        cwd=ROOT, timeout=300)
    assert cc.returncode == 0, cc.stderr


def test_cycles_are_charged_to_the_users_lines():
    """The kernels carry #line directives: every cycle of the loop's launches is charged to a
    line of the loop (its directive for the set-up and the reduction's folding)."""
    from mnacc.driver import compile_program
    from mnacc.runtime import Runner
    runner = Runner(compile_program(os.path.join(PROGRAMS, "nbody_f.c")), "emulator", "tiny")
    saved, null = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    try:
        assert runner.run(["nbody_f"]) == 0
    finally:
        os.dup2(saved, 1)
        os.close(null)
    lines = {int(k) for e in runner.events[1] for k in e.stats.summary()["cycles_by_source_line"]} - {0}
    assert lines and lines <= set(range(25, 48)), sorted(lines)      # the loop: nbody_f.c lines 25-47


def test_overlapping_arrays_are_an_error(tmp_path):
    src = tmp_path / "overlap.c"
    src.write_text("""#include <stdio.h>
double a[32];
int main(void) {
    double *p = a + 8;
    int i;
    printf("start\\n");
#pragma acc parallel loop copy(p[0:8])
    for (i = 0; i < 8; i++)
        p[i] = a[i] + 1.0;
    printf("%g\\n", a[8]);
    return 0;
}
""")
    res = mnacc(str(src), "--device", "cpu")
    assert res.returncode == 1
    assert res.stdout == "start\n"          # what the program printed before is kept
    assert f"{src}:7: loop 1 failed on the device:\narrays 'a' and 'p' overlap in memory and the loop writes 'p'" in res.stderr


@pytest.mark.parametrize("device", [("--device", "cpu"), ("--machine", "tiny")])
def test_grid_and_ranged_launches_agree_with_gcc(tmp_path, device):
    """A 2-D loop runs over the arrays' whole extents with its range as a guard when its range
    lies inside them (the first loop), and over its own range otherwise (the second: i from -1)."""
    src = tmp_path / "grid.c"
    src.write_text("""#include <stdio.h>
#define N 12
static float a[N][N], b[N][N];
int main(void) {
    int i, j;
    for (i = 0; i < N; i++) for (j = 0; j < N; j++) a[i][j] = (float)(i * N + j);
#pragma goose parallel for loopcounter(i, j) result(b[i][2..N-1])
    for (i = 3; i < N - 1; i++)
        for (j = 2; j < N; j++)
            b[i][j] = a[i][j - 2] + 0.5f * a[i + 1][j];
#pragma acc parallel loop collapse(2)
    for (i = -1; i < N - 1; i++)
        for (j = 0; j < N - 2; j++)
            b[i + 1][j] += 2.0f * a[i + 1][j + 1];
    for (i = 0; i < N; i++) for (j = 0; j < N; j++) printf("%g\\n", b[i][j]);
    return 0;
}
""")
    exe = tmp_path / "grid"
    subprocess.run(["gcc", "-O2", "-ffp-contract=off", "-o", str(exe), str(src)], check=True)
    want = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    res = mnacc(str(src), *device)
    assert res.returncode == 0, res.stderr
    assert res.stdout == want


def test_a_kernel_the_device_cannot_build_names_the_users_line(tmp_path):
    """The kernel is a private array larger than the emulator device's local memory (this test used
    fmodf, which the device builds now)."""
    src = tmp_path / "bigpriv.c"
    src.write_text("""#include <stdio.h>
float x[8];
int main(void) {
    int i, j;
#pragma acc parallel loop
    for (i = 0; i < 8; i++) {
        float t[20000];
        for (j = 0; j < 20000; j++)
            t[j] = j * 0.5f + i;
        x[i] = t[(i * 7919) % 20000];
    }
    printf("%g\\n", x[7]);
    return 0;
}
""")
    res = mnacc(str(src), "--machine", "tiny")
    assert res.returncode == 1 and res.stdout == ""
    assert f"loop 1 ({src}:5) cannot be built for MN-Core 2 (emulator, tiny):\n{src}:7:0: error: " in res.stderr
    assert "private arrays need 80000 bytes per work-item" in res.stderr
    assert "Traceback" not in res.stderr
