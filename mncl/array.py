"""mncl.array: PyOpenCL's device arrays (pyopencl.array), the part its examples use.

    import mncl.array as cla
    a = cla.to_device(queue, np.arange(10, dtype=np.float32))
    b = (2 * a + 1).get()                  # element-wise kernels, generated and cached per context
    s = cla.sum(a).get()                   # a two-launch reduction (mncl.reduction)

An Array is a contiguous C-order block in one Buffer of its queue's context (base_data, from byte
`offset`): shape, dtype, size, nbytes, ndim, data.  Arithmetic (+ - * / with arrays of the same
shape and with scalars, unary -), comparisons (int8 results, as PyOpenCL's), fill, astype, copy,
reshape and indexing (a[k], a[lo:hi] along the first axis: views of the same buffer, which the
generated kernels take at their offset; assignment through them), get / set, and the functions
to_device, empty, zeros, empty_like, zeros_like, arange, sum, dot, vdot, max, min, maximum,
minimum, if_positive.  Every operation is an OpenCL C kernel run on the queue's device (never
numpy on the host).  Not yet: strided views, Fortran-order arrays, broadcasting, complex dtypes
(docs/runtime.md lists what is supported).
"""
from __future__ import annotations

import builtins
import numbers
import weakref

import numpy as np

from .elementwise import ElementwiseKernel
from .memory import Buffer
from .constants import mem_flags
from .reduction import ReductionKernel
from .tools import VectorArg, ScalarArg, c_type
from .transfers import enqueue_copy

_KERNELS = weakref.WeakKeyDictionary()        # context -> {key: kernel}


def _cached(ctx, key, make):
    per = _KERNELS.setdefault(ctx, {})
    k = per.get(key)
    if k is None:
        k = per[key] = make()
    return k


def _scalar_type(x, other: np.dtype) -> np.dtype:
    """The dtype a scalar operand takes next to an array of dtype `other` (Python scalars are weak,
    as in NumPy 2)."""
    if isinstance(x, (bool, numbers.Integral)) and not isinstance(x, np.generic):
        return other
    if isinstance(x, numbers.Real) and not isinstance(x, np.generic):
        return other if other.kind == "f" else np.dtype(np.float64)
    return np.result_type(np.asarray(x).dtype, other)


class ArrayHasOffsetError(ValueError):
    """An Array view's .data asked for: it starts past its buffer's start (pyopencl.array's name)."""


