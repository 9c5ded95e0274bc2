"""The SIMD backend's math builtins (translator/backend/mathlib.py) on the emulator device (tiny).

Each builtin runs over a few thousand arguments and is compared with numpy in long
double: the error in ulp of the result type must stay within the bound that
docs/language.md claims (and that OpenCL 1.2's full profile allows).  Special values
(infinities, NaN, zeros, negative arguments) are checked exactly, and the integer
intrinsics bit for bit.  ``python tests/test_mathlib.py`` prints the measured
table that docs/language.md quotes.
"""
import numpy as np
import pytest

import mncl as cl

LD = np.longdouble
N = 1024                         # per launch (launch time on the emulator grows faster than linearly)
rng = np.random.default_rng(20240601)


def _u(lo, hi):
    return lambda: rng.uniform(lo, hi, N)


def _e(lo, hi):                  # log-uniform positive
    return lambda: np.exp(rng.uniform(lo, hi, N))


def _both(lo, hi):               # log-uniform magnitudes, random signs
    return lambda: np.exp(rng.uniform(lo, hi, N)) * rng.choice([-1.0, 1.0], N)


# name: (OpenCL C expression, long double reference, x, y, claimed ulp bound (float, double))
CASES = {
    "exp": ("exp(x)", lambda x, y: np.exp(x), _u(-87, 88), None, (0.501, 1.0)),
    "exp_d": ("exp(x)", lambda x, y: np.exp(x), _u(-700, 709), None, (None, 1.0)),
    "exp2": ("exp2(x)", lambda x, y: np.exp2(x), _u(-125, 127), None, (0.501, 1.0)),
    "exp10": ("exp10(x)", lambda x, y: np.power(LD(10), x), _u(-37, 38), None, (0.501, 1.5)),
    "expm1": ("expm1(x)", lambda x, y: np.expm1(x), _u(-3, 3), None, (0.501, 1.5)),
    "expm1_small": ("expm1(x)", lambda x, y: np.expm1(x), _both(-30, -1), None, (0.501, 1.5)),
    "log": ("log(x)", lambda x, y: np.log(x), _e(-80, 80), None, (0.501, 0.6)),
    "log_near1": ("log(x)", lambda x, y: np.log(x), _u(0.7, 1.45), None, (0.501, 0.6)),
    "log2": ("log2(x)", lambda x, y: np.log2(x), _e(-80, 80), None, (0.501, 0.6)),
    "log10": ("log10(x)", lambda x, y: np.log10(x), _e(-80, 80), None, (0.501, 0.6)),
    "pow": ("pow(x, y)", lambda x, y: np.power(x, y), _e(-5, 5), _u(-15, 15), (0.501, 1.25)),
    "pow_wide": ("pow(x, y)", lambda x, y: np.power(x, y), _e(-700, 700), _u(-1, 1), (None, 1.25)),
    "pow_near1": ("pow(x, y)", lambda x, y: np.power(x, y), _u(0.99, 1.01), _u(-60000, 60000), (None, 1.25)),
    "pow_negx": ("pow(-x, y)", lambda x, y: np.power(-x, y), _u(0.1, 10),
                 lambda: np.round(rng.uniform(-20, 20, N)), (0.501, 1.25)),
    "sin": ("sin(x)", lambda x, y: np.sin(x), _u(-100, 100), None, (0.501, 1.0)),
    "sin_far": ("sin(x)", lambda x, y: np.sin(x), _u(-1e6, 1e6), None, (0.501, 1.0)),
    "cos": ("cos(x)", lambda x, y: np.cos(x), _u(-100, 100), None, (0.501, 1.0)),
    "cos_far": ("cos(x)", lambda x, y: np.cos(x), _u(-1e6, 1e6), None, (0.501, 1.0)),
    "tan": ("tan(x)", lambda x, y: np.tan(x), _u(-100, 100), None, (0.501, 2.5)),
    "sinh": ("sinh(x)", lambda x, y: np.sinh(x), _u(-88, 88), None, (0.501, 2.5)),
    "sinh_small": ("sinh(x)", lambda x, y: np.sinh(x), _both(-20, 0), None, (0.501, 2.5)),
    "cosh": ("cosh(x)", lambda x, y: np.cosh(x), _u(-88, 88), None, (0.501, 2.5)),
    "cosh_d": ("cosh(x)", lambda x, y: np.cosh(x), _u(-710, 710), None, (None, 2.5)),
    "log1p": ("log1p(x)", lambda x, y: np.log1p(x), _u(-0.99, 3), None, (0.501, 1.0)),
    "log1p_small": ("log1p(x)", lambda x, y: np.log1p(x), _both(-40, -1), None, (0.501, 1.0)),
    "tanh": ("tanh(x)", lambda x, y: np.tanh(x), _u(-10, 10), None, (0.501, 2.5)),
    "tanh_small": ("tanh(x)", lambda x, y: np.tanh(x), _both(-20, 0), None, (0.501, 2.5)),
    "hypot": ("hypot(x, y)", lambda x, y: np.hypot(x, y), _both(-40, 40), _both(-40, 40), (0.501, 1.5)),
    "hypot_d": ("hypot(x, y)", lambda x, y: np.hypot(x, y), _both(-700, 700), _both(-700, 700), (None, 1.5)),
    "sqrt_d": ("sqrt(x)", lambda x, y: np.sqrt(x), _e(-740, 709), None, (None, 0.501)),
    # float: the seed and three Newton steps (isel_float.frsqrt32), OpenCL's 2 ulp; double: 1 / sqrt
    "rsqrt": ("rsqrt(x)", lambda x, y: 1 / np.sqrt(x), _e(-87, 88), None, (1.0, 1.5)),
    "rsqrt_ends": ("rsqrt(x)", lambda x, y: 1 / np.sqrt(x), lambda: 2.0 ** rng.uniform(-126, 127.9, N), None,
                   (1.0, 1.5)),
}


