"""mncl.array, mncl.elementwise, mncl.reduction (issue 26's first part): PyOpenCL's device arrays
and generated kernels, against numpy, on the CPU device and on the emulator's tiny machine."""
import numpy as np
import pytest

import mncl as cl
import mncl.array as cla
from mncl.elementwise import ElementwiseKernel
from mncl.reduction import ReductionKernel
from mncl.tools import ScalarArg, VectorArg, parse_arg_list


@pytest.fixture(scope="module", params=["cpu", "tiny"])
def queue(request):
    dev = cl.get_device("cpu") if request.param == "cpu" else cl.get_device("emulator", "tiny")
    return cl.CommandQueue(cl.Context([dev]))


def data():
    x = np.arange(1, 201, dtype=np.float32)
    y = np.linspace(-1, 1, 200).astype(np.float32)
    return x, y


def test_arithmetic_and_comparisons_match_numpy(queue):
    x, y = data()
    a, b = cla.to_device(queue, x), cla.to_device(queue, y)
    np.testing.assert_array_equal((2 * a + 1).get(), 2 * x + 1)
    np.testing.assert_array_equal((a - b).get(), x - y)
    np.testing.assert_array_equal((1 - a).get(), 1 - x)
    np.testing.assert_array_equal((a * b).get(), x * y)
    np.testing.assert_array_equal((a / 4).get(), x / 4)
    np.testing.assert_array_equal((-b).get(), -y)
    assert np.signbit((-cla.zeros(queue, 2, np.float32)).get()).all()          # -0, as numpy
    assert (a > 50).dtype == np.int8
    np.testing.assert_array_equal((a > 50).get(), (x > 50).astype(np.int8))
    np.testing.assert_array_equal((b <= 0).get(), (y <= 0).astype(np.int8))
    c = a.copy()
    c += b
    np.testing.assert_array_equal(c.get(), x + y)
    i = cla.to_device(queue, np.arange(10, dtype=np.int32))
    assert (i * 3).dtype == np.int32 and (i / 2).dtype == np.float64
    np.testing.assert_array_equal((i / 2).get(), np.arange(10) / 2)


def test_creation_and_shape(queue):
    np.testing.assert_array_equal(cla.arange(queue, 0, 10, 2, dtype=np.int32).get(), np.arange(0, 10, 2, dtype=np.int32))
    np.testing.assert_array_equal(cla.arange(queue, 5, dtype=np.float32).get(), np.arange(5, dtype=np.float32))
    np.testing.assert_array_equal(cla.zeros(queue, (3, 4), np.float32).get(), np.zeros((3, 4), np.float32))
    a = cla.to_device(queue, np.arange(12, dtype=np.float32))
    r = a.reshape(3, 4)
    assert r.shape == (3, 4) and r.data is a.data and r.strides == (16, 4)
    np.testing.assert_array_equal(r.get(), np.arange(12, dtype=np.float32).reshape(3, 4))
    np.testing.assert_array_equal(a.astype(np.int32).get(), np.arange(12, dtype=np.int32))
    np.testing.assert_array_equal(cla.empty_like(a).fill(7).get(), np.full(12, 7, np.float32))
    with pytest.raises(ValueError, match="does not broadcast"):
        a + cla.to_device(queue, np.zeros(3, np.float32))


def test_reductions_match_numpy(queue):
    x, y = data()
    a, b = cla.to_device(queue, x), cla.to_device(queue, y)
    assert cla.sum(a).get() == x.sum()
    assert cla.sum(a).shape == ()
    np.testing.assert_allclose(cla.dot(a, b).get(), np.dot(x.astype(np.float64), y), rtol=1e-6)
    assert cla.max(b).get() == y.max() and cla.min(b).get() == y.min()
    i = cla.to_device(queue, np.array([5, -3, 9, 2], np.int32))
    assert cla.max(i).get() == 9 and cla.min(i).get() == -3 and cla.sum(i).get() == 13
    np.testing.assert_array_equal(cla.maximum(a, b).get(), np.maximum(x, y))
    np.testing.assert_array_equal(cla.minimum(b, 0.5).get(), np.minimum(y, np.float32(0.5)))
    np.testing.assert_array_equal(cla.if_positive(b, a, -a).get(), np.where(y > 0, x, -x))


