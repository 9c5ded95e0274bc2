"""Runs every kernel of tests/kernels/ on PoCL (through PyOpenCL) and on mncl.

The cases are data (tests/kernels/cases.py: a .cl file, a launch spec and a
numpy reference each).  One host routine, ``run_case``, written against the
PyOpenCL API, runs a case with whichever ``cl`` module it is handed: first
``pyopencl`` on an installed OpenCL platform (skipped cleanly when there is
none), which checks the kernels and references independently of this project,
then ``mncl``, which is checked against the reference and, where PoCL ran,
against PoCL's own output, at the default optimisation level and unoptimised
and at -O3.  A test mncl cannot pass yet carries a strict xfail with the error
it gives (kernels/xfail-mncl-<device>.txt), so one that starts passing shows.
"""
from __future__ import annotations

import dataclasses
import functools
import atexit
import concurrent.futures
import importlib
import multiprocessing
import os
import tempfile
import threading
import warnings

import numpy as np
import pytest

from kernels.cases import CASES
from kernels.randbarrier import N_VARS, gcc_reference, random_barrier_kernel
from kernels.randgen import TYPES, random_inputs, random_kernel
from kernels.randfloat import random_float_kernel
from kernels.randvec import random_vector_kernel
from kernels.spec import KERNEL_DIR, Case, Given, In, InOut, Local, Out, Same, Scalar, read_xfails

os.environ.setdefault("PYOPENCL_COMPILER_OUTPUT", "1")   # PoCL's warnings in full (each is a failure)
TIMEOUT_S = float(os.environ.get("MNCL_CORPUS_TIMEOUT", "60"))   # a miscompiled loop fails its case, never hangs the suite


# --------------------------------------------------------------------------------------------
# The host program, written once against the PyOpenCL API
# --------------------------------------------------------------------------------------------

def run_case(cl, ctx, queue, case: Case) -> dict:
    """Build, launch and read back one case; returns {output name: host array}."""
    initial = case.initial_buffers()
    program = cl.Program(ctx, case.source).build(options=case.options)
    kernel = getattr(program, case.kernel)
    args, _, outputs = make_args(cl, ctx, case, initial)
    extra = {"global_offset": case.global_offset} if case.global_offset else {}
    kernel(queue, case.global_size, case.local_size, *args, **extra)
    return read_back(cl, queue, outputs, initial)


def make_args(cl, ctx, case: Case, initial: dict):
    """The case's kernel arguments, in order, with its buffers made from ``initial``:
    (args, {name: buffer}, {name: buffer of each checked output})."""
    mf = cl.mem_flags
    args, buffers, outputs = [], {}, {}
    for a in case.args:
        if isinstance(a, Scalar):
            args.append(a.host_value())
        elif isinstance(a, Local):
            args.append(cl.LocalMemory(a.nbytes))
        elif isinstance(a, Same):
            args.append(buffers[a.of])
        else:
            if isinstance(a, Out) and a.fill is None:
                buf = cl.Buffer(ctx, mf.WRITE_ONLY, initial[a.name].nbytes)
            else:
                access = mf.READ_WRITE if isinstance(a, InOut) else mf.WRITE_ONLY if isinstance(a, Out) else mf.READ_ONLY
                buf = cl.Buffer(ctx, access | mf.COPY_HOST_PTR, hostbuf=initial[a.name])
            args.append(buf)
            buffers[a.name] = buf
            if a.checked:
                outputs[a.name] = buf
    return args, buffers, outputs


def read_back(cl, queue, outputs: dict, initial: dict) -> dict:
    """{name: host array} of each output buffer, after the queue's work."""
    results = {}
    for name, buf in outputs.items():
        results[name] = np.empty_like(initial[name])
        cl.enqueue_copy(queue, results[name], buf)
    queue.finish()
    return results


def run_with_timeout(fn, *args):
    box = {}

    def target():
        try:
            box["value"] = fn(*args)
        except BaseException as e:                      # re-raised in the test's thread
            box["error"] = e

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(TIMEOUT_S)
    if worker.is_alive():
        pocl.cache_clear()                              # the hung queue's worker stays busy: later tests get new ones
        mncl.cache_clear()
        pytest.fail(f"timed out after {TIMEOUT_S:.0f} s", pytrace=False)
    if "error" in box:
        raise box["error"]
    return box["value"]


