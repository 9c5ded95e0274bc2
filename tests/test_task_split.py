"""Two task-kernel features the LBM sample's task form needs (docs/language.md, "Task kernels"):

- a ``DRAM_SPLIT`` buffer: part g of the host's buffer in group g's DRAM, the kernel seeing one
  part at the same address in every group, written and read back per group (a whole ``DRAM``
  buffer is copied into every group and read back from group 0's copy only);
- ``mn_swap_lanes``: the two 32-bit lanes of each long word exchanged.

The split buffer is checked on mncore2 (4 groups: a part landing in the wrong group, or a
group's result not read back, shows) and on tiny (1 group: the whole buffer)."""
import numpy as np
import pytest

import mncl as cl

mf = cl.mem_flags

# each group copies its own part's first 128 long words into the part's second half
SPLIT = r'''
__task void copy(DRAM_SPLIT float *x, DRAM float *whole)
{
    L2BM float xs[256];
    mn_distribute(xs, x, 256);
    mn_gather(x + 256, xs, 256);
    mn_distribute(xs, whole, 256);
    mn_gather(whole + 256, xs, 256);
}
'''


def launch(machine, src, *arrays, opts=""):
    dev = cl.get_device("emulator", machine)
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    knl = cl.Program(ctx, src).build(options=opts).all_kernels()[0]
    bufs = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a) for a in arrays]
    knl.set_args(*bufs)
    cl.enqueue_task(q, knl).wait()
    outs = [np.empty_like(a) for a in arrays]
    for o, b in zip(outs, bufs):
        cl.enqueue_copy(q, o, b)
    q.finish()
    return outs


@pytest.mark.parametrize("machine,groups", [("tiny", 1), ("mncore2", 4)])
def test_a_split_buffer_is_one_part_per_group(machine, groups):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(512 * groups).astype(np.float32)
    whole = rng.standard_normal(512).astype(np.float32)
    out, whole_out = launch(machine, SPLIT, x, whole)
    want = x.reshape(groups, 512).copy()
    want[:, 256:] = want[:, :256]
    assert np.array_equal(out.reshape(groups, 512), want)
    # a whole buffer is still one copy per group, read back from group 0
    assert np.array_equal(whole_out[256:], whole[:256])


def test_a_split_buffer_of_parts_not_whole_long_words_is_an_error():
    dev = cl.get_device("emulator", "mncore2")
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    knl = cl.Program(ctx, SPLIT).build().all_kernels()[0]
    x = cl.Buffer(ctx, mf.READ_WRITE, 4 * 8 * 64 + 8)          # not 4 equal parts of long words
    whole = cl.Buffer(ctx, mf.READ_WRITE, 4096)
    knl.set_args(x, whole)
    with pytest.raises(cl.Error, match=r"'x' is DRAM_SPLIT over the 4 groups: its 2056 bytes"):
        cl.enqueue_task(q, knl).wait()


def test_swap_lanes_exchanges_the_two_lanes_of_every_long_word():
    src = r'''
    __task void sw(DRAM float *x, DRAM int *k)
    {
        L2BM float xs[256];
        L1BM float xl[128];
        L2BM int ks[256];
        L1BM int kl[128];
        mn_distribute(xs, x, 256);
        mn_distribute(xl, xs, 128);
        mn_gather(xl, mn_swap_lanes(mn_distribute(xl)));
        mn_gather(xs, xl, 128);
        mn_gather(x, xs, 256);
        mn_distribute(ks, k, 256);
        mn_distribute(kl, ks, 128);
        mn_gather(kl, mn_swap_lanes(mn_distribute(kl)));
        mn_gather(ks, kl, 128);
        mn_gather(k, ks, 256);
    }
    '''
    x = np.arange(256, dtype=np.float32)
    k = np.arange(256, dtype=np.int32) * 7 - 900
    xo, ko = launch("tiny", src, x, k)
    assert np.array_equal(xo, x.reshape(-1, 2)[:, ::-1].ravel())
    assert np.array_equal(ko, k.reshape(-1, 2)[:, ::-1].ravel())


def test_a_constant_condition_chooses_between_vectors():
    """`(ph ? b : a)[i]`-style choices (an unrolled counter picking one of two LM arrays, as
    the LBM resident kernel ping-pongs) as a value and as an assignment's target."""
    src = r'''
    __task void pingpong(DRAM float *x)
    {
        L2BM float xs[256];
        L1BM float xl[128];
        mnfloat8 a[2], b[2];
        mnfloat8 two = 2.0f;
        mn_distribute(xs, x, 256);
        mn_distribute(xl, xs, 128);
        a[1] = mn_distribute(xl);
        for (int ph = 0; ph < 3; ph++)
            (ph % 2 ? a[1] : b[0]) = two * (ph % 2 ? b[0] : a[1]);
        mn_gather(xl, 1 ? b[0] : a[1]);
        mn_gather(xs, xl, 128);
        mn_gather(x, xs, 256);
    }
    '''
    x = np.arange(256, dtype=np.float32)
    (xo,) = launch("tiny", src, x)
    assert np.array_equal(xo[:128], 8 * x[:128])


