"""A store to one element from one work-item, in a narrowed wave (issue 26, found by the
PyOpenCL examples' copy_if): the scatter's election took every lane holding the winning slot
number, and lanes past a narrowed wave's chain repeat the slot numbers of lanes in it, so a
uniform store came back 2x to 8x its value (work-item 999 of 1000 storing 7 gave 14)."""
import numpy as np
import pytest

import mncl as cl

SIZES = [(1000, 999), (1000, 998), (1000, 0), (2000, 1999), (4096, 4095), (4097, 4096), (8192, 8190),
         (10000, 9999), (16384, 16383), (32768, 32767)]


@pytest.fixture(scope="module")
def kernel():
    ctx = cl.Context([cl.get_device("emulator", "mncore2")])
    prg = cl.Program(ctx, "__kernel void k(__global int *c, int w) { if (get_global_id(0) == w) c[0] = 7; }").build()
    return ctx, cl.CommandQueue(ctx), prg.k


@pytest.mark.parametrize("n, w", SIZES)
def test_one_work_item_stores_its_value_once(kernel, n, w):
    ctx, q, k = kernel
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=np.zeros(4, np.int32))
    k(q, (n,), None, buf, np.int32(w))
    out = np.empty(4, np.int32)
    cl.enqueue_copy(q, out, buf)
    assert out.tolist() == [7, 0, 0, 0]