# --------------------------------------------------------------------------------------------
# Contexts
# --------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def pocl():
    """(pyopencl, context, queue, device), or a string saying why there is none."""
    try:
        import pyopencl as cl
        platforms = cl.get_platforms()
    except Exception as e:                              # no module, or no ICD loader / platform
        return f"no OpenCL platform: {type(e).__name__}: {e}"
    devices = [d for p in platforms for d in p.get_devices()]
    if not devices:
        return "no OpenCL device"
    device = next((d for d in devices if "Portable Computing Language" in d.platform.name), devices[0])
    ctx = cl.Context([device])
    return cl, ctx, cl.CommandQueue(ctx), device


# The mncl device the corpus runs on ("cpu" now; "emulator" once issue 4 adds it): a device kind
# or a substring of its name.  Its known failures are kernels/xfail-mncl-<device>.txt.
CORPUS_DEVICE = os.environ.get("MNCL_CORPUS_DEVICE", "cpu")
MNCL_XFAIL = read_xfails(CORPUS_DEVICE)


@functools.lru_cache(maxsize=None)
def mncl():
    cl = importlib.import_module("mncl")
    devices = [d for p in cl.get_platforms() for d in p.get_devices()]
    chosen = ([d for d in devices if getattr(d, "kind", None) == CORPUS_DEVICE]
              or [d for d in devices if CORPUS_DEVICE.lower() in d.name.lower()])
    if not chosen:
        raise LookupError(f"MNCL_CORPUS_DEVICE={CORPUS_DEVICE!r} matches none of {[d.name for d in devices]}")
    ctx = cl.Context(chosen[:1])
    return cl, ctx, cl.CommandQueue(ctx)


@functools.lru_cache(maxsize=None)
def pocl_result(name: str):
    """PoCL's outputs for a case, or None where PoCL cannot run it."""
    env = pocl()
    if isinstance(env, str):
        return None
    cl, ctx, queue, device = env
    case = CASES[name]
    if case.needs_fp64 and not device.double_fp_config:
        return None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run_with_timeout(run_case, cl, ctx, queue, case)
    said = [str(w.message) for w in caught if w.category.__name__ == "CompilerWarning"]
    # clang's -Wpsabi note on PoCL's own builtins (16-wide vectors on a CPU without AVX-512) is
    # about PoCL's ABI on the host, not the kernel: dropped
    said = [m for m in said if not all("changes the ABI" in ln for ln in m.splitlines() if "warning" in ln)]
    if said:                                            # the corpus is meant to be clean, well-defined C
        text = said[0].split("warning:", 1)[1].strip() if "warning:" in said[0] else said[0]
        raise AssertionError("PoCL's compiler warns: " + text.splitlines()[0])
    return result


# --------------------------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------------------------

def check(case: Case, name: str, actual: np.ndarray, expected: np.ndarray, against: str, flushed=None):
    """Exact for integers, within the case's tolerance for floating point; one-line failures.

    ``flushed`` is for a device without float denormals (CL_FP_DENORM not in its
    CL_DEVICE_SINGLE_FP_CONFIG, which OpenCL 1.2 allows: such a device may flush float
    subnormal operands and results to zero): the numpy reference computed from inputs with
    float32 subnormals flushed to zeros of their sign (``Case.expected``).  A float32 element
    then also passes when it matches that reference, or when the expected value (of either) is
    subnormal and the element is the zero of its sign.  Other dtypes are checked as always."""
    if actual.dtype.names:
        for field in actual.dtype.names:
            check(case, f"{name}.{field}", actual[field], np.asarray(expected[field]), against,
                  None if flushed is None else np.asarray(flushed[field]))
        return
    if expected.size != actual.size:
        raise AssertionError(f"{name}: {against} has {expected.size} elements, the buffer {actual.size}")
    expected = expected.reshape(actual.shape)
    unchecked = np.ma.getmaskarray(expected).reshape(-1)
    expected = np.ma.getdata(expected)
    got = actual.reshape(-1)
    if actual.dtype.kind in "iub":
        want = expected.astype(actual.dtype)
        if not np.array_equal(want[~unchecked.reshape(want.shape)], expected[~unchecked.reshape(want.shape)]):
            raise AssertionError(f"{name}: the {against} does not fit in {actual.dtype}")
        bad = np.flatnonzero((got != want.reshape(-1)) & ~unchecked)
    else:
        want = expected.astype(np.float64).reshape(-1)
        g = got.astype(np.float64)
        flush = flushed is not None and actual.dtype == np.float32

        def close_to(ref):
            close = np.isclose(g, ref, rtol=case.rtol, atol=case.atol, equal_nan=True)
            if case.signed_zeros:
                close &= (ref != 0) | (np.signbit(g) == np.signbit(ref))
            if flush:                  # a subnormal result flushed to the zero of its sign
                close |= (ref != 0) & (np.abs(ref) < np.finfo(np.float32).tiny) & (g == 0) & (
                    np.signbit(g) == np.signbit(ref))
            return close
        close = close_to(want)
        if flush:
            close |= close_to(np.ma.getdata(flushed).astype(np.float64).reshape(-1))
        bad = np.flatnonzero(~close & ~unchecked)
    if bad.size:
        k = bad[0]
        raise AssertionError(f"{name}: {bad.size} of {got.size} elements differ from the {against} "
                             f"(first at flat index {k}: got {got[k].item()!r}, expected {want.reshape(-1)[k].item()!r})")