@pytest.fixture(scope="module")
def device():
    dev = cl.get_device(machine="tiny")
    ctx = cl.Context([dev])
    return ctx, cl.CommandQueue(ctx)


def run(device, expr, ty, xs, ys=None, out_ty=None):
    """o[i] = expr(a[i], b[i]) over the arrays, on the emulator."""
    ctx, q = device
    out_ty = out_ty or ty
    src = ("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
           f"__kernel void k(__global const {ty} *a, __global const {ty} *b, __global {out_ty} *o)\n"
           f"{{ int i = get_global_id(0); {ty} x = a[i], y = b[i]; o[i] = {expr}; }}\n")
    prg = cl.Program(ctx, src).build()
    dt = {"float": np.float32, "double": np.float64, "char": np.int8, "uchar": np.uint8, "short": np.int16,
          "ushort": np.uint16, "int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64}
    xs = np.ascontiguousarray(xs, dt[ty])
    ys = np.ascontiguousarray(xs if ys is None else ys, dt[ty])
    mf = cl.mem_flags
    a = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=xs)
    b = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=ys)
    out = np.zeros(len(xs), dt[out_ty])
    o = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=out)
    prg.k(q, (len(xs),), None, a, b, o)
    cl.enqueue_copy(q, out, o)
    return out


def ulp_error(got, ref, ty):
    """|got - ref| in ulp of the result type at ref (rounded to the type)."""
    dt = np.float32 if ty == "float" else np.float64
    ref = np.asarray(ref, LD)
    with np.errstate(over="ignore"):
        r = ref.astype(dt)
    ulp = np.spacing(np.abs(r)).astype(LD)
    return np.abs(got.astype(LD) - ref) / ulp


def measure(device, name, ty, launches=1):
    """The largest error in ulp over `launches` x N random arguments."""
    expr, ref, gx, gy, _ = CASES[name]
    dt = np.float32 if ty == "float" else np.float64
    worst = 0.0
    for _ in range(launches):
        xs = gx().astype(dt)
        ys = gy().astype(dt) if gy else xs
        got = run(device, expr, ty, xs, ys)
        want = ref(xs.astype(LD), ys.astype(LD))
        tiny = np.finfo(dt).tiny
        with np.errstate(over="ignore"):
            keep = np.isfinite(want.astype(dt)) & (np.abs(want) >= tiny)    # subnormal results flush to 0 here
        assert keep.sum() > N // 2
        worst = max(worst, float(ulp_error(got[keep], want[keep], ty).max()))
    return worst