def test_elementwise_and_reduction_kernels(queue):
    ctx = queue.context
    x, y = data()
    a, b = cla.to_device(queue, x), cla.to_device(queue, y)
    lin = ElementwiseKernel(ctx, "float k, __global const float *x, float *y, float *z",
                            "z[i] = twice(k) * x[i] + y[i]", "lin", preamble="float twice(float v) { return 2 * v; }")
    z = cla.empty_like(a)
    lin(np.float32(1.5), a, b, z)
    np.testing.assert_array_equal(z.get(), np.float32(3) * x + y)
    sq = ReductionKernel(ctx, np.float32, neutral="0", reduce_expr="a+b", map_expr="x[i]*x[i]", arguments="float *x")
    assert sq(a).get() == (x * x).sum()
    with pytest.raises(TypeError, match="takes 4 arguments"):
        lin(a, b, z)


def test_argument_lists():
    args = parse_arg_list("float a, __global const float *x, unsigned int n, double *restrict y")
    assert args == [ScalarArg(np.float32, "a"), VectorArg(np.float32, "x"), ScalarArg(np.uint32, "n"),
                    VectorArg(np.float64, "y")]
    with pytest.raises(ValueError, match="unknown type 'float5'"):
        parse_arg_list("float5 *v")
    from mncl import cltypes
    assert parse_arg_list("float4 *v, int2 w") == [VectorArg(cltypes.float4, "v"), ScalarArg(cltypes.int2, "w")]


def test_struct_dtypes_registered_as_pyopencl_does():
    from mncl import tools
    dt = np.dtype([("c", np.int8), ("x", np.float64), ("k", np.int32, (3,))])
    dt, decl = tools.match_dtype_to_c_struct(cl.get_device("cpu"), "test_pad_t", dt)
    assert dt.fields["x"][1] == 8 and dt.fields["k"][1] == 16 and dt.itemsize == 32      # C's layout
    assert "char c;" in decl and "double x;" in decl and "int k[3];" in decl and decl.rstrip().endswith("} test_pad_t;")
    assert tools.get_or_register_dtype("test_pad_t", dt) is tools.get_or_register_dtype("test_pad_t")
    assert tools.dtype_to_ctype(dt) == "test_pad_t" and tools.dtype_to_ctype(np.float32) == "float"
    assert parse_arg_list("__global test_pad_t *s") == [VectorArg(dt, "s")]
    with pytest.raises(RuntimeError, match="already registered"):
        tools.get_or_register_dtype("test_pad_t", np.dtype([("y", np.int32)]))
    with pytest.raises(ValueError, match="unable to map"):
        tools.dtype_to_ctype(np.dtype([("unregistered", np.int16)]))


def test_struct_reduction(queue):
    """PyOpenCL's struct reduction: dtype_out a registered struct, neutral a struct expression,
    reduce_expr a preamble function (a struct has no C cast: the neutral was cast before)."""
    from mncl import tools
    dt, decl = tools.match_dtype_to_c_struct(queue.device, "test_mm_t", np.dtype([("lo", np.int32), ("hi", np.int32)]))
    dt = tools.get_or_register_dtype("test_mm_t", dt)
    pre = decl + """
test_mm_t mm_neutral(void) { test_mm_t r; r.lo = INT_MAX; r.hi = INT_MIN; return r; }
test_mm_t mm_one(int v) { test_mm_t r; r.lo = v; r.hi = v; return r; }
test_mm_t mm_join(test_mm_t a, test_mm_t b) { test_mm_t r; r.lo = min(a.lo, b.lo); r.hi = max(a.hi, b.hi); return r; }
"""
    red = ReductionKernel(queue.context, dt, neutral="mm_neutral()", reduce_expr="mm_join(a, b)",
                          map_expr="mm_one(x[i])", arguments="__global const int *x", preamble=pre)
    x = np.random.default_rng(8).integers(-10 ** 6, 10 ** 6, 777).astype(np.int32)
    r = red(cla.to_device(queue, x)).get()
    assert r.dtype == dt and (r["lo"], r["hi"]) == (x.min(), x.max())


def test_generated_kernels_do_not_shadow_argument_names(queue):
    """A reduction's or scan's arguments named like the generated kernels' own variables (b, acc,
    count, share...) keep their meaning."""
    from mncl.scan import GenericScanKernel
    x = np.arange(1, 101, dtype=np.float32)
    a = cla.to_device(queue, x)
    dot = ReductionKernel(queue.context, np.float32, "0", "a+b", "acc[i] * b[i] + lo",
                          "__global const float *acc, __global const float *b, float lo")
    assert dot(a, a, np.float32(1)).get() == (x * x).sum() + 100
    out = cla.zeros_like(a)
    scan = GenericScanKernel(queue.context, np.float32, "__global const float *b, __global float *count, float share",
                             "b[i] * share", "a+b", "0", "count[i] = item")
    scan(a, out, np.float32(2))
    np.testing.assert_array_equal(out.get(), np.cumsum(2 * x))