def test_max_min_and_ordered_selects():
    """mn_max / mn_min and mn_select on x < y, x > y, x <= y, x >= y (mnfloat8 and mnint8): what
    the Harris sample's fused kernel needs for its window maximum and threshold."""
    src = r'''
    __task void order(DRAM float *x, DRAM float *y, DRAM float *o, DRAM int *i, DRAM int *j, DRAM int *io)
    {
        L2BM float xs[256], ys[256], os[256];
        L1BM float xl[128], yl[128], ol[128];
        L2BM int is[256], js[256], ios[256];
        L1BM int il[128], jl[128], iol[128];
        mn_distribute(xs, x, 256); mn_distribute(xl, xs, 128);
        mn_distribute(ys, y, 256); mn_distribute(yl, ys, 128);
        mn_distribute(is, i, 256); mn_distribute(il, is, 128);
        mn_distribute(js, j, 256); mn_distribute(jl, js, 128);
        mnfloat8 a = mn_distribute(xl), b = mn_distribute(yl);
        mnint8 p = mn_distribute(il), q = mn_distribute(jl);
        mnfloat8 one = 1.0f, two = 2.0f, four = 4.0f, eight = 8.0f, zero = 0.0f;
        mnfloat8 r = mn_select(a < b, one, zero) + mn_select(a > b, two, zero)
                     + mn_select(a <= b, four, zero) + mn_select(a >= b, eight, zero);
        mn_gather(ol, r + 16.0f * mn_max(a, b) + 256.0f * mn_min(a, b));
        mnint8 k1 = 1, k2 = 2, k4 = 4, k8 = 8, k0 = 0;
        mnint8 s = mn_select(p < q, k1, k0) + mn_select(p > q, k2, k0) + mn_select(p <= q, k4, k0)
                   + mn_select(p >= q, k8, k0);
        mn_gather(iol, s + (mn_max(p, q) << k4) + (mn_min(p, q) << k8));
        mn_gather(os, ol, 128); mn_gather(o, os, 256);
        mn_gather(ios, iol, 128); mn_gather(io, ios, 256);
    }
    '''
    rng = np.random.default_rng(3)
    x = rng.integers(-3, 4, 256).astype(np.float32)
    y = rng.integers(-3, 4, 256).astype(np.float32)
    i = rng.integers(-3, 4, 256).astype(np.int32)
    j = rng.integers(-3, 4, 256).astype(np.int32)
    *_, o, _, _, io = launch("tiny", src, x, y, np.zeros(256, np.float32), i, j, np.zeros(256, np.int32))

    def want(a, b):
        return ((a < b) * 1 + (a > b) * 2 + (a <= b) * 4 + (a >= b) * 8).astype(np.float64)
    assert np.array_equal(o, want(x, y) + 16 * np.maximum(x, y) + 256 * np.minimum(x, y))
    assert np.array_equal(io, (want(i, j) + 16 * np.maximum(i, j) + 256 * np.minimum(i, j)).astype(np.int32))


def test_lanes_up_and_down_move_the_32_bit_halves():
    """mn_lanes_up: the low 32 bits of each long word into the high ones (a host array's first
    float of the long word into its second), zero below; mn_lanes_down the other way."""
    src = r'''
    __task void ud(DRAM float *x, DRAM float *u, DRAM float *d)
    {
        L2BM float xs[256];
        L1BM float xl[128];
        mn_distribute(xs, x, 256);
        mn_distribute(xl, xs, 128);
        mnfloat8 v = mn_distribute(xl);
        mn_gather(xl, mn_lanes_up(v));
        mn_gather(xs, xl, 128);
        mn_gather(u, xs, 256);
        mn_gather(xl, mn_lanes_down(v));
        mn_gather(xs, xl, 128);
        mn_gather(d, xs, 256);
    }
    '''
    x = np.arange(1, 257, dtype=np.float32)
    _, u, d = launch("tiny", src, x, np.zeros(256, np.float32), np.zeros(256, np.float32))
    pairs = x.reshape(-1, 2)
    assert np.array_equal(u.reshape(-1, 2), np.stack([np.zeros(128, np.float32), pairs[:, 0]], 1))
    assert np.array_equal(d.reshape(-1, 2), np.stack([pairs[:, 1], np.zeros(128, np.float32)], 1))
