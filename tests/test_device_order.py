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
