"""A hypothesis state machine over the runtime API, on the CPU device and the emulator device
(the `tiny` machine): contexts, queues, buffers, programs, kernels, arguments, launches, copies,
fills, maps, events, waits and releases, in random order, each call given good or bad arguments.

What must hold: a call with good arguments succeeds and its results match a numpy model of every
buffer; a call with a bad argument raises an ``mncl.Error`` whose message starts with the call's
name; nothing else ever escapes (no bare Python exception, no "internal error").  The model is a
float32 array per buffer; kernels use small integers and halves, so every result is exact.

The fast suite runs a few short programs per device (well under a minute together); the slow
one (``-m slow``) runs many more, longer ones.  ``STATS`` counts steps, calls and refusals.
"""
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (Bundle, RuleBasedStateMachine, consumes, initialize, invariant, multiple,
                                 precondition, rule, run_state_machine_as_test)

import mncl as cl

mf = cl.mem_flags
STATS = Counter()

SRC = """
__kernel void scale(__global float *y, __global const float *x, float a) {
    int i = get_global_id(0);
    y[i] = a * x[i];
}
__kernel void add1(__global float *y) {
    y[get_global_id(0)] += 1.0f;
}
__kernel void setv(__global float *y, float v, __global float *unused) {
    y[get_global_id(0)] = v;
}
"""
KERNELS = ("scale", "add1", "setv")
SIZES = (8, 16, 40, 64)                       # buffer lengths in floats
BAD = [None, "x", 1.5, -1, object(), [], np.float64(1.0), 2 ** 70]


def _device(kind):
    devs = cl.get_platforms()[0].get_devices()
    return cl.get_device(machine="tiny") if kind == "tiny" else next(d for d in devs if d.kind == "cpu")


class Buf:
    """A buffer of the machine and its model (None once released)."""

    def __init__(self, buf, ctx, model):
        self.buf, self.ctx, self.model = buf, ctx, model

    def live(self, ctx):
        return self.model is not None and self.ctx is ctx