def flushes_float_denormals(ctx) -> bool:
    """The context's device reports no float denormals (CL_FP_DENORM not in its
    CL_DEVICE_SINGLE_FP_CONFIG): results may be checked against flushed references (check)."""
    import mncl
    return not ctx.devices[0].single_fp_config & mncl.device_fp_config.DENORM


def same_mask(other: np.ndarray, expected) -> np.ndarray:
    """``other`` with the reference's undefined (masked) elements left unchecked too."""
    if isinstance(expected, np.ma.MaskedArray):
        return np.ma.array(other, mask=np.ma.getmaskarray(expected).reshape(other.shape))
    return other


# --------------------------------------------------------------------------------------------
# The tests
# --------------------------------------------------------------------------------------------

def test_corpus_is_big_enough():
    files = {c.file for c in CASES.values()}
    assert len(files) >= 40 and len(CASES) >= 40


# What issue 3 lists of the language, as patterns that some kernel of the corpus must contain.
ISSUE_LANGUAGE = {
    "scalar types": [rf"\b{t}\b" for t in ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                                          "float", "double", "half", "bool", "size_t")],
    "vector types": [rf"\b(float|int|uchar|short|long|double){n}\b" for n in (2, 3, 4, 8, 16)],
    "vector literals": [r"\(float4\)\(", r"\(int4\)\("],
    "swizzles": [r"\.x\b", r"\.xy\b", r"\.s0123\b", r"\.lo\b", r"\.hi\b", r"\.even\b", r"\.odd\b"],
    "address spaces": [r"__global", r"__constant", r"__local", r"__private", r"\bglobal\b", r"\blocal\b"],
    "qualifiers": [r"\bconst\b", r"\brestrict\b", r"\bvolatile\b"],
    "statements": [r"\bif\b", r"\belse\b", r"\bfor\b", r"\bwhile\b", r"\bdo\b", r"\bbreak\b",
                   r"\bcontinue\b", r"\breturn;", r"\bswitch\b", r"\bdefault:"],
    "operators": [r"\+=", r"-=", r"\*=", r"/=", r"%=", r"<<=", r">>=", r"&=", r"\|=", r"\^=", r"\?", r"&&",
                  r"\|\|", r"\+\+", r"--", r"~", r"!"],
    "aggregates": [r"\bstruct\b", r"\btypedef\b", r"\[\w+\]\[\w+\]", r"\benum\b"],
    "work-item functions": [rf"\b{f}\(" for f in ("get_global_id", "get_global_size", "get_global_offset",
                                                  "get_local_id", "get_local_size", "get_group_id",
                                                  "get_num_groups", "get_work_dim")],
    "barriers": [r"barrier\(CLK_LOCAL_MEM_FENCE\)", r"CLK_GLOBAL_MEM_FENCE"],
    "math": [rf"\b{f}\(" for f in ("sqrt", "rsqrt", "exp", "exp2", "log", "log2", "pow", "sin", "cos", "tan",
                                   "fabs", "floor", "ceil", "fmin", "fmax", "fma", "mad", "hypot", "tanh")],
    "integer": [rf"\b{f}\(" for f in ("min", "max", "clamp", "abs", "mul24", "mad24")],
    "common": [rf"\b{f}\(" for f in ("select", "mix", "step", "sign")],
    "conversions": [r"convert_\w+_sat\(", r"convert_\w+_rte\(", r"convert_\w+_rtz\(", r"convert_\w+_rtp\(",
                    r"convert_\w+_rtn\(", r"convert_float\(", r"\bas_uint\(", r"\bas_float\("],
    "vload/vstore": [r"vload[0-9]+\(", r"vstore[0-9]+\(", r"vload_half\(", r"vstore_half\("],
    "helpers": [r"^static \w+ \w+\(", r"^(?!__kernel)(inline )?\w+ \w+\([^)]*\*"],
}