@pytest.mark.parametrize("ty", ["float", "double"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_accuracy_in_ulp(device, name, ty):
    bound = CASES[name][4][ty == "double"]
    if bound is None:
        pytest.skip("double-only range")
    err = measure(device, name, ty)
    assert err <= bound, f"{name} ({ty}): {err:.3f} ulp > {bound}"


# ------------------------------------------------------------------------------- special values
INF, NAN = np.inf, np.nan


@pytest.mark.parametrize("ty", ["float", "double"])
@pytest.mark.parametrize("expr, cases", [
    ("exp(x)", [(INF, INF), (-INF, 0.0), (NAN, NAN), (0.0, 1.0), (-0.0, 1.0), (1000.0, INF), (-1000.0, 0.0)]),
    ("exp2(x)", [(INF, INF), (-INF, 0.0), (NAN, NAN), (0.0, 1.0), (3.0, 8.0), (-2.0, 0.25), (2000.0, INF)]),
    ("exp10(x)", [(INF, INF), (-INF, 0.0), (NAN, NAN), (0.0, 1.0), (2.0, 100.0), (400.0, INF)]),
    ("expm1(x)", [(INF, INF), (-INF, -1.0), (NAN, NAN), (0.0, 0.0), (-100.0, -1.0), (1000.0, INF)]),
    ("log(x)", [(0.0, -INF), (-0.0, -INF), (-1.0, NAN), (INF, INF), (-INF, NAN), (NAN, NAN), (1.0, 0.0)]),
    ("log2(x)", [(0.0, -INF), (-2.0, NAN), (INF, INF), (NAN, NAN), (1.0, 0.0), (8.0, 3.0), (0.125, -3.0)]),
    ("log10(x)", [(0.0, -INF), (-2.0, NAN), (INF, INF), (NAN, NAN), (1.0, 0.0), (1000.0, 3.0)]),
    ("sin(x)", [(INF, NAN), (-INF, NAN), (NAN, NAN), (0.0, 0.0), (-0.0, -0.0)]),
    ("cos(x)", [(INF, NAN), (-INF, NAN), (NAN, NAN), (0.0, 1.0), (-0.0, 1.0)]),
    ("tan(x)", [(INF, NAN), (NAN, NAN), (0.0, 0.0), (-0.0, -0.0)]),
    ("sinh(x)", [(INF, INF), (-INF, -INF), (NAN, NAN), (0.0, 0.0), (-0.0, -0.0), (1000.0, INF)]),
    ("cosh(x)", [(INF, INF), (-INF, INF), (NAN, NAN), (0.0, 1.0), (-1000.0, INF)]),
    ("log1p(x)", [(INF, INF), (-1.0, -INF), (-2.0, NAN), (NAN, NAN), (0.0, 0.0), (-INF, NAN)]),
    ("tanh(x)", [(INF, 1.0), (-INF, -1.0), (NAN, NAN), (0.0, 0.0), (-0.0, -0.0), (30.0, 1.0), (-30.0, -1.0)]),
    ("sqrt(x)", [(INF, INF), (-INF, NAN), (NAN, NAN), (0.0, 0.0), (-0.0, -0.0), (-1.0, NAN), (4.0, 2.0)]),
    ("rsqrt(x)", [(INF, 0.0), (-INF, NAN), (NAN, NAN), (0.0, INF), (-0.0, -INF), (-1.0, NAN), (4.0, 0.5),
                  (0.25, 2.0), (1.0, 1.0)]),
    ("rint(x)", [(0.5, 0.0), (1.5, 2.0), (2.5, 2.0), (-0.5, -0.0), (-1.5, -2.0), (-2.5, -2.0), (0.49999997, 0.0),
                 (INF, INF), (-INF, -INF), (NAN, NAN), (-0.0, -0.0), (1e30, 1e30)]),
    ("ceil(x)", [(0.5, 1.0), (-0.5, -0.0), (0.0, 0.0), (-0.0, -0.0), (-1.5, -1.0), (INF, INF), (NAN, NAN)]),
    ("trunc(x)", [(0.5, 0.0), (-0.5, -0.0), (-1.5, -1.0), (2.7, 2.0), (-2.7, -2.0), (INF, INF), (NAN, NAN)]),
    ("round(x)", [(0.5, 1.0), (-0.5, -1.0), (1.5, 2.0), (2.5, 3.0), (-2.5, -3.0), (0.49999997, 0.0),
                  (INF, INF), (NAN, NAN), (-0.0, -0.0), (-0.49999997, -0.0)]),
])
def test_special_values(device, ty, expr, cases):
    if expr == "sqrt(x)" and ty == "float":
        pytest.skip("float sqrt is codegen's")
    dt = np.float32 if ty == "float" else np.float64
    x = np.array([c[0] for c in cases], dt)
    want = np.array([c[1] for c in cases], dt)
    got = run(device, expr, ty, x)
    np.testing.assert_array_equal(got, want, err_msg=f"{expr} at {x}")
    np.testing.assert_array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0]), err_msg=expr)