class Runtime(RuleBasedStateMachine):
    DEVICE = None                      # set by the subclasses below

    contexts = Bundle("contexts")
    queues = Bundle("queues")
    buffers = Bundle("buffers")
    programs = Bundle("programs")
    kernels = Bundle("kernels")
    events = Bundle("events")

    # -- checking calls ---------------------------------------------------------------------
    def ok(self, what, fn):
        """``fn()`` must succeed; an Event it returns is waited for."""
        STATS["calls"] += 1
        try:
            r = fn()
            if isinstance(r, cl.Event):
                r.wait()
            return r
        except Exception as e:  # noqa: BLE001 - any failure of a good call is a finding
            raise AssertionError(f"{what} with good arguments failed: {type(e).__name__}: {e}") from e

    def refused(self, routine, fn):
        """``fn()`` must raise an mncl.Error of ``routine`` (a name or a tuple of names; or of the
        enqueue it goes through)."""
        STATS["calls"] += 1
        try:
            r = fn()
            if isinstance(r, cl.Event):
                r.wait()
        except cl.Error as e:
            assert str(e).startswith(f"{e.routine} failed: ") and e.routine, str(e)
            routines = routine if isinstance(routine, tuple) else (routine,)
            assert e.routine in routines + ("enqueue",), f"expected an error of {routine}, got {e}"
            assert "internal error" not in str(e), str(e)
            STATS["refused"] += 1
            STATS[f"refused {e.code_name}"] += 1
            return e
        except Exception as e:  # noqa: BLE001 - an escape
            STATS["escapes"] += 1
            raise AssertionError(f"{routine}: a bare {type(e).__name__} escaped: {e}") from e
        raise AssertionError(f"{routine} accepted bad arguments")

    # -- contexts, queues, programs, kernels ------------------------------------------------
    @initialize(target=contexts)
    def first_context(self):
        self.device = _device(self.DEVICE)
        self.n_contexts = 1
        return cl.Context([self.device])

    @initialize(target=queues, ctx=contexts)
    def first_queue(self, ctx):
        return cl.CommandQueue(ctx)

    @initialize(target=kernels, ctx=contexts)
    def first_kernels(self, ctx):
        prg = cl.Program(ctx, SRC).build()
        return multiple(*(cl.Kernel(prg, n) for n in KERNELS))

    @initialize(target=buffers, ctx=contexts, n=st.sampled_from(SIZES), m=st.sampled_from(SIZES))
    def first_buffers(self, ctx, n, m):
        return multiple(self.new_buffer(ctx, n, 1), self.new_buffer(ctx, m, 2))

    @precondition(lambda self: self.n_contexts < 3)
    @rule(target=contexts)
    def new_context(self):
        self.n_contexts += 1
        return self.ok("Context", lambda: cl.Context([self.device]))

    @rule(target=queues, ctx=contexts, profiling=st.booleans())
    def new_queue(self, ctx, profiling):
        props = cl.command_queue_properties.PROFILING_ENABLE if profiling else 0
        return self.ok("CommandQueue", lambda: cl.CommandQueue(ctx, properties=props))

    @rule(ctx=contexts, bad=st.sampled_from(["x", 1.5, -1, object(), np.float64(1.0), 2 ** 70, 1 << 40]))
    def bad_queue(self, ctx, bad):
        self.refused("CommandQueue", lambda: cl.CommandQueue(ctx, properties=bad))

    @rule(target=programs, ctx=contexts)
    def build(self, ctx):
        return self.ok("Program.build", lambda: cl.Program(ctx, SRC).build())

    @rule(ctx=contexts, options=st.sampled_from(["-D X='1", "-I", ["-DA", 3], 7, "-cl-no-such-option"]))
    def bad_build(self, ctx, options):
        self.refused("Program.build", lambda: cl.Program(ctx, SRC).build(options=options))

    @rule(ctx=contexts, junk=st.sampled_from([b"", b"MNCL-BINARY 1\n{}", b"MNCL-BINARY 1\n[1", b"\x00" * 9, "text"]))
    def bad_binary(self, ctx, junk):
        self.refused("Program", lambda: cl.Program(ctx, [self.device], [junk]))

    @rule(target=kernels, prg=programs, name=st.sampled_from(KERNELS))
    def kernel(self, prg, name):
        return self.ok("Kernel", lambda: cl.Kernel(prg, name))

    @rule(prg=programs, name=st.sampled_from(["nope", "", 3, None]))
    def bad_kernel(self, prg, name):
        self.refused("Kernel", lambda: cl.Kernel(prg, name))

    # -- buffers ----------------------------------------------------------------------------
    @rule(target=buffers, ctx=contexts, n=st.sampled_from(SIZES), seed=st.integers(0, 2 ** 16))
    def new_buffer(self, ctx, n, seed):
        data = np.random.default_rng(seed).integers(-50, 50, n).astype(np.float32)
        b = self.ok("Buffer", lambda: cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=data))
        return Buf(b, ctx, data.copy())

    @rule(ctx=contexts, size=st.sampled_from(BAD + [0, 10.7, 1 << 62, "16"]),
          flags=st.sampled_from([mf.READ_WRITE, mf.READ_ONLY | mf.WRITE_ONLY, "rw", 1 << 40]))
    def bad_buffer(self, ctx, size, flags):
        self.refused("Buffer", lambda: cl.Buffer(ctx, flags, size))

    @rule(b=buffers)
    def release(self, b):
        self.ok("Buffer.release", b.buf.release)
        b.model = None

    @rule(b=consumes(buffers))
    def drop(self, b):
        b.buf = None                    # the last reference: the device memory goes back

    # -- transfers --------------------------------------------------------------------------
    @rule(q=queues, b=buffers, seed=st.integers(0, 2 ** 16), off=st.integers(-2, 70),
          count=st.integers(0, 70), blocking=st.booleans())
    def write(self, q, b, seed, off, count, blocking):
        if b.buf is None:
            return
        data = np.random.default_rng(seed).integers(-50, 50, count).astype(np.float32)
        call = lambda: cl.enqueue_copy(q, b.buf, data, device_offset=off * 4, is_blocking=blocking)
        if b.live(q.context) and 0 <= off and off + count <= b.model.size:
            self.ok("enqueue_copy", call)
            b.model[off:off + count] = data
        else:
            self.refused("enqueue_copy", call)

    @rule(q=queues, b=buffers, off=st.integers(-2, 70), count=st.integers(0, 70))
    def read(self, q, b, off, count):
        if b.buf is None:
            return
        out = np.full(count, np.nan, np.float32)
        call = lambda: cl.enqueue_copy(q, out, b.buf, device_offset=off * 4)
        if b.live(q.context) and 0 <= off and off + count <= b.model.size:
            self.ok("enqueue_copy", call)
            assert np.array_equal(out, b.model[off:off + count]), (out, b.model[off:off + count])
            STATS["checked reads"] += 1
        else:
            self.refused("enqueue_copy", call)

    @rule(q=queues, src=buffers, dst=buffers, so=st.integers(-1, 64), do=st.integers(-1, 64),
          n=st.integers(-1, 64))
    def copy(self, q, src, dst, so, do, n):
        if src.buf is None or dst.buf is None:
            return
        call = lambda: cl.enqueue_copy(q, dst.buf, src.buf, byte_count=n * 4, src_offset=so * 4,
                                       dst_offset=do * 4)
        good = (src.live(q.context) and dst.live(q.context) and min(so, do, n) >= 0
                and so + n <= src.model.size and do + n <= dst.model.size
                and not (src is dst and so < do + n and do < so + n))
        if good:
            self.ok("enqueue_copy", call)
            dst.model[do:do + n] = src.model[so:so + n].copy()
        else:
            self.refused("enqueue_copy", call)

    @rule(q=queues, b=buffers, v=st.integers(-9, 9), off=st.integers(-1, 64), n=st.integers(-1, 64),
          pattern=st.sampled_from(["f4", "f8", "obj", "size3"]))
    def fill(self, q, b, v, off, n, pattern):
        if b.buf is None:
            return
        pat = {"f4": np.float32(v), "f8": np.float32([v, v]), "obj": object(),
               "size3": np.zeros(3, np.uint8)}[pattern]
        width = {"f4": 1, "f8": 2}.get(pattern)
        call = lambda: cl.enqueue_fill_buffer(q, b.buf, pat, off * 4, n * 4)
        if (width and b.live(q.context) and off >= 0 and n >= 0 and off % width == 0 and n % width == 0
                and off + n <= b.model.size):
            self.ok("enqueue_fill_buffer", lambda: cl.enqueue_fill_buffer(q, b.buf, pat, off * 4, n * 4))
            b.model[off:off + n] = v
        else:
            self.refused("enqueue_fill_buffer", call)

    @rule(q=queues, b=buffers, off=st.integers(-1, 64), shape=st.sampled_from([(4,), (2, 3), (0,), (-1,), (70,)]),
          dtype=st.sampled_from([np.float32, np.int8, object, "bogus"]),
          strides=st.sampled_from([None, "c", (1 << 40,), (-4,), (8,), (8, 4), (4, 8), (0, 4)]),
          write=st.booleans())
    def map(self, q, b, off, shape, dtype, strides, write):
        if b.buf is None:
            return
        size = np.dtype(dtype).itemsize if dtype in (np.float32, np.int8) else 4
        if strides == "c":
            strides = tuple(int(np.prod(shape[i + 1:])) * size for i in range(len(shape)))
        call = lambda: cl.enqueue_map_buffer(q, b.buf, cl.map_flags.READ | cl.map_flags.WRITE, off * 4,
                                             shape, dtype, strides=strides)
        st_ = strides or tuple(int(np.prod(shape[i + 1:])) * size for i in range(len(shape)))
        extent = 0 if min(shape) <= 0 else sum((n - 1) * t for n, t in zip(shape, st_)) + size
        good = (b.live(q.context) and dtype in (np.float32, np.int8) and off >= 0 and min(shape) >= 0
                and len(st_) == len(shape) and min(st_) >= 0 and off * 4 + extent <= b.model.nbytes)
        if not good:
            self.refused("enqueue_map_buffer", call)
            return
        a, ev = self.ok("enqueue_map_buffer", call)
        # the reference: the same strided view of the model's bytes
        ref = np.ndarray(shape, dtype, buffer=b.model, offset=off * 4 if extent else 0, strides=st_)
        assert np.array_equal(a, ref), "a mapped array differs from the buffer"
        STATS["checked maps"] += 1
        if write:
            a[...] = 7
            ref[...] = 7
        self.ok("MemoryMap.release", lambda: a.base.release())

    @rule(q=queues, b=buffers, data=st.data(), write=st.booleans())
    def map_good(self, q, b, data, write):
        """A map of an in-bounds region, C or F order or strided, checked against the model."""
        if b.buf is None or not b.live(q.context):
            return
        off = data.draw(st.integers(0, b.model.size - 1), label="off")
        rows = data.draw(st.integers(1, b.model.size - off), label="rows")
        cols = data.draw(st.integers(1, (b.model.size - off) // rows), label="cols")
        order = data.draw(st.sampled_from(["C", "F", "every other"]), label="order")
        if order == "every other" and rows * cols * 2 <= b.model.size - off:
            a, ev = self.ok("enqueue_map_buffer", lambda: cl.enqueue_map_buffer(
                q, b.buf, cl.map_flags.READ | cl.map_flags.WRITE, off * 4, (rows, cols), np.float32,
                strides=(8 * cols, 8)))
            ref = b.model[off:off + 2 * rows * cols:2].reshape(rows, cols)
        else:
            order = "C" if order == "every other" else order
            a, ev = self.ok("enqueue_map_buffer", lambda: cl.enqueue_map_buffer(
                q, b.buf, cl.map_flags.READ | cl.map_flags.WRITE, off * 4, (rows, cols), np.float32, order=order))
            ref = b.model[off:off + rows * cols].reshape((rows, cols), order=order)
        assert np.array_equal(a, ref), "a mapped array differs from the buffer"
        STATS["checked maps"] += 1
        if write:
            a[...] = np.arange(rows * cols).reshape(rows, cols)
            ref[...] = np.arange(rows * cols).reshape(rows, cols)
        self.ok("MemoryMap.release", lambda: a.base.release())

    @rule(target=kernels, prg=programs, name=st.sampled_from(KERNELS))
    def from_binary(self, prg, name):
        """The program's binary loaded again: a kernel as good as the source's."""
        dev = prg.context.devices[0]
        again = self.ok("Program", lambda: cl.Program(prg.context, [dev], prg.get_info(cl.program_info.BINARIES)))
        self.ok("Program.build", again.build)
        return self.ok("Kernel", lambda: cl.Kernel(again, name))

    @rule(k=kernels, dtypes=st.sampled_from([[None, None, np.float32], [None, None, "bogus"], [None, None, np.int64],
                                              [np.float32, None, None], [None, np.float32, None], [None], 5]))
    def scalar_dtypes(self, k, dtypes):
        """set_scalar_arg_dtypes: good with one entry per argument, float32 or None for the float
        parameter and None for the pointers; anything else refused."""
        call = lambda: k.set_scalar_arg_dtypes(dtypes)
        scalar = {"scale": 2, "setv": 1, "add1": None}[k.function_name]
        if isinstance(dtypes, list) and len(dtypes) == k.num_args and all(
                d is None or (i == scalar and d is np.float32) for i, d in enumerate(dtypes)):
            self.ok("Kernel.set_scalar_arg_dtypes", call)
        else:
            self.refused("Kernel.set_scalar_arg_dtypes", call)

    @rule(size=st.sampled_from([0, -1, 2.5, "8", None]))
    def bad_local_memory(self, size):
        self.refused("LocalMemory", lambda: cl.LocalMemory(size))

    # -- kernels ----------------------------------------------------------------------------
    @rule(target=events, q=queues, k=kernels, y=buffers, x=buffers,
          g=st.integers(0, 64), lsize=st.sampled_from([None, 1, 2, 4, 8, 3, 0, 1024, "x"]),
          a=st.sampled_from([2, -1.5, 0.5, np.float32(3), 2 ** 24 + 1, "x", np.float64(1.0), None]))
    def launch(self, q, k, y, x, g, lsize, a):
        if y.buf is None or x.buf is None:
            return cl.enqueue_marker(q)
        name = k.function_name
        args = {"scale": (y.buf, x.buf, a), "add1": (y.buf,), "setv": (y.buf, a, None)}[name]
        used = [y] + ([x] if name == "scale" else [])
        if all(u.model is not None for u in used):      # out-of-bounds launches are tests/reliability's
            g = min([g] + [u.model.size for u in used])  # other files' business (items 3, 9)
        ls = None if lsize is None else (lsize,)
        call = lambda: k(q, (g,), ls, *args)
        good_a = name == "add1" or (a is not None and not isinstance(a, (str, np.float64)) and a != 2 ** 24 + 1)
        good = (k.context is q.context and all(u.live(q.context) for u in used) and good_a
                and all(0 < g <= u.model.size for u in used)
                and (lsize is None or (isinstance(lsize, int) and 0 < lsize <= 8 and g % lsize == 0)))
        if not good:
            self.refused(("Kernel.set_arg", "enqueue_nd_range_kernel"), call)
            return cl.enqueue_marker(q)
        ev = self.ok(f"kernel {name}", lambda: (call(), q.finish())[0])
        return self.launched(name, g, a, y, x, ev)

    @staticmethod
    def launched(name, g, a, y, x, ev):
        """The model after a good launch of kernel `name` over g work-items."""
        if name == "scale":
            y.model[:g] = np.float32(a) * x.model[:g]
        elif name == "add1":
            y.model[:g] += 1
        else:
            y.model[:g] = np.float32(a)
        STATS["launches"] += 1
        return ev

    @rule(target=events, q=queues, k=kernels, y=buffers, x=buffers, data=st.data())
    def launch_good(self, q, k, y, x, data):
        """A launch whose arguments are all good (when the bundles' draws fit together)."""
        name = k.function_name
        used = [y] + ([x] if name == "scale" else [])
        if k.context is not q.context or not all(u.buf is not None and u.live(q.context) for u in used):
            return cl.enqueue_marker(q)
        g = data.draw(st.integers(1, min(u.model.size for u in used)), label="g")
        lsize = data.draw(st.sampled_from([None] + [(l,) for l in (1, 2, 4, 8) if g % l == 0]), label="lsize")
        a = data.draw(st.sampled_from([2, -1.5, 0.5, np.float32(3), 0, 1, 2 ** 24]), label="a")
        args = {"scale": (y.buf, x.buf, a), "add1": (y.buf,), "setv": (y.buf, a, None)}[name]
        ev = self.ok(f"kernel {name}", lambda: k(q, (g,), lsize, *args))
        return self.launched(name, g, a, y, x, ev)

    @rule(q=queues, b=buffers, data=st.data())
    def read_good(self, q, b, data):
        if b.buf is None or not b.live(q.context):
            return
        off = data.draw(st.integers(0, b.model.size), label="off")
        count = data.draw(st.integers(0, b.model.size - off), label="count")
        self.read(q, b, off, count)

    @rule(q=queues, b=buffers, data=st.data(), blocking=st.booleans())
    def write_good(self, q, b, data, blocking):
        if b.buf is None or not b.live(q.context):
            return
        off = data.draw(st.integers(0, b.model.size), label="off")
        count = data.draw(st.integers(0, b.model.size - off), label="count")
        self.write(q, b, data.draw(st.integers(0, 99), label="seed"), off, count, blocking)

    @rule(k=kernels, index=st.sampled_from([-1, 3, 9, "a", None, 1.0]), value=st.sampled_from(BAD))
    def bad_set_arg(self, k, index, value):
        self.refused("Kernel.set_arg", lambda: k.set_arg(index, value))

    # -- events -----------------------------------------------------------------------------
    @rule(target=events, q=queues, deps=st.lists(events, max_size=3))
    def marker(self, q, deps):
        call = lambda: cl.enqueue_marker(q, wait_for=deps)
        if all(d.queue.context is q.context for d in deps):
            return self.ok("enqueue_marker", call)
        self.refused("enqueue_marker", call)
        return cl.enqueue_marker(q)

    @rule(q=queues, junk=st.sampled_from([[1], [None], 5, "ev", [object()]]))
    def bad_wait_list(self, q, junk):
        self.refused("enqueue_marker", lambda: cl.enqueue_marker(q, wait_for=junk))

    @rule(ev=events)
    def wait(self, ev):
        self.ok("Event.wait", ev.wait)
        assert ev.command_execution_status == cl.command_execution_status.COMPLETE

    @rule(evs=st.lists(events, max_size=4))
    def wait_all(self, evs):
        self.ok("wait_for_events", lambda: cl.wait_for_events(evs))

    @rule(q=queues)
    def finish(self, q):
        self.ok("CommandQueue.finish", q.finish)

    @invariant()
    def count(self):
        STATS["steps"] += 1


def _machine(kind):
    return type(f"Runtime_{kind}", (Runtime,), {"DEVICE": kind})


def _run(kind, examples, steps, shrink=True):
    STATS.clear()
    machine = _machine(kind)
    phases = list(Phase) if shrink else [Phase.explicit, Phase.generate]
    run_state_machine_as_test(machine, settings=settings(
        max_examples=examples, stateful_step_count=steps, deadline=None, phases=phases,
        suppress_health_check=list(HealthCheck)))
    print(f"\n{kind}: {examples} programs of up to {steps} steps: " + ", ".join(
        f"{k} {v}" for k, v in sorted(STATS.items())))
    assert STATS["escapes"] == 0


@pytest.mark.parametrize("kind", ["cpu", "tiny"])
def test_runtime_state_machine(kind):
    _run(kind, examples=10, steps=40, shrink=False)     # a failure prints its (unshrunk) steps at once


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["cpu", "tiny"])
def test_runtime_state_machine_long(kind):
    _run(kind, examples=150, steps=60)