def test_corpus_covers_the_issue_language():
    import re
    sources = "\n".join(p.read_text() for p in sorted(KERNEL_DIR.glob("*.cl")))
    missing = [f"{what}: {pat}" for what, pats in ISSUE_LANGUAGE.items() for pat in pats
               if not re.search(pat, sources, re.MULTILINE)]
    assert not missing, "no corpus kernel uses: " + "; ".join(missing)


def test_xfail_table_names_cases():
    known = set(mncl_ids()) | set(random_ids(fast_only=False))
    assert not set(MNCL_XFAIL) - known, f"xfail-mncl-{CORPUS_DEVICE}.txt names tests that do not exist"


def _pocl_param(name):
    reason = CASES[name].xfail_pocl
    return pytest.param(name, marks=[pytest.mark.xfail(reason=reason, strict=True)] if reason else [])


@pytest.mark.parametrize("name", [_pocl_param(n) for n in sorted(CASES)])
def test_pocl(name):
    env = pocl()
    if isinstance(env, str):
        pytest.skip(env)
    case = CASES[name]
    result = pocl_result(name)
    if result is None:
        pytest.skip("the OpenCL device has no fp64")
    expected = case.expected(case.initial_buffers())
    for out, value in result.items():
        check(case, out, value, expected[out], "numpy reference")


# mncl also runs every case unoptimised and at -O3: the lowering, the barrier splitting and
# the optimiser meet different IR at each level; and with a global work offset ("off",
# with_global_offset).  A test id is the case name plus "@<variant>".
MNCL_VARIANTS = {"": "", "O0": "-cl-opt-disable", "O3": "-O3", "off": ""}

# An offset launch: ids start at OFFSET, and a prelude makes the kernel index from 0 again
# (get_global_id(d) - get_global_offset(d)), so the case's reference still holds while the
# device computes ids, groups and bounds under an offset.
OFFSET = (7, 3, 2)
OFFSET_PRELUDE = "#define get_global_id(d) (get_global_id(d) - get_global_offset(d))\n#line 1\n"


def with_global_offset(case: Case) -> Case:
    return dataclasses.replace(case, global_offset=OFFSET[:len(case.global_size)],
                               text=OFFSET_PRELUDE + case.source)


def mncl_ids():
    return [f"{n}@{v}" if v else n for n in sorted(CASES) for v in MNCL_VARIANTS
            if not (v == "off" and CASES[n].global_offset)]         # (global_offset has its own)


def offset_family(case: Case) -> tuple:
    """What an offset changes depends on the launch's shape: its dimensions, whether it gives a
    local size, whether its work-groups share __local memory or barriers, and whether it is a
    single work-item (a task)."""
    src = case.source
    return (len(case.global_size), case.local_size is not None, "barrier" in src or "__local" in src,
            int(np.prod(case.global_size)) == 1)


@functools.lru_cache(maxsize=None)
def _fast_offset_cases() -> frozenset:
    """The smallest launch of each offset family (offset_family)."""
    first = {}
    for n, c in sorted(CASES.items(), key=lambda nc: (int(np.prod(nc[1].global_size)), nc[0])):
        if not c.global_offset:
            first.setdefault(offset_family(c), n)
    return frozenset(first.values())