class Array:
    """A device array (pyopencl.array.Array's constructor and attributes)."""

    def __init__(self, cq, shape, dtype, order="C", allocator=None, data=None, offset=0, strides=None, events=None,
                 **kwargs):
        if order not in ("C", "c"):
            raise NotImplementedError("mncl.array: only C-order arrays")
        if strides is not None and tuple(strides) != _c_strides(
                (shape,) if isinstance(shape, numbers.Integral) else tuple(shape), np.dtype(dtype).itemsize):
            raise NotImplementedError("mncl.array: only contiguous C-order strides")
        self.queue = cq
        self.context = cq.context
        self.shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        c_type(self.dtype)                                  # a scalar type OpenCL C has
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.nbytes = self.size * self.dtype.itemsize
        self.ndim = len(self.shape)
        self.strides = _c_strides(self.shape, self.dtype.itemsize)
        self.base_data = data if data is not None else Buffer(self.context, mem_flags.READ_WRITE,
                                                              builtins.max(self.nbytes, 1))
        self.offset = int(offset)                           # bytes from the buffer's start (a view's)
        self.events = list(events or [])                    # what must finish before the data is valid

    def add_event(self, evt) -> None:
        """An event the array's data waits for (the kernel that writes it), as PyOpenCL's."""
        if evt is not None:
            self.events.append(evt)

    def finish(self) -> None:
        """Wait for the array's events."""
        for e in self.events:
            e.wait()
        self.events = []

    @property
    def data(self):
        """The Buffer holding the array; a view starting past the buffer's start has none of its own
        (mncl has no sub-buffers): ArrayHasOffsetError, as PyOpenCL's when it cannot make one."""
        if self.offset:
            raise ArrayHasOffsetError(f"this view starts {self.offset} bytes into its buffer: pass base_data and "
                                      f"offset, or copy() it")
        return self.base_data

    # -- host transfers -----------------------------------------------------------------------
    def get(self, queue=None, ary=None, async_=False, **kwargs) -> np.ndarray:
        out = np.empty(self.shape, self.dtype) if ary is None else ary
        if out.shape != self.shape or out.dtype != self.dtype:
            raise TypeError(f"Array.get: ary must be {self.shape} {self.dtype}, got {out.shape} {out.dtype}")
        if self.size:
            enqueue_copy(queue or self.queue, out, self.base_data, device_offset=self.offset,
                         wait_for=self.events or None)
            (queue or self.queue).finish()
        return out

    def set(self, ary, queue=None, async_=False, **kwargs) -> None:
        ary = np.ascontiguousarray(ary)
        if ary.shape != self.shape:
            raise ValueError(f"Array.set: shape {ary.shape} is not the array's {self.shape}")
        if ary.dtype != self.dtype:
            raise TypeError(f"Array.set: dtype {ary.dtype} is not the array's {self.dtype}")
        if self.size:
            enqueue_copy(queue or self.queue, self.base_data, ary, device_offset=self.offset,
                         wait_for=self.events or None)
            (queue or self.queue).finish()
            self.events = []

    def __repr__(self):
        return f"mncl.array.Array({self.get()!r})"

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    # -- shape and type ---------------------------------------------------------------------------
    def reshape(self, *shape, order="C"):
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], numbers.Integral) else shape
        shape = tuple(np.empty(self.size, np.int8).reshape(shape).shape)
        return self._view(shape, 0)

    def _view(self, shape, skip: int) -> "Array":
        """shape of the same buffer from `skip` bytes further in, waiting for the same events."""
        return Array(self.queue, shape, self.dtype, data=self.base_data, offset=self.offset + skip,
                     events=self.events)

    def __getitem__(self, key):
        """A view of the same buffer: an integer or a slice of step 1 along the first axis (a
        contiguous range), or () for the whole array."""
        if (isinstance(key, tuple) and not key) or key is Ellipsis:
            return self._view(self.shape, 0)
        if isinstance(key, tuple) and len(key) == 1:
            key = key[0]
        if not self.shape:
            raise IndexError("a 0-d array cannot be indexed")
        row = self.strides[0]
        if isinstance(key, numbers.Integral):
            k = int(key) + (self.shape[0] if key < 0 else 0)
            if not 0 <= k < self.shape[0]:
                raise IndexError(f"index {key} is out of bounds for an axis of length {self.shape[0]}")
            return self._view(self.shape[1:], k * row)
        if isinstance(key, slice):
            start, stop, step = key.indices(self.shape[0])
            if step != 1:
                raise NotImplementedError("mncl.array: slices with a step other than 1 (strided views)")
            length = builtins.max(0, stop - start)
            return self._view((length,) + self.shape[1:], start * row)
        raise NotImplementedError(f"mncl.array: index {key!r} (integers and slices of step 1 along the "
                                  f"first axis are supported)")

    def __setitem__(self, key, value):
        view = self[key]
        if isinstance(value, Array):
            if value.shape != view.shape:
                raise ValueError(f"cannot assign an array of shape {value.shape} to a view of shape {view.shape}")
            view._into(value)
        else:
            view.fill(value)

    def ravel(self):
        return self.reshape(self.size)

    def astype(self, dtype, queue=None):
        dtype = np.dtype(dtype)
        if dtype == self.dtype:
            return self.copy()
        out = empty(queue or self.queue, self.shape, dtype)
        _kernel(self.context, ("astype", self.dtype, dtype), [VectorArg(dtype, "z"), VectorArg(self.dtype, "x")],
                f"z[i] = ({c_type(dtype)})x[i]")(out, self)
        return out

    def copy(self, queue=None):
        out = empty(queue or self.queue, self.shape, self.dtype)
        _kernel(self.context, ("copy", self.dtype), [VectorArg(self.dtype, "z"), VectorArg(self.dtype, "x")],
                "z[i] = x[i]")(out, self)
        return out

    def fill(self, value, queue=None, wait_for=None):
        _kernel(self.context, ("fill", self.dtype), [VectorArg(self.dtype, "z"), ScalarArg(self.dtype, "a")],
                "z[i] = a")(self, np.asarray(value, self.dtype)[()])
        return self

    # -- arithmetic ---------------------------------------------------------------------------------
    def _binary(self, other, op, reverse=False, result=None):
        if isinstance(other, Array):
            if other.shape != self.shape:
                raise ValueError(f"operands of shapes {self.shape} and {other.shape}: mncl.array does not broadcast")
            dt = np.result_type(self.dtype, other.dtype) if result is None else np.dtype(result)
            x, y = (other, self) if reverse else (self, other)
            out = empty(self.queue, self.shape, dt)
            ct = c_type(np.result_type(self.dtype, other.dtype))
            _kernel(self.context, ("aa", op, x.dtype, y.dtype, dt),
                    [VectorArg(dt, "z"), VectorArg(x.dtype, "x"), VectorArg(y.dtype, "y")],
                    f"z[i] = ({ct})x[i] {op} ({ct})y[i]")(out, x, y)
            return out
        st = _scalar_type(other, self.dtype)
        work = np.result_type(self.dtype, st)
        dt = work if result is None else np.dtype(result)
        out = empty(self.queue, self.shape, dt)
        ct = c_type(work)
        expr = f"({ct})a {op} ({ct})x[i]" if reverse else f"({ct})x[i] {op} ({ct})a"
        _kernel(self.context, ("as", op, reverse, self.dtype, st, dt),
                [VectorArg(dt, "z"), VectorArg(self.dtype, "x"), ScalarArg(st, "a")],
                f"z[i] = {expr}")(out, self, np.asarray(other, st)[()])
        return out

    def __add__(self, o): return self._binary(o, "+")
    def __radd__(self, o): return self._binary(o, "+", True)
    def __sub__(self, o): return self._binary(o, "-")
    def __rsub__(self, o): return self._binary(o, "-", True)
    def __mul__(self, o): return self._binary(o, "*")
    def __rmul__(self, o): return self._binary(o, "*", True)

    def __truediv__(self, o):
        x = self if self.dtype.kind == "f" else self.astype(np.float64)
        return x._binary(o, "/")

    def __rtruediv__(self, o):
        x = self if self.dtype.kind == "f" else self.astype(np.float64)
        return x._binary(o, "/", True)

    def __neg__(self):
        out = empty(self.queue, self.shape, self.dtype)
        _kernel(self.context, ("neg", self.dtype), [VectorArg(self.dtype, "z"), VectorArg(self.dtype, "x")],
                "z[i] = -x[i]")(out, self)
        return out

    def __lt__(self, o): return self._binary(o, "<", result=np.int8)
    def __le__(self, o): return self._binary(o, "<=", result=np.int8)
    def __gt__(self, o): return self._binary(o, ">", result=np.int8)
    def __ge__(self, o): return self._binary(o, ">=", result=np.int8)
    def __eq__(self, o): return self._binary(o, "==", result=np.int8)
    def __ne__(self, o): return self._binary(o, "!=", result=np.int8)
    __hash__ = None

    def __iadd__(self, o):
        return self._into(self + o)

    def __isub__(self, o):
        return self._into(self - o)

    def __imul__(self, o):
        return self._into(self * o)

    def _into(self, r):
        if r.dtype != self.dtype:
            r = r.astype(self.dtype)
        if not self.size:
            return self
        _kernel(self.context, ("copy", self.dtype), [VectorArg(self.dtype, "z"), VectorArg(self.dtype, "x")],
                "z[i] = x[i]")(self, r)
        return self


