"""MNCL_DEVICE=cpu makes the CPU device the first device a script sees (issue 26): PyOpenCL
examples take platform 0's device 0, and a user who asks for the CPU device gets it there too."""
import os
import subprocess
import sys

import pytest

PROBE = "import mncl as cl; print(cl.get_platforms()[0].get_devices()[0].name)"


@pytest.mark.parametrize("env,first", [({"MNCL_DEVICE": "cpu"}, "CPU"), ({}, "emulator")])
def test_the_first_device(env, first):
    e = {k: v for k, v in os.environ.items() if k not in ("MNCL_DEVICE", "MNCL_MACHINE")}
    e.update(env, MNCL_MACHINE="tiny")
    out = subprocess.run([sys.executable, "-c", PROBE], env=e, capture_output=True, text=True, check=True).stdout
    assert first.lower() in out.lower(), out


def test_the_order_follows_the_variable_while_it_is_set(monkeypatch):
    """The order is read when the devices are listed, not fixed when the platform is made."""
    import mncl as cl
    monkeypatch.setenv("MNCL_DEVICE", "cpu")
    assert cl.get_platforms()[0].get_devices()[0].type == cl.device_type.CPU
    monkeypatch.delenv("MNCL_DEVICE")
    assert cl.get_platforms()[0].get_devices()[0].type == cl.device_type.ACCELERATOR


def test_every_opencl_1_2_info_query_answers():
    """Scripts read device, buffer and kernel queries that PyOpenCL exposes: each answers on both
    devices (or, for GLOBAL_WORK_SIZE, which OpenCL keeps to built-in kernels, says why not)."""
    import numpy as np
    import mncl as cl
    names = [n for n in vars(cl.device_info) if n.isupper()]
    assert len(names) == 76                       # OpenCL 1.2's cl_device_info, 0x1000 .. 0x104B
    for dev in cl.get_platforms()[0].get_devices():
        for n in names:
            dev.get_info(getattr(cl.device_info, n))
        ctx = cl.Context([dev])
        buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 64)
        for n in (n for n in vars(cl.mem_info) if n.isupper()):
            buf.get_info(getattr(cl.mem_info, n))
        k = cl.Program(ctx, "__kernel void k(__global float *a) { a[0] = 1; }").build().k
        for n in (n for n in vars(cl.kernel_work_group_info) if n.isupper() and n != "GLOBAL_WORK_SIZE"):
            k.get_work_group_info(getattr(cl.kernel_work_group_info, n), dev)
        with pytest.raises(cl.LogicError, match="built-in kernels"):
            k.get_work_group_info(cl.kernel_work_group_info.GLOBAL_WORK_SIZE, dev)
        assert dev.image_support is False and dev.preferred_vector_width_double == 1
        assert np.dtype(np.float32).itemsize * 8 <= dev.min_data_type_align_size
