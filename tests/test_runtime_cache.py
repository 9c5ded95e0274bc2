"""The compiled-program cache: a repeated build compiles nothing, keys cover what changes code.

The device's compiler is replaced by a counting stub returning a hand-written
module, so these tests run without the front end and count compilations.
"""

import numpy as np
import pytest

import mncl as cl
from mncl import program as program_mod
from test_runtime_ir import module_of
from translator.module import CompileError, Diagnostic

SRC = "__kernel void saxpy(__global const float *x, __global float *y, float a, int n) { /* ... */ }"


@pytest.fixture
def counting(monkeypatch, tmp_path):
    monkeypatch.setenv("MNCL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MNCL_CACHE", raising=False)
    monkeypatch.setattr(program_mod, "_memo", {})
    ctx = cl.create_some_context()
    backend = ctx.devices[0].backend
    calls = []

    def compile_stub(source, filename, options):
        calls.append((source, options))
        return module_of("saxpy")
    monkeypatch.setattr(backend, "compile", compile_stub)
    return ctx, calls, tmp_path


def run_saxpy(ctx, prg):
    q = cl.CommandQueue(ctx)
    x = np.arange(64, dtype=np.float32)
    bx = cl.Buffer(ctx, cl.mem_flags.COPY_HOST_PTR, hostbuf=x)
    by = cl.Buffer(ctx, cl.mem_flags.COPY_HOST_PTR, hostbuf=np.ones(64, np.float32))
    prg.saxpy(q, (64,), None, bx, by, np.float32(2), np.int32(64))
    out = np.empty(64, np.float32)
    cl.enqueue_copy(q, out, by)
    np.testing.assert_array_equal(out, 2 * x + 1)


def entries(tmp_path, ext):
    d = tmp_path / "cache"
    return sorted(d.glob(f"*{ext}")) if d.exists() else []


def test_second_build_compiles_nothing_in_process_and_from_disk(counting, monkeypatch):
    ctx, calls, tmp = counting
    run_saxpy(ctx, cl.Program(ctx, SRC).build())
    cl.Program(ctx, SRC).build()
    assert len(calls) == 1
    assert len(entries(tmp, ".mnclbin")) == 1 and len(entries(tmp, ".o")) == 1
    monkeypatch.setattr(program_mod, "_memo", {})        # as in a new process: only the disk is left
    run_saxpy(ctx, cl.Program(ctx, SRC).build())
    assert len(calls) == 1


def test_key_covers_source_options_and_includes(counting):
    ctx, calls, tmp = counting
    cl.Program(ctx, SRC).build()
    cl.Program(ctx, SRC + " ").build()
    cl.Program(ctx, SRC).build(options="-DN=4")
    cl.Program(ctx, SRC).build(options=["-DN=4"])
    assert len(calls) == 3
    inc = tmp / "inc"
    inc.mkdir()
    (inc / "params.h").write_text("#define N 4\n")
    src = '#include "params.h"\n' + SRC
    cl.Program(ctx, src).build(options=f"-I {inc}")
    cl.Program(ctx, src).build(options=f"-I {inc}")
    assert len(calls) == 4
    (inc / "params.h").write_text("#define N 5\n")
    cl.Program(ctx, src).build(options=f"-I {inc}")
    assert len(calls) == 5


def test_mncl_cache_0_disables_and_require_errors(counting, monkeypatch):
    ctx, calls, tmp = counting
    monkeypatch.setenv("MNCL_CACHE", "0")
    cl.Program(ctx, SRC).build()
    cl.Program(ctx, SRC).build()
    assert len(calls) == 2 and not entries(tmp, ".mnclbin")
    monkeypatch.setenv("MNCL_CACHE", "require")
    with pytest.raises(cl.RuntimeError, match="(?s)BUILD_PROGRAM_FAILURE.*MNCL_CACHE=require"):
        cl.Program(ctx, SRC).build()
    monkeypatch.setenv("MNCL_CACHE", "1")
    cl.Program(ctx, SRC).build()
    monkeypatch.setattr(program_mod, "_memo", {})
    monkeypatch.setenv("MNCL_CACHE", "require")
    cl.Program(ctx, SRC).build()
    assert len(calls) == 3


@pytest.mark.parametrize("damage", ["binary-garbage", "binary-truncated", "object-garbage"])
def test_corrupt_entries_fall_back(counting, monkeypatch, damage):
    ctx, calls, tmp = counting
    cl.Program(ctx, SRC).build()
    monkeypatch.setattr(program_mod, "_memo", {})
    (b,), (o,) = entries(tmp, ".mnclbin"), entries(tmp, ".o")
    if damage == "binary-garbage":
        b.write_bytes(b"\x00garbage")
    elif damage == "binary-truncated":
        b.write_bytes(b.read_bytes()[:200])
    else:
        o.write_bytes(o.read_bytes()[:40] + b"\xff" * 100)
    run_saxpy(ctx, cl.Program(ctx, SRC).build())
    # a broken binary is rebuilt; a broken object file is only re-generated from the IR
    assert len(calls) == (1 if damage == "object-garbage" else 2)