def _c_strides(shape, itemsize):
    out, s = [], itemsize
    for d in reversed(shape):
        out.append(s)
        s *= d
    return tuple(reversed(out))


def _kernel(ctx, key, args, operation, preamble=""):
    name = "mncl_" + "_".join(str(k).replace("<", "lt").replace(">", "gt").replace("=", "eq").replace("!", "ne")
                              .replace("+", "add").replace("-", "sub").replace("*", "mul").replace("/", "div")
                              for k in key)
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    knl = _cached(ctx, key, lambda: ElementwiseKernel(ctx, args, operation, name, preamble))

    def launch(out, *rest):
        """After the events of every array it touches (PyOpenCL's wait_for: they may be on other
        queues); its event goes to the array it writes, the first argument."""
        deps = [e for a in (out, *rest) if isinstance(a, Array) for e in a.events]
        out.add_event(knl(out, *rest, wait_for=deps or None))
        return out
    return launch


# -- creation --------------------------------------------------------------------------------------
def empty(queue, shape, dtype, order="C", allocator=None, **kwargs) -> Array:
    return Array(queue, shape, dtype, order)


def zeros(queue, shape, dtype, order="C", allocator=None, **kwargs) -> Array:
    return empty(queue, shape, dtype, order).fill(0)


def empty_like(ary, **kwargs) -> Array:
    return empty(ary.queue, ary.shape, ary.dtype)


def zeros_like(ary, **kwargs) -> Array:
    return zeros(ary.queue, ary.shape, ary.dtype)


def to_device(queue, ary, allocator=None, async_=False, **kwargs) -> Array:
    ary = np.ascontiguousarray(ary)
    a = empty(queue, ary.shape, ary.dtype)
    a.set(ary)
    return a