def offset_is_slow(test_id: str) -> bool:
    """The fast suite launches one case of each offset family with an offset; the rest are slow."""
    name, _, variant = test_id.partition("@")
    return variant == "off" and name not in _fast_offset_cases()


def run_and_check_mncl(test_id: str, env=None):
    """Run one case on mncl (with its variant's extra options) and check it against numpy and PoCL.
    ``env`` is (mncl, context, queue) for another device than MNCL_CORPUS_DEVICE's."""
    name, _, variant = test_id.partition("@")
    case = CASES[name]
    extra = MNCL_VARIANTS[variant]
    if extra:
        case = dataclasses.replace(case, options=f"{case.options} {extra}".strip())
    if variant == "off":
        case = with_global_offset(case)
    cl, ctx, queue = env or mncl()
    result = run_with_timeout(run_case, cl, ctx, queue, case)
    expected = case.expected(case.initial_buffers())
    flushed = case.expected(case.initial_buffers(), flush_float_denormals=True) if flushes_float_denormals(ctx) else {}
    for out, value in result.items():
        check(case, out, value, expected[out], "numpy reference", flushed.get(out))
    reference = None if case.xfail_pocl else pocl_result(name)
    if reference is not None:
        for out, value in result.items():
            check(case, out, value, same_mask(reference[out], expected[out]), "PoCL output", flushed.get(out))


def _mncl_param(test_id):
    reason = MNCL_XFAIL.get(test_id)
    marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
    if offset_is_slow(test_id):
        marks.append(pytest.mark.slow)
    return pytest.param(test_id, marks=marks, id=test_id)


@pytest.mark.parametrize("test_id", [_mncl_param(t) for t in mncl_ids()])
def test_mncl(test_id):
    run_and_check_mncl(test_id)


# --------------------------------------------------------------------------------------------
# Differential tests: random well-defined kernels, PoCL's output vs mncl's, bit for bit
#   integer  kernels/randgen.py      every integer operator, conversion, ?:, compound assignment
#   barrier  kernels/randbarrier.py  barriers in uniform branches and loops, odd group sizes; checked
#                                    against gcc-compiled C (threads and pthread barriers), not PoCL
#   vector   kernels/randvec.py      OpenCL's vector rules (no promotion, -1/0, select, _sat ...)
#   float    kernels/randfloat.py    int -> float conversions, rounding modes, exact products only
# --------------------------------------------------------------------------------------------

RANDOM_N = 64                     # work-items of an integer or vector kernel
BARRIER_GROUPS = 4


def random_integer_case(seed: int) -> Case:
    source, inputs, n_out = random_kernel(seed)
    arrays = random_inputs(seed, inputs, RANDOM_N)
    args = [In(name, t.dtype, RANDOM_N, gen=Given(arrays[name])) for name, t in inputs.items()]
    args.append(Out("out", np.uint64, RANDOM_N * n_out))
    return Case(name=f"integer_{seed}", file="<random>", kernel="rnd", global_size=(RANDOM_N,),
                local_size=None, args=tuple(args), reference=None, text=source)


def random_barrier_case(seed: int) -> Case:
    source, ls = random_barrier_kernel(seed)
    n = BARRIER_GROUPS * ls
    return Case(name=f"barrier_{seed}", file="<random>", kernel="rndb", global_size=(n,), local_size=(ls,),
                reference=None, text=source,
                args=(In("in_", np.uint32, n, 0, 2**32 - 1), In("uni", np.uint32, BARRIER_GROUPS, 0, 2**32 - 1),
                      Out("out", np.uint32, n * (N_VARS + 1)), Local("buf", 4 * ls)))


def random_vector_case(seed: int) -> Case:
    source, n, types, n_out = random_vector_kernel(seed)
    arrays = random_inputs(seed, {f"in_{t}": TYPES[t] for t in types}, RANDOM_N * n)
    args = [In(name, a.dtype, a.size, gen=Given(a)) for name, a in arrays.items()]
    args.append(Out("out", np.uint64, RANDOM_N * n_out * n))
    return Case(name=f"vector_{seed}", file="<random>", kernel="rndv", global_size=(RANDOM_N,),
                local_size=None, args=tuple(args), reference=None, text=source)