POW_SPECIALS = [  # (x, y, pow(x, y)) per C99 Annex F / OpenCL
    (NAN, 0.0, 1.0), (1.0, NAN, 1.0), (-1.0, INF, 1.0), (-1.0, -INF, 1.0), (NAN, 1.0, NAN), (2.0, NAN, NAN),
    (-2.0, 0.5, NAN), (-8.0, 1.0 / 3, NAN), (-2.0, 3.0, -8.0), (-2.0, 2.0, 4.0), (-2.0, -3.0, -0.125),
    (0.0, -3.0, INF), (-0.0, -3.0, -INF), (0.0, -2.0, INF), (-0.0, -2.0, INF), (0.0, -0.5, INF),
    (0.0, 3.0, 0.0), (-0.0, 3.0, -0.0), (-0.0, 2.0, 0.0), (-0.0, 0.5, 0.0), (0.5, INF, 0.0), (2.0, INF, INF),
    (0.5, -INF, INF), (2.0, -INF, 0.0), (INF, 2.0, INF), (INF, -2.0, 0.0), (-INF, 3.0, -INF), (-INF, 2.0, INF),
    (-INF, -3.0, -0.0), (-INF, -2.0, 0.0), (-INF, 0.5, INF), (10.0, 400.0, INF), (10.0, -400.0, 0.0),
    (2.0, 10.0, 1024.0), (4.0, 0.5, 2.0), (1e300, 2.0, INF), (-1.0, 5.0, -1.0), (-1.0, 1e300, 1.0),
]


@pytest.mark.parametrize("ty", ["float", "double"])
def test_pow_special_values(device, ty):
    dt = np.float32 if ty == "float" else np.float64
    with np.errstate(over="ignore"):
        x, y, want = (np.array([c[k] for c in POW_SPECIALS], dt) for k in range(3))
    got = run(device, "pow(x, y)", ty, x, y)
    np.testing.assert_array_equal(got, want, err_msg=f"pow({x}, {y})")
    np.testing.assert_array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0]))


@pytest.mark.parametrize("ty", ["float", "double"])
def test_hypot_and_copysign_special_values(device, ty):
    dt = np.float32 if ty == "float" else np.float64
    t = 2.0 ** -60
    x = np.array([INF, NAN, NAN, 0.0, -0.0, 3.0, -INF, 0.75 * t, 3e38], dt)
    y = np.array([NAN, -INF, 1.0, 0.0, 0.0, -4.0, 2.0, -t, 3e38], dt)
    np.testing.assert_array_equal(run(device, "hypot(x, y)", ty, x, y),
                                  np.array([INF, INF, NAN, 0, 0, 5, INF, 1.25 * t, INF if ty == "float" else 3e38 * 2 ** 0.5], dt))
    np.testing.assert_array_equal(run(device, "copysign(x, y)", ty, x, y), np.copysign(x, y))


