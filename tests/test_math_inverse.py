"""The inverse trigonometric and hyperbolic builtins and cbrt on the emulator device (issue 26's
math builtins, translator/backend/mathlib.py): measured ULP errors against numpy's float64
functions, within OpenCL's full-profile limits, and the C99 special values; plus the NaN a
double -> float conversion used to lose."""
import numpy as np
import pytest

import mncl as cl

# OpenCL 1.2 full profile, float and double (the *pi forms of the float functions too)
LIMIT = {"atan": 5, "asin": 4, "acos": 4, "atanpi": 5, "asinpi": 5, "acospi": 5, "asinh": 4, "acosh": 4,
         "atanh": 5, "cbrt": 2, "atan2": 6, "atan2pi": 6}
DOMAIN = {"atan": (-20, 20), "asin": (-1, 1), "acos": (-1, 1), "atanpi": (-20, 20), "asinpi": (-1, 1),
          "acospi": (-1, 1), "asinh": (-60, 60), "acosh": (1, 60), "atanh": (-1, 1), "cbrt": (-1e4, 1e4)}
REF = {"atan": np.arctan, "asin": np.arcsin, "acos": np.arccos, "atanpi": lambda x: np.arctan(x) / np.pi,
       "asinpi": lambda x: np.arcsin(x) / np.pi, "acospi": lambda x: np.arccos(x) / np.pi, "asinh": np.arcsinh,
       "acosh": np.arccosh, "atanh": np.arctanh, "cbrt": np.cbrt}
FP64 = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"


@pytest.fixture(scope="module")
def ctxq():
    ctx = cl.Context([cl.get_device("emulator", "tiny")])
    return ctx, cl.CommandQueue(ctx)


def run(ctxq, body, arrays, dtype):
    ctx, q = ctxq
    t = "double" if dtype == np.float64 else "float"
    params = ", ".join(f"__global {t} *{n}" for n in "xyz"[:len(arrays)])
    prg = cl.Program(ctx, f"{FP64}__kernel void k({params}) {{ int i = get_global_id(0); {body} }}").build()
    bufs = [cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a.astype(dtype)) for a in arrays]
    prg.k(q, (arrays[0].size,), None, *bufs)
    out = np.empty(arrays[0].size, dtype)
    cl.enqueue_copy(q, out, bufs[0])
    q.finish()
    return out


def ulp_error(got, want, dtype):
    """max |got - want| in units of the last place of want rounded to dtype (0 where equal)."""
    w = want.astype(dtype)
    same = (got == w) | (np.isnan(got) & np.isnan(w))
    with np.errstate(all="ignore"):
        err = np.where(same, 0.0, np.abs(got.astype(np.float64) - want) / np.spacing(np.abs(w)).astype(np.float64))
    return float(np.max(err))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float", "double"])
@pytest.mark.parametrize("name", sorted(DOMAIN))
def test_unary_within_opencl_ulps(ctxq, name, dtype):
    lo, hi = DOMAIN[name]
    x = np.random.default_rng(len(name)).uniform(lo, hi, 2000).astype(dtype)
    got = run(ctxq, f"x[i] = {name}(x[i]);", [x], dtype)
    with np.errstate(all="ignore"):
        err = ulp_error(got, REF[name](x.astype(np.float64)), dtype)
    # numpy's double functions are within about an ulp themselves
    assert err <= (LIMIT[name] if dtype == np.float32 else LIMIT[name] + 1), err


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float", "double"])
@pytest.mark.parametrize("name", ["atan2", "atan2pi"])
def test_atan2_within_ulps_and_its_special_cases(ctxq, name, dtype):
    special = np.array([0., -0., 1., -1., np.inf, -np.inf, np.nan, 3.0, -3.0, 1e-30])
    rng = np.random.default_rng(5)
    y = np.concatenate([rng.uniform(-10, 10, 1500), rng.uniform(-1e20, 1e20, 100), np.repeat(special, special.size)])
    x = np.concatenate([rng.uniform(-10, 10, 1500), rng.uniform(-1e-5, 1e-5, 100), np.tile(special, special.size)])
    y, x = y.astype(dtype), x.astype(dtype)
    got = run(ctxq, f"x[i] = {name}(x[i], y[i]);", [y, x], dtype)
    want = np.arctan2(y.astype(np.float64), x.astype(np.float64)) / (np.pi if name == "atan2pi" else 1)
    assert ulp_error(got, want, dtype) <= (LIMIT[name] if dtype == np.float32 else LIMIT[name] + 1)
    n = special.size ** 2
    num = ~np.isnan(want[-n:])
    assert np.array_equal(np.signbit(got[-n:][num]), np.signbit(want[-n:][num].astype(dtype)))   # signed zeros


def test_special_values(ctxq):
    x = np.array([0., -0., 1., -1., np.inf, -np.inf, np.nan, 2., -2.], np.float32)
    with np.errstate(all="ignore"):
        for name in ("atan", "asin", "acos", "asinh", "acosh", "atanh", "cbrt"):
            got = run(ctxq, f"x[i] = {name}(x[i]);", [x], np.float32)
            want = REF[name](x.astype(np.float64)).astype(np.float32)
            assert np.array_equal(got, want, equal_nan=True), (name, got, want)
            num = ~np.isnan(want)
            assert np.array_equal(np.signbit(got[num]), np.signbit(want[num])), name


def test_a_nan_and_a_negative_zero_survive_narrowing_from_double(ctxq):
    """(float) of a double NaN or -0 made by a math function's special case: the MAU's narrowing made
    NaN infinity and -0 +0 (atan2 of a NaN came back inf, atan2pi(-0, 1) +0), in either float of a
    long word."""
    x = np.array([np.nan, 1.0, -np.nan, 4.0, 9.0, np.nan, -0.0, 0.0, -0.0], np.float32)
    got = run(ctxq, "x[i] = (float)atan2((double)x[i], 1.0);", [x], np.float32)   # (LLVM shrinks a sqrt)
    assert np.isnan(got[[0, 2, 5]]).all()
    assert np.array_equal(got[[1, 3, 4]], np.arctan2(x[[1, 3, 4]].astype(np.float64), 1.0).astype(np.float32))
    assert np.array_equal(got[6:], [0, 0, 0]) and np.array_equal(np.signbit(got[6:]), [True, False, True])


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float", "double"])
def test_logb_and_fdim(ctxq, dtype):
    rng = np.random.default_rng(9)
    x = np.concatenate([rng.uniform(-1e6, 1e6, 500), 2.0 ** rng.integers(-120, 120, 100),
                        [0., -0., 1., -1., 0.75, np.inf, -np.inf, np.nan, 2.0 ** -126]]).astype(dtype)
    y = np.concatenate([rng.uniform(-1e6, 1e6, 600), [1., -1., 1., 2., 0., 1., np.inf, 1., 0.]]).astype(dtype)
    got = run(ctxq, "x[i] = logb(x[i]);", [x], dtype)
    with np.errstate(all="ignore"):
        want = np.where(np.isnan(x), np.nan, np.where(x == 0, -np.inf, np.where(np.isinf(x), np.inf,
                        np.floor(np.log2(np.abs(x.astype(np.float64)))))))
    assert np.array_equal(got, want.astype(dtype), equal_nan=True)
    got = run(ctxq, "x[i] = fdim(x[i], y[i]);", [x, y], dtype)
    with np.errstate(all="ignore"):
        want = np.where(np.isnan(x) | np.isnan(y), np.nan, np.where(x > y, x - y, 0)).astype(dtype)
    assert np.array_equal(got, want, equal_nan=True) and not np.signbit(got[got == 0]).any()
