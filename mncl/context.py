"""``Context`` and ``create_some_context``: which devices a program uses.

``create_some_context()`` never prompts.  It reads ``MNCL_DEVICE`` (``cpu``,
``emulator``, or a substring of a device name) and ``MNCL_MACHINE`` (the
emulator's machine: ``tiny``, ``mncore2`` or a TOML file); without them it
picks the default device, the emulator device of ``MNCL_MACHINE`` (default
mncore2).  ``get_device(machine=...)`` gives the emulator device of any
machine, for a program (or a test) that names the machine itself.
"""
from __future__ import annotations

import os

from .constants import context_info, device_type
from .errors import raise_error, status_code
from .platform import Device, get_platforms



class Context:
    """A set of devices sharing buffers and programs (PyOpenCL's ``Context``)."""

    def __init__(self, devices=None, properties=None, dev_type=None):
        if devices is None:
            platform = get_platforms()[0]
            devices = platform.get_devices(dev_type if dev_type is not None else device_type.ALL)[:1]
        if isinstance(devices, Device):
            devices = [devices]
        if not isinstance(devices, (list, tuple)):
            raise_error("Context", status_code.INVALID_VALUE,
                        f"devices must be a list of mncl.Device, not {type(devices).__name__}")
        devices = list(devices)
        if not devices:
            raise_error("Context", status_code.INVALID_VALUE, "no devices given")
        for d in devices:
            if not isinstance(d, Device):
                raise_error("Context", status_code.INVALID_DEVICE,
                            f"{d!r} is not an mncl.Device (devices of another OpenCL "
                            f"implementation cannot be mixed with mncl)")
        self.devices = devices
        self.properties = properties

    def get_info(self, param):
        if param == context_info.DEVICES:
            return list(self.devices)
        if param == context_info.NUM_DEVICES:
            return len(self.devices)
        if param == context_info.REFERENCE_COUNT:
            return 1
        if param == context_info.PROPERTIES:
            return self.properties or []
        raise_error("Context.get_info", status_code.INVALID_VALUE, f"unknown context_info {param!r}")

    @property
    def num_devices(self):
        return len(self.devices)

    def __repr__(self):
        return f"<mncl.Context on {', '.join(d.name for d in self.devices)}>"


def select_device(spec: str | None = None, machine: str | None = None) -> Device:
    """The device ``spec`` names (``cpu``, ``emulator`` or a name substring); None: the default."""
    devices = [d for p in get_platforms() for d in p.get_devices()]
    if spec is None or spec == "":
        spec = "emulator"
    want = spec.strip().lower()
    if want == "emulator" and machine:
        return _emulator(machine, "create_some_context", f"MNCL_MACHINE={machine!r}")
    matches = [d for d in devices if d.kind == want] or [d for d in devices if want in d.name.lower()]
    if not matches:
        from . import platform
        raise_error("create_some_context", status_code.DEVICE_NOT_FOUND,
                    f"MNCL_DEVICE={spec!r} matches no device; available: "
                    + ", ".join(f"'{d.name}' ({d.kind})" for d in devices)
                    + (f" (no emulator device: {platform.machine_error})" if platform.machine_error else ""))
    return matches[0]


def create_some_context(interactive=None, answers=None) -> Context:
    """A context on the device ``MNCL_DEVICE`` / ``MNCL_MACHINE`` select (never prompts)."""
    spec = os.environ.get("MNCL_DEVICE")
    machine = os.environ.get("MNCL_MACHINE")
    if spec is not None and not spec.strip():
        spec = None
    return Context([select_device(spec, machine)])


def get_device(kind: str = "emulator", machine: str = "mncore2", new: bool = False) -> Device:
    """The device of a kind: ``cpu``, or ``emulator`` for a machine (a preset name such as
    ``tiny`` or ``mncore2``, or a TOML file), made on the first request and the same Device after
    that.  ``new=True``: an emulator device of its own (its own emulated machine and DRAM), not
    listed by the platform."""
    if kind == "cpu":
        return next(d for d in get_platforms()[0]._devices if d.kind == "cpu")
    if kind != "emulator":
        raise_error("get_device", status_code.DEVICE_NOT_FOUND, f"kind {kind!r:.40}: there are 'cpu' and 'emulator'")
    return _emulator(machine, "get_device", f"machine {machine!r}", new)


def _emulator(machine: str, routine: str, what: str, new: bool = False) -> Device:
    from .emulator_device import EmulatorDevice
    plat = get_platforms()[0]
    if not new:
        for d in plat._devices:
            if d.kind == "emulator" and machine in (d.backend.machine.name, d.backend.spec):
                return d
    try:
        backend = EmulatorDevice(machine)
    except Exception as e:  # a bad preset name or TOML file
        raise_error(routine, status_code.DEVICE_NOT_FOUND, f"{what}: {e}")
    dev = Device(plat, backend)
    if not new:
        plat._devices.append(dev)
    return dev
