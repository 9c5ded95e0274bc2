"""Properties of argument handling: any value either reaches the kernel exactly or is an mncl.Error.

Random Python and numpy values are passed to a kernel that stores its
scalar arguments (test_runtime_ir's ``scalars``); whatever is accepted must
arrive bit-exact as the C conversion of an in-range value would give it, and
whatever is refused must be a LogicError naming the argument, never another
exception, a wrap-around or a truncation.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mncl as cl
from test_runtime_ir import program_from_ir

PARAMS = {1: np.int8, 2: np.uint16, 3: np.float64, 4: np.int64, 5: np.float32}
DEFAULTS = [np.int8(0), np.uint16(0), np.float64(0), np.int64(0), np.float32(0)]


@pytest.fixture(scope="module")
def env():
    ctx = cl.create_some_context()
    q = cl.CommandQueue(ctx)
    prg = program_from_ir(ctx, "scalars")
    out = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 40)
    return ctx, q, prg, out


numpy_scalars = st.sampled_from([np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
                                 np.uint64, np.float16, np.float32, np.float64, np.bool_]).flatmap(
    lambda t: (st.integers(np.iinfo(t).min, np.iinfo(t).max).map(t) if np.dtype(t).kind in "iu"
               else st.booleans().map(t) if t is np.bool_
               else st.floats(allow_nan=False, width=np.dtype(t).itemsize * 8).map(t)))
values = st.one_of(st.integers(-(2 ** 70), 2 ** 70), st.integers().map(lambda i: i * 10 ** 400), st.floats(allow_nan=False), st.booleans(),
                   numpy_scalars, st.text(max_size=3), st.none(), st.lists(st.integers(), max_size=3))


def expected_value(value, dt):
    """What the kernel must see if ``value`` is accepted for a parameter of dtype ``dt`` (None: refuse)."""
    dt = np.dtype(dt)
    if isinstance(value, np.generic):
        if value.dtype.itemsize != dt.itemsize:
            return None
        if value.dtype == dt:
            return value
        value = value.item()
    if isinstance(value, bool):
        value = int(value)
    if dt.kind in "iu":
        if isinstance(value, int) and np.iinfo(dt).min <= value <= np.iinfo(dt).max:
            return dt.type(value)
        return None
    if isinstance(value, (int, float)):
        if isinstance(value, int) and abs(value) > 2 ** 1100:
            return dt.type(0) if value == 0 else None
        with np.errstate(over="ignore"):
            v = dt.type(value)
        if isinstance(value, int) and np.isfinite(v) and int(v) != value:
            return None          # an integer the float type cannot hold exactly is refused, not rounded
        return None if np.isinf(v) and not np.isinf(value) else v
    return None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(index=st.sampled_from(sorted(PARAMS)), value=values)
def test_scalar_values_arrive_exactly_or_are_refused(env, index, value):
    ctx, q, prg, out = env
    knl = cl.Kernel(prg, "scalars")
    args = [out] + DEFAULTS
    knl.set_args(*args)
    want = expected_value(value, PARAMS[index])
    try:
        knl.set_arg(index, value)
    except cl.LogicError as e:
        assert want is None, f"refused a valid value {value!r}: {e}"
        assert f"argument {index}" in str(e)
        return
    assert want is not None, f"accepted {value!r} ({type(value).__name__}) for {np.dtype(PARAMS[index])}"
    knl(q, (1,), (1,), *args[:index], value, *args[index + 1:])
    res = np.empty(5, np.int64)
    cl.enqueue_copy(q, res, out)
    got = res[index - 1]
    if np.dtype(PARAMS[index]).kind == "f":
        fv = float(want)
        if np.isfinite(fv) and abs(fv) < 2 ** 62:
            assert got == int(fv)         # the kernel truncates to long
    else:
        assert got == int(want)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(gsize=st.lists(st.integers(-2, 40), min_size=0, max_size=4),
       lsize=st.one_of(st.none(), st.lists(st.integers(-1, 40), min_size=0, max_size=4)),
       offset=st.one_of(st.none(), st.lists(st.integers(-1, 5), min_size=0, max_size=4)))
def test_any_ndrange_runs_or_is_a_logic_error(env, gsize, lsize, offset):
    ctx, q, prg, out = env
    knl = cl.Kernel(prg, "scalars")
    knl.set_args(out, *DEFAULTS)
    try:
        ev = cl.enqueue_nd_range_kernel(q, knl, tuple(gsize), None if lsize is None else tuple(lsize),
                                        None if offset is None else tuple(offset))
    except cl.LogicError as e:
        assert e.code_name.startswith("INVALID_")
        return
    ev.wait()
    assert 1 <= len(gsize) <= 3 and all(g > 0 for g in gsize)
    if lsize is not None:
        assert all(g % l == 0 for g, l in zip(gsize, lsize))