def test_clmath_on_arrays(queue):
    import mncl.clmath as clmath
    x = np.linspace(-0.9, 0.9, 64).astype(np.float32)
    a = cla.to_device(queue, x)
    for name, ref in (("sin", np.sin), ("exp", np.exp), ("atan", np.arctan), ("asin", np.arcsin), ("fabs", np.abs)):
        got = getattr(clmath, name)(a).get()
        np.testing.assert_allclose(got, ref(x.astype(np.float64)).astype(np.float32), rtol=2e-7, atol=1e-7, err_msg=name)
    np.testing.assert_allclose(clmath.atan2(a, 0.5).get(), np.arctan2(x, np.float32(0.5)), rtol=2e-7)
    i = cla.to_device(queue, np.arange(4, dtype=np.int32))
    assert clmath.sqrt(i).dtype == np.float64


def test_scans(queue):
    from mncl.scan import ExclusiveScanKernel, GenericScanKernel, InclusiveScanKernel
    ctx = queue.context
    x = np.random.default_rng(3).integers(-5, 9, 1000).astype(np.int32)
    a = cla.to_device(queue, x)
    inc = InclusiveScanKernel(ctx, np.int32, "a+b")
    np.testing.assert_array_equal(inc(a.copy()).get(), np.cumsum(x))
    exc = ExclusiveScanKernel(ctx, np.int32, "a+b", "0")
    out = cla.empty_like(a)
    exc(a, out)
    np.testing.assert_array_equal(out.get(), np.concatenate([[0], np.cumsum(x)[:-1]]))
    mx = InclusiveScanKernel(ctx, np.int32, "max(a, b)", neutral="-2147483647-1", name_prefix="runmax")
    np.testing.assert_array_equal(mx(a.copy()).get(), np.maximum.accumulate(x))
    # stream compaction, as PyOpenCL's copy_if: the positives, in order
    kept = cla.zeros(queue, x.size, np.int32)
    compact = GenericScanKernel(ctx, np.int32, "__global int *x, __global int *out", "x[i] > 0 ? 1 : 0", "a+b", "0",
                                "if (prev_item != item) out[prev_item] = x[i]", name_prefix="compact")
    compact(a, kept)
    np.testing.assert_array_equal(kept.get()[:(x > 0).sum()], x[x > 0])


def test_segmented_scan_with_input_fetch_exprs(queue):
    """PyOpenCL's segmented scan: is_segment_start_expr over input_fetch_exprs' variables, the
    scan_expr keeping segments apart through across_seg_boundary; prev_item restarts at a segment's
    start; last_item is the scan through the last index."""
    from mncl.scan import GenericScanKernel
    rng = np.random.default_rng(12)
    n = 1000
    keys = np.sort(rng.integers(0, 40, n)).astype(np.int32)
    x = rng.integers(-5, 9, n).astype(np.int32)
    k, a = cla.to_device(queue, keys), cla.to_device(queue, x)
    inc, exc, last = cla.empty_like(a), cla.empty_like(a), cla.zeros(queue, 1, np.int32)
    seg = GenericScanKernel(
        queue.context, np.int32, "__global const int *keys, __global const int *x, __global int *inc, "
        "__global int *exc, __global int *last", "x[i]", "across_seg_boundary ? b : a + b", "0",
        "inc[i] = item; exc[i] = prev_item; if (i == n - 1) last[0] = last_item",
        is_segment_start_expr="i == 0 || key != prev_key",
        input_fetch_exprs=[("key", "keys", 0), ("prev_key", "keys", -1)])
    seg(k, a, inc, exc, last)
    want = np.empty(n, np.int32)
    for i in range(n):
        want[i] = x[i] + (want[i - 1] if i and keys[i] == keys[i - 1] else 0)
    np.testing.assert_array_equal(inc.get(), want)
    np.testing.assert_array_equal(exc.get(), want - x)
    assert last.get()[0] == want[-1]