def test_double_sqrt_is_correctly_rounded_near_midpoints(device):
    """Squares of doubles and their neighbours: the cases where sqrt lies closest to a midpoint."""
    s = rng.uniform(1, 2, N // 2) * 2.0 ** rng.integers(-500, 500, N // 2)
    x = s * s
    x = np.concatenate([x, np.nextafter(x, 0), np.nextafter(x, np.inf), 2.0 ** rng.integers(-1074, -1023, 64)])
    got = run(device, "sqrt(x)", "double", x)
    want = np.sqrt(x)                                         # correctly rounded (IEEE)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("ty", ["float", "double"])
def test_ldexp_and_pown(device, ty):
    """ldexp(x, n) is x * 2^n (the front end's; LLVM turns 2^n into llvm.ldexp(1, n)), exact
    while 2^n and the product are normal numbers; pown is pow."""
    dt = np.float32 if ty == "float" else np.float64
    big = 1000 if ty == "double" else 120
    x = np.concatenate([rng.uniform(-4, 4, N // 2), [INF, -INF, 1.0, 3.0, 0.75]]).astype(dt)
    n = np.concatenate([rng.integers(-big, big, N // 2), [-3, 2, 3000, -3000, big]]).astype(dt)
    got = run(device, "ldexp(x, (int)y)", ty, x, n)
    with np.errstate(over="ignore", under="ignore"):
        want = np.ldexp(x, n.astype(np.int64)).astype(dt)
    want[np.abs(want) < np.finfo(dt).tiny] = 0                           # no subnormals on the machine
    np.testing.assert_array_equal(got, want)
    x = rng.uniform(0.5, 2, N // 2).astype(dt)
    k = rng.integers(-20, 20, N // 2).astype(dt)
    err = ulp_error(run(device, "pown(x, (int)y)", ty, x, k), np.power(x.astype(LD), k.astype(LD)), ty)
    assert err.max() <= 1.25


@pytest.mark.parametrize("ty", ["float", "double"])
def test_rounding_functions_are_exact(device, ty):
    """Every value of a wide range, and round's hardest case 0.5 - ulp/2."""
    dt = np.float32 if ty == "float" else np.float64
    x = np.concatenate([rng.uniform(-1e3, 1e3, N // 2), rng.uniform(-4, 4, N // 2) * 2.0 ** rng.integers(-3, 60, N // 2),
                        np.arange(-20, 20) * 0.25, [0.49999999999999994, -0.49999999999999994]]).astype(dt)
    for expr, ref in (("rint(x)", np.rint), ("ceil(x)", np.ceil), ("trunc(x)", np.trunc),
                      ("round(x)", lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5)), ("floor(x)", np.floor)):
        want = ref(x.astype(LD)).astype(dt)
        np.testing.assert_array_equal(run(device, expr, ty, x), want, err_msg=expr)


# ------------------------------------------------------------------------------- integers
INT_TYPES = [("char", np.int8), ("uchar", np.uint8), ("short", np.int16), ("ushort", np.uint16),
             ("long", np.int64), ("ulong", np.uint64), ("int", np.int32), ("uint", np.uint32)]


def _ints(dt, n=N // 2):
    info = np.iinfo(dt)
    v = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    edge = np.array([info.min, info.max, 0, 1, info.max // 2 + 1], dtype=dt)
    small = rng.integers(max(info.min, -300), min(info.max, 300), n // 4).astype(dt)
    return np.concatenate([edge, v, small, (v >> (rng.integers(0, 8 * v.itemsize, n) % (8 * v.itemsize)).astype(dt))])


@pytest.mark.parametrize("ty, dt", INT_TYPES)
def test_integer_min_max_abs(device, ty, dt):
    x = _ints(dt)
    y = rng.permutation(x)
    np.testing.assert_array_equal(run(device, "max(x, y)", ty, x, y), np.maximum(x, y))
    np.testing.assert_array_equal(run(device, "min(x, y)", ty, x, y), np.minimum(x, y))
    np.testing.assert_array_equal(run(device, "clamp(x, (%s)10, (%s)100)" % (ty, ty), ty, x),
                                  np.clip(x, 10, 100).astype(dt))
    if np.iinfo(dt).min < 0:
        uty = "u" + ty
        want = np.abs(x.astype(np.int64) if dt != np.int64 else x).astype(np.dtype(dt).str.replace("i", "u"))
        np.testing.assert_array_equal(run(device, "abs(x)", ty, x, out_ty=uty), want)


@pytest.mark.parametrize("ty, dt", INT_TYPES)
def test_popcount_clz_ctz(device, ty, dt):
    x = _ints(dt)
    bits = 8 * np.dtype(dt).itemsize
    u = x.view(np.dtype(dt).str.replace("i", "u")).astype(object)
    pop = np.array([bin(int(v)).count("1") for v in u], dt)
    clz = np.array([bits - int(v).bit_length() for v in u], dt)
    ctz = np.array([bits if v == 0 else (int(v) & -int(v)).bit_length() - 1 for v in u], dt)
    np.testing.assert_array_equal(run(device, "popcount(x)", ty, x), pop)
    np.testing.assert_array_equal(run(device, "clz(x)", ty, x), clz)
    np.testing.assert_array_equal(run(device, "ctz(x)", ty, x), ctz)


if __name__ == "__main__":        # the measured table of docs/language.md (16 x N arguments per row)
    dev = cl.get_device(machine="tiny")
    ctx = cl.Context([dev])
    d = (ctx, cl.CommandQueue(ctx))
    for name in sorted(CASES):
        row = [f"{name:12s}"]
        for i, ty in enumerate(("float", "double")):
            row.append("    -   " if CASES[name][4][i] is None else f"{measure(d, name, ty, 16):8.3f}")
        print(" ".join(row))
