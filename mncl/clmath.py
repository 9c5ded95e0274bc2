"""mncl.clmath: OpenCL C's math builtins on mncl.array Arrays (pyopencl.clmath's functions).

    import mncl.clmath as clmath
    y = clmath.sin(x)                    # a new Array: one generated kernel, run on x's queue

Each function is an element-wise kernel calling the builtin of the same name on a float or
double Array (an integer Array is converted to float64 first, as numpy does).  The builtins'
accuracy on each device is docs/language.md's table; a builtin a device lacks is a build
error naming it.
"""
from __future__ import annotations

import numpy as np

from .array import Array, _kernel, empty
from .tools import VectorArg, c_type

UNARY = ("acos", "acosh", "acospi", "asin", "asinh", "asinpi", "atan", "atanh", "atanpi", "cbrt", "ceil",
         "cos", "cosh", "cospi", "erf", "erfc", "exp", "exp2", "exp10", "expm1", "fabs", "floor", "lgamma",
         "log", "log2", "log10", "log1p", "logb", "rint", "round", "rsqrt", "sin", "sinh", "sinpi", "sqrt",
         "tan", "tanh", "tanpi", "tgamma", "trunc")
BINARY = ("atan2", "atan2pi", "fmod", "hypot", "pow", "copysign", "fdim", "nextafter", "remainder")


def _float(a: Array) -> Array:
    return a if a.dtype.kind == "f" else a.astype(np.float64)


def _unary(name):
    def fn(a: Array, queue=None) -> Array:
        a = _float(a)
        out = empty(queue or a.queue, a.shape, a.dtype)
        _kernel(a.context, (name, a.dtype), [VectorArg(a.dtype, "z"), VectorArg(a.dtype, "x")],
                f"z[i] = {name}(x[i])")(out, a)
        return out
    fn.__name__ = name
    fn.__doc__ = f"{name}(x) of every element, as a new Array."
    return fn


def _binary(name):
    def fn(a: Array, b, queue=None) -> Array:
        a = _float(a)
        if not isinstance(b, Array):
            b = empty(a.queue, a.shape, a.dtype).fill(b)
        b = _float(b)
        dt = np.result_type(a.dtype, b.dtype)
        ct = c_type(dt)
        out = empty(queue or a.queue, a.shape, dt)
        _kernel(a.context, (name, a.dtype, b.dtype), [VectorArg(dt, "z"), VectorArg(a.dtype, "x"),
                                                       VectorArg(b.dtype, "y")],
                f"z[i] = {name}(({ct})x[i], ({ct})y[i])")(out, a, b)
        return out
    fn.__name__ = name
    fn.__doc__ = f"{name}(x, y) of every pair of elements, as a new Array."
    return fn


for _n in UNARY:
    globals()[_n] = _unary(_n)
for _n in BINARY:
    globals()[_n] = _binary(_n)
del _n
