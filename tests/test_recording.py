"""Recorded launch sequences (queue.record(), Recording.replay): the same results as launching
call by call, on the CPU device and on the emulator device, and a clear error for each misuse."""
import numpy as np
import pytest

import mncl as cl

mf = cl.mem_flags

SRC = """
__kernel void scale(__global const float *x, __global float *y, float a)
{ int i = get_global_id(0); y[i] = a * x[i]; }
__kernel void add_at(__global float *y, __global const float *b, int k)
{ int i = get_global_id(0); y[i] += b[(i + k) % 64]; }
"""


def devices():
    cpu = [d for d in cl.get_platforms()[0].get_devices() if "CPU" in d.name.upper()]
    return [pytest.param(cpu[0], id="cpu")] + \
        [pytest.param(cl.get_device(machine="tiny"), id="emulator-tiny")]


@pytest.fixture(params=devices())
def env(request):
    ctx = cl.Context([request.param])
    q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    return ctx, q, cl.Program(ctx, SRC).build()


def layer_by_numpy(x, b, a, k):
    y = a * x
    return y + b[(np.arange(64) + k) % 64]


def test_replay_gives_what_call_by_call_gives_with_each_new_value(env):
    ctx, q, prg = env
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(64).astype(np.float32) for _ in range(3)]
    b = rng.standard_normal(64).astype(np.float32)
    xbufs = [cl.Buffer(ctx, mf.COPY_HOST_PTR, hostbuf=x) for x in xs]
    bb = cl.Buffer(ctx, mf.COPY_HOST_PTR, hostbuf=b)
    yb = cl.Buffer(ctx, mf.READ_WRITE, 256)
    x, a, k = cl.Arg("x"), cl.Arg("a"), cl.Arg("k")
    with q.record() as rec:
        assert prg.scale(q, (64,), None, x, yb, a) is None        # recorded, not run
        prg.add_at(q, (64,), None, yb, bb, k)
    assert len(rec) == 2 and sorted(rec.placeholders) == ["a", "k", "x"]
    y = np.empty(64, np.float32)
    for step in range(3):
        ev = rec.replay(x=xbufs[step], a=np.float32(step + 0.5), k=step * 7)
        ev.wait()
        cl.enqueue_copy(q, y, yb)
        np.testing.assert_allclose(y, layer_by_numpy(xs[step], b, np.float32(step + 0.5), step * 7), rtol=1e-6)
    # the kernels still launch call by call afterwards, with real arguments
    prg.scale(q, (64,), None, xbufs[0], yb, np.float32(2)).wait()
    cl.enqueue_copy(q, y, yb)
    np.testing.assert_allclose(y, 2 * xs[0], rtol=1e-6)


def test_replay_event_carries_the_sequence_profile_on_the_emulator(env):
    ctx, q, prg = env
    xb = cl.Buffer(ctx, mf.COPY_HOST_PTR, hostbuf=np.ones(64, np.float32))
    yb = cl.Buffer(ctx, mf.READ_WRITE, 256)
    with q.record() as rec:
        prg.scale(q, (64,), None, xb, yb, np.float32(3))
        prg.scale(q, (64,), None, xb, yb, np.float32(4))
    ev = rec.replay()
    ev.wait()
    assert ev.profile.end >= ev.profile.start
    assert (ev.stats is None) == ("emulator" not in q.device.name)
    if ev.stats is not None:            # the emulator device: the launches' emulated time, summed
        assert len(ev.stats.commands) == 2
        assert ev.stats.cycles == sum(c.cycles for c in ev.stats.commands) > 0
        assert ev.profile.end - ev.profile.start == int(ev.stats.emulated_ns)


def test_misuse_is_an_error_naming_what_is_wrong(env):
    ctx, q, prg = env
    xb = cl.Buffer(ctx, mf.COPY_HOST_PTR, hostbuf=np.ones(64, np.float32))
    yb = cl.Buffer(ctx, mf.READ_WRITE, 256)
    a = cl.Arg("a")
    before = cl.enqueue_marker(q)
    with q.record() as rec:
        prg.scale(q, (64,), None, xb, yb, a)
        with pytest.raises(cl.Error, match="already recording"):
            q.record().__enter__()
        with pytest.raises(cl.Error, match="only kernel launches can be recorded"):
            cl.enqueue_copy(q, np.empty(64, np.float32), yb)
        with pytest.raises(cl.Error, match="cannot wait for events"):
            prg.scale(q, (64,), None, xb, yb, a, wait_for=[before])
        with pytest.raises(cl.Error, match="still being recorded"):
            rec.replay(a=1.0)
    with pytest.raises(cl.Error, match="no value for placeholder.*a"):
        rec.replay()
    with pytest.raises(cl.Error, match="has no placeholder.*b.*it has: a"):
        rec.replay(a=1.0, b=2.0)
    with pytest.raises(cl.Error, match="argument 2 \\('a', scalar float\\) of kernel 'scale'.*got str"):
        rec.replay(a="fast")
    with pytest.raises(cl.Error, match="argument 0 .* needs an mncl.Buffer"):
        with q.record() as bad:
            prg.scale(q, (64,), None, cl.Arg("x"), yb, np.float32(1))
        bad.replay(x=np.float32(1))
    # a placeholder left in a kernel is refused by an ordinary launch
    with pytest.raises(cl.Error, match="placeholder mncl.Arg\\('a'\\).*queue.record"):
        prg.scale(q, (64,), None, xb, yb, a)
    with pytest.raises(cl.Error, match="identifier"):
        cl.Arg("not a name")