@pytest.mark.parametrize("n", [5000, 300000])
def test_long_scans(queue, n):
    """Long scans, plain and segmented (ceil(log2 n) doubling steps; 300,000 elements on the CPU
    device only, to keep the emulator's run short)."""
    from mncl.scan import GenericScanKernel
    if n > 5000 and queue.device.get_info(cl.device_info.NAME).lower().find("emulator") >= 0:
        pytest.skip("a long emulator run")
    rng = np.random.default_rng(n)
    keys = np.sort(rng.integers(0, n // 300, n)).astype(np.int32)
    x = rng.integers(-5, 9, n).astype(np.int32)
    k, a = cla.to_device(queue, keys), cla.to_device(queue, x)
    plain, seg, last = cla.empty_like(a), cla.empty_like(a), cla.zeros(queue, 1, np.int32)
    GenericScanKernel(queue.context, np.int32, "__global const int *x, __global int *y, __global int *last",
                      "x[i]", "a+b", "0", "y[i] = prev_item; if (i == 0) last[0] = last_item")(a, plain, last)
    np.testing.assert_array_equal(plain.get(), np.cumsum(x) - x)
    assert last.get()[0] == x.sum()
    GenericScanKernel(queue.context, np.int32, "__global const int *keys, __global const int *x, __global int *y",
                      "x[i]", "across_seg_boundary ? b : a + b", "0", "y[i] = item",
                      is_segment_start_expr="i == 0 || keys[i] != keys[i - 1]")(k, a, seg)
    starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
    c = np.cumsum(x)
    base = np.concatenate([[0], c])[starts][np.searchsorted(starts, np.arange(n), side="right") - 1]
    np.testing.assert_array_equal(seg.get(), c - base)


def test_philox_reference_matches_random123s_known_answers():
    from mncl.clrandom import philox4x32_10
    kat = [((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
           ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
           ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
            (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]
    for c, k, want in kat:
        assert tuple(int(v) for v in philox4x32_10(np.array(c), np.array(k))[0]) == want


def test_clrandom_bits_uniform_normal(queue):
    import mncl.clrandom as clrandom
    from mncl.clrandom import philox4x32_10
    gen = clrandom.PhiloxGenerator(queue.context, key=(0x12345678, 0x9ABCDEF0), counter=(5, 0, 7, 9))
    bits = gen.random_bits(queue, (1003,)).get()
    items = -(-1003 // 4)
    ctr = np.stack([5 + np.arange(items), np.zeros(items), np.full(items, 7), np.full(items, 9)], axis=1)
    np.testing.assert_array_equal(bits, philox4x32_10(ctr, np.array([0x12345678, 0x9ABCDEF0])).ravel()[:1003])
    assert gen.offset == 5 + items                                      # the next call continues the stream
    u = gen.uniform(queue, (4000,), np.float32).get()
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.02
    z = gen.normal(queue, (4001,), np.float32, mu=1.0, sigma=2.0).get()
    assert abs(z.mean() - 1.0) < 0.1 and abs(z.std() - 2.0) < 0.1
    r = clrandom.rand(queue, (50,), np.float32, a=-1, b=1).get()
    assert r.shape == (50,) and (-1 <= r).all() and (r < 1).all()


def test_algorithm_copy_if_partition_unique(queue):
    from mncl import algorithm
    x = np.random.default_rng(4).integers(-5, 6, 500).astype(np.int32)
    a = cla.to_device(queue, x)
    out, count, _ = algorithm.copy_if(a, "ary[i] > 0")
    k = int(count.get())
    assert k == (x > 0).sum() and np.array_equal(out.get()[:k], x[x > 0])
    out, count, _ = algorithm.remove_if(a, "ary[i] > lim", extra_args=[("lim", np.int32(2))])
    k = int(count.get())
    assert np.array_equal(out.get()[:k], x[~(x > 2)])
    t, f, count, _ = algorithm.partition(a, "ary[i] % 2 == 0")
    k = int(count.get())
    assert np.array_equal(t.get()[:k], x[x % 2 == 0]) and np.array_equal(f.get()[:x.size - k], x[x % 2 != 0])
    s = np.sort(x)
    u, count, _ = algorithm.unique(cla.to_device(queue, s))
    assert np.array_equal(u.get()[:int(count.get())], np.unique(s))


def test_characterize():
    from mncl import characterize
    emu, cpu = cl.get_device("emulator", "tiny"), cl.get_device("cpu")
    assert characterize.get_simd_group_size(emu, 4) == 8 and characterize.get_simd_group_size(cpu, 4) is None
    assert characterize.local_memory_size(cpu) > 0
    assert isinstance(characterize.has_double_support(emu), bool)


def test_a_buffers_object_type(queue):
    b = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 64)
    assert b.get_info(cl.mem_info.TYPE) == cl.mem_object_type.BUFFER == 0x10F0


def test_bitonic_sort(queue):
    from mncl.bitonic_sort import BitonicSort
    x = np.random.default_rng(6).standard_normal(256).astype(np.float32)
    a = cla.to_device(queue, x)
    idx = cla.arange(queue, 256, dtype=np.int32)
    out, ev = BitonicSort(queue.context)(a, idx=idx)
    assert out is a and ev is not None
    np.testing.assert_array_equal(a.get(), np.sort(x))
    np.testing.assert_array_equal(x[idx.get()], np.sort(x))
    with pytest.raises(ValueError, match="power of two"):
        BitonicSort(queue.context)(cla.to_device(queue, x[:100]))


def test_slices_are_views_that_generated_kernels_take(queue):
    """a[lo:hi] and a[k] are views of the same buffer at an offset: arithmetic, reductions, scans and
    assignment through them run the generated kernels' offset variants; .data of a view past the
    buffer's start is ArrayHasOffsetError (mncl has no sub-buffers)."""
    from mncl.scan import InclusiveScanKernel
    x = np.arange(40, dtype=np.float32) ** 2
    a = cla.to_device(queue, x)
    np.testing.assert_array_equal((a[1:] - a[:-1]).get(), x[1:] - x[:-1])
    assert cla.sum(a[5:]).get() == x[5:].sum() and cla.max(a[:7]).get() == x[6]
    m = a.reshape(8, 5)
    np.testing.assert_array_equal(m[2].get(), x[10:15])
    np.testing.assert_array_equal(m[1:3].get(), x.reshape(8, 5)[1:3])
    assert m[1:3].base_data is a.data and m[1:3].offset == 20
    b = a.copy()
    b[3:6] = 0
    b[10:12] = a[:2]
    y = x.copy()
    y[3:6] = 0
    y[10:12] = x[:2]
    np.testing.assert_array_equal(b.get(), y)
    i = cla.to_device(queue, np.arange(1, 101, dtype=np.int32))
    InclusiveScanKernel(queue.context, np.int32, "a+b", "0")(i[40:])
    np.testing.assert_array_equal(i.get(), np.concatenate([np.arange(1, 41), np.cumsum(np.arange(41, 101))]))
    with pytest.raises(cla.ArrayHasOffsetError):
        a[1:].data
    with pytest.raises(NotImplementedError, match="step"):
        a[::2]


def test_cpu_device_pointer_parameter_changed_by_a_work_item():
    """The CPU device runs a group's work-items one after another in one call: a change one makes
    to a parameter (x += off) reached the next ones when the launch had groups of several."""
    ctx = cl.Context([cl.get_device("cpu")])
    q = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, """__kernel void k(__global const int *x, int off, __global int *out)
    { x += off; out[get_global_id(0)] = x[get_global_id(0)]; }""").build()
    x = np.arange(128, dtype=np.int32)
    bx = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=x)
    bo = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, 4 * 64)
    prg.k(q, (64,), None, bx, np.int32(1), bo)
    out = np.empty(64, np.int32)
    cl.enqueue_copy(q, out, bo)
    np.testing.assert_array_equal(out, x[1:65])


def test_cpu_device_scalar_parameter_changed_by_a_work_item():
    ctx = cl.Context([cl.get_device("cpu")])
    q = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, """__kernel void k(__global int *out, int n)
    { n += get_global_id(0); out[get_global_id(0)] = n; }""").build()
    bo = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, 4 * 256)
    prg.k(q, (256,), (64,), bo, np.int32(5))
    out = np.empty(256, np.int32)
    cl.enqueue_copy(q, out, bo)
    np.testing.assert_array_equal(out, 5 + np.arange(256))