def arange(queue, *args, dtype=None, **kwargs) -> Array:
    """arange(queue, [start,] stop [, step], dtype=...), computed on the device."""
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) > 2 else 1)
    dtype = np.dtype(dtype if dtype is not None else np.result_type(start, stop, step))
    n = builtins.max(0, int(np.ceil((stop - start) / step)))
    out = empty(queue, (n,), dtype)
    if n:
        _kernel(queue.context, ("arange", dtype), [VectorArg(dtype, "z"), ScalarArg(dtype, "a"), ScalarArg(dtype, "d")],
                f"z[i] = a + ({c_type(dtype)})i * d")(out, np.asarray(start, dtype)[()], np.asarray(step, dtype)[()])
    return out


# -- reductions and element-wise functions -------------------------------------------------------------
def _reduction(ctx, key, dtype_out, neutral, reduce_expr, map_expr, args):
    name = "mncl_red_" + "_".join("".join(c if c.isalnum() else "_" for c in str(k)) for k in key)
    return _cached(ctx, ("red",) + key, lambda: ReductionKernel(ctx, dtype_out, neutral, reduce_expr, map_expr,
                                                                args, name))


def sum(a, dtype=None, queue=None, **kwargs) -> Array:       # noqa: A001 - PyOpenCL's name
    dt = np.dtype(dtype) if dtype is not None else a.dtype
    return _reduction(a.context, ("sum", a.dtype, dt), dt, "0", "a+b", f"({c_type(dt)})x[i]",
                      [VectorArg(a.dtype, "x")])(a, queue=queue)


def dot(a, b, dtype=None, queue=None, **kwargs) -> Array:
    dt = np.dtype(dtype) if dtype is not None else np.result_type(a.dtype, b.dtype)
    ct = c_type(dt)
    return _reduction(a.context, ("dot", a.dtype, b.dtype, dt), dt, "0", "a+b", f"({ct})x[i]*({ct})y[i]",
                      [VectorArg(a.dtype, "x"), VectorArg(b.dtype, "y")])(a, b, queue=queue)


vdot = dot          # real dtypes only: the conjugate is the value


def _extreme(a, which, queue):
    op = "fmax" if a.dtype.kind == "f" else "max"
    op = op if which == "max" else op.replace("max", "min")
    neutral = {"max": "-INFINITY", "min": "INFINITY"}[which] if a.dtype.kind == "f" else \
        str(np.iinfo(a.dtype).min if which == "max" else np.iinfo(a.dtype).max) + ("UL" if a.dtype.kind == "u" else "L")
    return _reduction(a.context, (which, a.dtype), a.dtype, neutral, f"{op}(a, b)", "x[i]",
                      [VectorArg(a.dtype, "x")])(a, queue=queue)


def max(a, queue=None, **kwargs) -> Array:      # noqa: A001
    return _extreme(a, "max", queue)


def min(a, queue=None, **kwargs) -> Array:      # noqa: A001
    return _extreme(a, "min", queue)


def _out(out, shape, dtype, queue, what):
    """The result array: ``out`` when given (its shape and dtype checked), else a new one."""
    if out is None:
        return empty(queue, shape, dtype)
    if not isinstance(out, Array) or out.shape != tuple(shape) or out.dtype != dtype:
        raise TypeError(f"mncl.array.{what}: out must be an Array of shape {tuple(shape)} and dtype {dtype}, got "
                        + (f"{out.shape} {out.dtype}" if isinstance(out, Array) else type(out).__name__))
    return out


def _pairwise(a, b, fn, out=None):
    if not isinstance(b, Array):
        b = empty_like(a).fill(b)
    dt = np.result_type(a.dtype, b.dtype)
    op = ("f" + fn) if dt.kind == "f" else fn
    out = _out(out, a.shape, dt, a.queue, f"{fn}imum")
    ct = c_type(dt)
    _kernel(a.context, (fn, a.dtype, b.dtype), [VectorArg(dt, "z"), VectorArg(a.dtype, "x"), VectorArg(b.dtype, "y")],
            f"z[i] = {op}(({ct})x[i], ({ct})y[i])")(out, a, b)
    return out


def maximum(a, b, out=None, queue=None, **kwargs) -> Array:
    return _pairwise(a, b, "max", out)


def minimum(a, b, out=None, queue=None, **kwargs) -> Array:
    return _pairwise(a, b, "min", out)


def if_positive(criterion, then_, else_, out=None, queue=None, **kwargs) -> Array:
    dt = np.result_type(then_.dtype, else_.dtype)
    res = _out(out, criterion.shape, dt, criterion.queue, "if_positive")
    _kernel(criterion.context, ("ifpos", criterion.dtype, then_.dtype, else_.dtype),
            [VectorArg(dt, "z"), VectorArg(criterion.dtype, "c"), VectorArg(then_.dtype, "t"),
             VectorArg(else_.dtype, "e")], "z[i] = c[i] > 0 ? t[i] : e[i]")(res, criterion, then_, else_)
    return res