def test_build_failure_carries_the_log_and_is_not_cached(counting, monkeypatch):
    ctx, calls, tmp = counting
    diag = Diagnostic("error", "use of undeclared identifier 'nn'", "kernel.cl", 1, 12, "int x = nn;")

    def failing(source, filename, options):
        calls.append(source)
        raise CompileError([diag])
    monkeypatch.setattr(ctx.devices[0].backend, "compile", failing)
    prg = cl.Program(ctx, "bad source")
    with pytest.raises(cl.RuntimeError) as e:
        prg.build(options="-DX=1")
    assert e.value.code == cl.status_code.BUILD_PROGRAM_FAILURE
    text = str(e.value)
    assert "kernel.cl:1:12: error: use of undeclared identifier 'nn'" in text
    assert "int x = nn;\n           ^" in text and "-DX=1" in text and "Traceback" not in text
    dev = ctx.devices[0]
    assert prg.get_build_info(dev, cl.program_build_info.LOG) == diag.format()
    assert prg.get_build_info(dev, cl.program_build_info.STATUS) == cl.build_status.ERROR
    with pytest.raises(cl.RuntimeError):
        cl.Program(ctx, "bad source").build()
    assert len(calls) == 2 and not entries(tmp, ".mnclbin")


def test_front_end_missing_or_crashing_is_a_build_failure(counting, monkeypatch):
    ctx = counting[0]

    def missing(source, filename, options):
        raise ImportError("No module named 'translator.frontend'")
    monkeypatch.setattr(ctx.devices[0].backend, "compile", missing)
    with pytest.raises(cl.RuntimeError, match="front end .* is not available"):
        cl.Program(ctx, SRC).build()

    def crashing(source, filename, options):
        raise KeyError("oops")
    monkeypatch.setattr(ctx.devices[0].backend, "compile", crashing)
    with pytest.raises(cl.RuntimeError, match="internal compiler error: KeyError"):
        cl.Program(ctx, SRC).build()


def test_binary_of_a_real_build_loads_without_the_front_end(monkeypatch, tmp_path):
    pytest.importorskip("translator", reason="needs the front end")
    from translator import compile_opencl  # noqa: F401
    monkeypatch.setenv("MNCL_CACHE", "0")
    ctx = cl.create_some_context()
    src = """__kernel void saxpy(__global const float *x, __global float *y, float a, int n)
             { int i = get_global_id(0); if (i < n) y[i] = a * x[i] + y[i]; }"""
    (binary,) = cl.Program(ctx, src).build(options="-DUNUSED=1").binaries

    def no_front_end(*a):
        raise AssertionError("the front end must not run for a binary")
    monkeypatch.setattr(ctx.devices[0].backend, "compile", no_front_end)
    prg = cl.Program(ctx, ctx.devices, [binary]).build()
    run_saxpy(ctx, prg)
    assert prg.get_build_info(ctx.devices[0], cl.program_build_info.STATUS) == cl.build_status.SUCCESS


def test_build_cache_dir_argument(counting):
    ctx, calls, tmp = counting
    other = tmp / "elsewhere"
    cl.Program(ctx, SRC).build(cache_dir=str(other))
    assert len(list(other.glob("*.mnclbin"))) == 1 and not entries(tmp, ".mnclbin")


def test_emulator_cache_hit_skips_the_backend_and_machines_do_not_share(monkeypatch, tmp_path):
    """The emulator device keeps its compiled kernels in the entry: a disk hit runs neither the front
    end nor the SIMD backend; another machine has its own entry, and a kernel compiled for another
    machine found in an entry is not used."""
    from importlib import resources

    import translator.backend as backend_mod
    from mncl.context import select_device
    monkeypatch.setenv("MNCL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MNCL_CACHE", raising=False)
    monkeypatch.setattr(program_mod, "_memo", {})
    compiled = []
    real = backend_mod.compile_kernel
    monkeypatch.setattr(backend_mod, "compile_kernel",
                        lambda module, name, machine, mode="1d": compiled.append(machine.name)
                        or real(module, name, machine, mode))
    toml = tmp_path / "wide.toml"
    toml.write_text(resources.files("emulator").joinpath("presets/tiny.toml").read_text()
                    .replace('name = "tiny"', 'name = "wide"').replace("mab_per_l1b = 4", "mab_per_l1b = 8"))
    tiny = cl.Context([select_device("emulator", "tiny")])
    wide = cl.Context([select_device("emulator", str(toml))])
    src = """__kernel void saxpy(__global const float *x, __global float *y, float a, int n)
             { int i = get_global_id(0); if (i < n) y[i] = a * x[i] + y[i]; }"""
    run_saxpy(tiny, cl.Program(tiny, src).build())
    assert compiled == ["tiny"]
    monkeypatch.setattr(program_mod, "_memo", {})        # as in a new process: only the disk is left
    run_saxpy(tiny, cl.Program(tiny, src).build())
    assert compiled == ["tiny"]
    run_saxpy(wide, cl.Program(wide, src).build())
    assert compiled == ["tiny", "wide"] and len(entries(tmp_path, ".mnclbin")) == 2
    # an entry whose object code names another machine is recompiled, not trusted
    objs = {o.read_bytes(): o for o in entries(tmp_path, ".o")}
    (tiny_o, wide_o) = sorted(objs.values(), key=lambda o: b'"wide"' in o.read_bytes())
    tiny_o.write_bytes(wide_o.read_bytes())
    monkeypatch.setattr(program_mod, "_memo", {})
    run_saxpy(tiny, cl.Program(tiny, src).build())
    assert compiled == ["tiny", "wide", "tiny"]