def test_array_events_out_and_wait_for_across_queues(queue):
    """Operations keep their kernel's event on the array they write and wait for their operands'
    (which may be on another queue); maximum / minimum / if_positive write into out= when given
    (they used to ignore it and return a new array)."""
    q, q2 = queue, cl.CommandQueue(queue.context)
    a = cla.to_device(q, np.arange(10, dtype=np.float32))
    b = cla.to_device(q2, np.full(10, 4, np.float32))
    c = a * 2
    assert len(c.events) == 1
    out = cla.empty(q, (10,), np.float32)
    r = cla.maximum(c, b, out=out)
    assert r is out and out.events
    np.testing.assert_array_equal(out.get(), np.maximum(np.arange(10) * 2, 4))
    out2 = cla.empty(q, (10,), np.float32)
    assert cla.minimum(a, b, out=out2) is out2
    np.testing.assert_array_equal(out2.get(), np.minimum(np.arange(10), 4))
    sel = cla.if_positive(a - 5, a, b, out=cla.zeros(q, (10,), np.float32))
    np.testing.assert_array_equal(sel.get(), np.where(np.arange(10) - 5 > 0, np.arange(10), 4))
    with pytest.raises(TypeError, match="out must be an Array of shape"):
        cla.maximum(a, b, out=cla.empty(q, (3,), np.float32))
    c.finish()
    assert c.events == []
