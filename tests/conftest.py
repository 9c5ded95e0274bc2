"""The runtime tests were written against the CPU device: they ask for it unless a test says otherwise.
(The runtime's own default, with no MNCL_DEVICE, is the emulator device; tests of that set it explicitly.)"""
import os

os.environ.setdefault("MNCL_DEVICE", "cpu")


import pytest  # noqa: E402


@pytest.fixture(scope="module")
def tiny_env():
    """(context, queue) on the emulator device for the `tiny` machine."""
    import mncl as cl
    ctx = cl.Context([cl.get_device(machine="tiny")])
    return ctx, cl.CommandQueue(ctx)


@pytest.fixture
def modes(monkeypatch):
    """The variant (KernelBinary.mode) each launch takes, in order."""
    from translator.backend import abi
    seen = []
    plan = abi.plan_launch

    def spy(*a, **k):
        p = plan(*a, **k)
        seen.append(p.binary.mode)
        return p
    monkeypatch.setattr(abi, "plan_launch", spy)
    return seen