def random_float_case(seed: int) -> Case:
    source, inputs, n_out = random_float_kernel(seed)
    arrays = random_inputs(seed, inputs, RANDOM_N)
    args = [In(name, t.dtype, RANDOM_N, gen=Given(arrays[name])) for name, t in inputs.items()]
    args.append(Out("out", np.uint32, RANDOM_N * n_out))
    return Case(name=f"float_{seed}", file="<random>", kernel="rndf", global_size=(RANDOM_N,),
                local_size=None, args=tuple(args), reference=None, text=source)


# kind -> (case maker, seeds in the default run, seeds in all); PoCL takes 0.3-1 s per kernel
RANDOM_KINDS = {"integer": (random_integer_case, 24, 2000),
                "barrier": (random_barrier_case, 12, 1000),
                "vector": (random_vector_case, 24, 1000),
                "float": (random_float_case, 12, 1000)}


def random_ids(fast_only: bool = True):
    return [f"{kind}_{seed}" for kind, (_, fast, total) in RANDOM_KINDS.items()
            for seed in range(fast if fast_only else total)]


def _run_on_pocl_here(case: Case):
    """In the isolating process: PoCL's output for ``case``."""
    env = pocl()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                 # clang's "constant operand" remarks on generated code
        return run_case(*env[:3], case)


_isolated = []


def pocl_isolated(case: Case):
    """PoCL's output, computed in a separate process: PoCL's compiler aborts the whole process on some
    valid kernels (seen: "Could not find a dominating alternative variable" on barriers in nested uniform
    loops).  Returns None when it crashed."""
    if not _isolated:                                   # PoCL drops broken.dot files where it crashes: not here
        _isolated.append(concurrent.futures.ProcessPoolExecutor(
            1, mp_context=multiprocessing.get_context("spawn"), initializer=os.chdir, initargs=(tempfile.gettempdir(),)))
        atexit.register(lambda pool=_isolated[0]: pool.shutdown(wait=False, cancel_futures=True))
    try:
        return _isolated[0].submit(_run_on_pocl_here, case).result(timeout=TIMEOUT_S)
    except concurrent.futures.process.BrokenProcessPool:
        _isolated.pop().shutdown(wait=False)
        return None


def run_and_check_random(test_id: str, env=None):
    kind, _, seed = test_id.rpartition("_")
    case = RANDOM_KINDS[kind][0](int(seed))
    ref = None
    if kind == "barrier":                               # gcc-compiled C with real barriers is the reference
        init = case.initial_buffers()
        ref = gcc_reference(case.text, case.local_size[0], BARRIER_GROUPS, init["in_"], init["uni"])
    if ref is not None:
        reference, against = {"out": ref}, "gcc"
    else:
        if isinstance(pocl(), str):
            pytest.skip(pocl())
        reference, against = pocl_isolated(case), "PoCL"
    cl, ctx, queue = env or mncl()
    results = [run_with_timeout(run_case, cl, ctx, queue, dataclasses.replace(case, options=extra))["out"]
               for extra in ("", "-cl-opt-disable")]
    if reference is None:
        if not np.array_equal(*results):
            raise AssertionError("mncl's default and -cl-opt-disable results differ\n" + case.source)
        pytest.skip("PoCL's compiler crashed on this valid kernel (a PoCL bug); mncl agreed with itself")
    want = reference["out"]
    for extra, got in zip(("", "-cl-opt-disable"), results):
        if not np.array_equal(got, want):
            bad = np.flatnonzero(got != want)
            raise AssertionError(f"[{extra or 'default options'}] {bad.size} of {got.size} values differ from "
                                 f"{against} (first at flat index {bad[0]}: mncl {int(got[bad[0]]):#x}, {against} "
                                 f"{int(want[bad[0]]):#x})\n{case.source}")


def _random_param(test_id, fast):
    marks = [] if fast else [pytest.mark.slow]
    if test_id in MNCL_XFAIL:
        marks.append(pytest.mark.xfail(reason=MNCL_XFAIL[test_id], strict=True))
    return pytest.param(test_id, marks=marks, id=test_id)


@pytest.mark.parametrize("test_id", [_random_param(t, t in set(random_ids())) for t in random_ids(fast_only=False)])
def test_random(test_id):
    run_and_check_random(test_id)
