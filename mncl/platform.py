"""Platforms and devices as PyOpenCL shows them: ``get_platforms()``, ``Platform``, ``Device``.

There is one platform, "MNCL", whose devices are the backends of
mncl/backend.py: the CPU device now, the emulator device in a later issue.
``Device`` wraps a backend and answers ``get_info(device_info.X)`` and the
lower-case attributes PyOpenCL derives from it (``dev.max_work_group_size``).
"""
from __future__ import annotations

import os
import threading

from .constants import command_queue_properties, device_info, device_type, platform_info
from .errors import make_error, raise_error, status_code

_CPU = device_type.CPU

_lock = threading.Lock()
_platforms: list = []


class Device:
    """One device of the MNCL platform (PyOpenCL's ``Device``)."""

    def __init__(self, platform: "Platform", backend):
        self.platform = platform
        self.backend = backend
        d = backend.description
        self._info = {
            device_info.NAME: d.name,
            device_info.TYPE: d.type,
            device_info.VENDOR: d.vendor,
            device_info.VENDOR_ID: 0,
            device_info.VERSION: d.version,
            device_info.DRIVER_VERSION: d.driver_version,
            device_info.OPENCL_C_VERSION: d.opencl_c_version,
            device_info.PROFILE: d.profile,
            device_info.EXTENSIONS: d.extensions,
            device_info.MAX_COMPUTE_UNITS: d.max_compute_units,
            device_info.MAX_WORK_ITEM_DIMENSIONS: 3,
            device_info.MAX_WORK_GROUP_SIZE: d.max_work_group_size,
            device_info.MAX_WORK_ITEM_SIZES: list(d.max_work_item_sizes),
            device_info.MAX_CLOCK_FREQUENCY: d.max_clock_frequency,
            device_info.ADDRESS_BITS: d.address_bits,
            device_info.MAX_MEM_ALLOC_SIZE: d.max_mem_alloc_size,
            device_info.MAX_PARAMETER_SIZE: d.max_parameter_size,
            device_info.MEM_BASE_ADDR_ALIGN: d.mem_base_addr_align,
            device_info.GLOBAL_MEM_CACHE_SIZE: 0,
            device_info.GLOBAL_MEM_SIZE: d.global_mem_size,
            device_info.MAX_CONSTANT_BUFFER_SIZE: d.max_constant_buffer_size,
            device_info.MAX_CONSTANT_ARGS: 8,
            device_info.LOCAL_MEM_TYPE: 2,          # CL_GLOBAL: host memory
            device_info.LOCAL_MEM_SIZE: d.local_mem_size,
            device_info.ERROR_CORRECTION_SUPPORT: False,
            device_info.PROFILING_TIMER_RESOLUTION: 1,
            device_info.ENDIAN_LITTLE: True,
            device_info.AVAILABLE: True,
            device_info.COMPILER_AVAILABLE: True,
            device_info.LINKER_AVAILABLE: False,
            device_info.EXECUTION_CAPABILITIES: 1,  # CL_EXEC_KERNEL
            device_info.QUEUE_PROPERTIES: command_queue_properties.PROFILING_ENABLE,
            device_info.SINGLE_FP_CONFIG: d.single_fp_config,
            device_info.DOUBLE_FP_CONFIG: 0x3F,
            device_info.HALF_FP_CONFIG: 0,
            device_info.HOST_UNIFIED_MEMORY: True,
            # no images, sub-devices, built-in kernels or printf; vectors are compiled element-wise
            **{getattr(device_info, f"{kind}_VECTOR_WIDTH_{t}"): 0 if t == "HALF" else 1
               for kind in ("PREFERRED", "NATIVE") for t in ("CHAR", "SHORT", "INT", "LONG", "FLOAT",
                                                              "DOUBLE", "HALF")},
            **dict.fromkeys((device_info.MAX_READ_IMAGE_ARGS, device_info.MAX_WRITE_IMAGE_ARGS,
                             device_info.IMAGE2D_MAX_WIDTH, device_info.IMAGE2D_MAX_HEIGHT,
                             device_info.IMAGE3D_MAX_WIDTH, device_info.IMAGE3D_MAX_HEIGHT,
                             device_info.IMAGE3D_MAX_DEPTH, device_info.MAX_SAMPLERS,
                             device_info.IMAGE_MAX_BUFFER_SIZE, device_info.IMAGE_MAX_ARRAY_SIZE,
                             device_info.IMAGE_PITCH_ALIGNMENT, device_info.IMAGE_BASE_ADDRESS_ALIGNMENT,
                             device_info.GLOBAL_MEM_CACHELINE_SIZE, device_info.PARTITION_MAX_SUB_DEVICES,
                             device_info.PARTITION_AFFINITY_DOMAIN, device_info.PRINTF_BUFFER_SIZE,
                             device_info.GLOBAL_MEM_CACHE_TYPE), 0),      # CL_NONE cache
            device_info.IMAGE_SUPPORT: False,
            device_info.MIN_DATA_TYPE_ALIGN_SIZE: 128,    # the largest type, long16 (deprecated in 1.2)
            device_info.BUILT_IN_KERNELS: "",
            device_info.PARENT_DEVICE: None,
            device_info.PARTITION_PROPERTIES: [],
            device_info.PARTITION_TYPE: [],
            device_info.REFERENCE_COUNT: 1,
            device_info.PREFERRED_INTEROP_USER_SYNC: True,
        }

    def get_info(self, param):
        if param == device_info.PLATFORM:
            return self.platform
        try:
            return self._info[param]
        except (KeyError, TypeError):
            raise make_error("Device.get_info", status_code.INVALID_VALUE,
                        f"unknown or unsupported device_info parameter {param!r}") from None

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        param = getattr(device_info, name.upper(), None)
        if param is None or not isinstance(param, int):
            raise AttributeError(f"'Device' object has no attribute '{name}'")
        return self.get_info(param)

    @property
    def kind(self) -> str:
        return self.backend.description.kind

    def __repr__(self):
        return f"<mncl.Device '{self.name}' on '{self.platform.name}'>"


class Platform:
    """The MNCL platform (PyOpenCL's ``Platform``)."""

    name = "MNCL"
    vendor = "MNCL SDK"
    version = "OpenCL 1.2 MNCL 0.1"
    profile = "FULL_PROFILE"
    extensions = ""

    def __init__(self, backends):
        self._devices = [Device(self, b) for b in backends]

    def get_devices(self, device_type=device_type.ALL):
        if isinstance(device_type, bool) or not isinstance(device_type, int):
            raise_error("Platform.get_devices", status_code.INVALID_DEVICE_TYPE,
                        f"device_type must be device_type bits (an int), not {type(device_type).__name__}")
        found = [d for d in self._devices if d.type & device_type]
        if (os.environ.get("MNCL_DEVICE") or "").strip().lower() == "cpu":
            # the CPU device first: scripts that take platform 0's device 0 (PyOpenCL's examples) get it
            found.sort(key=lambda d: not d.type & _CPU)
        if not found:
            raise_error("Platform.get_devices", status_code.DEVICE_NOT_FOUND,
                        f"no device of type {_type_names(device_type)} on platform '{self.name}' "
                        f"(it has: {', '.join(d.name for d in self._devices)})")
        return found

    def get_info(self, param):
        table = {platform_info.NAME: self.name, platform_info.VENDOR: self.vendor,
                 platform_info.VERSION: self.version, platform_info.PROFILE: self.profile,
                 platform_info.EXTENSIONS: self.extensions}
        if not isinstance(param, int) or param not in table:
            raise_error("Platform.get_info", status_code.INVALID_VALUE,
                        f"unknown platform_info parameter {param!r}")
        return table[param]

    def __repr__(self):
        return f"<mncl.Platform '{self.name}'>"


def _type_names(t: int) -> str:
    names = [n for n, v in vars(device_type).items()
             if not n.startswith("_") and isinstance(v, int) and v != device_type.ALL and v & t]
    return "|".join(names) if t != device_type.ALL else "ALL"


def get_platforms() -> list:
    """The installed platforms: one, MNCL (created on first use)."""
    with _lock:
        if not _platforms:
            from .cpu import CpuDevice
            emu = _default_emulator()
            _platforms.append(Platform(([emu] if emu else []) + [CpuDevice()]))
        return list(_platforms)


machine_error = None      # why the emulator device of MNCL_MACHINE could not be made (it is left out)


def _default_emulator():
    """The emulator device for MNCL_MACHINE (default mncore2), or None if that names no machine:
    the CPU device still works, and asking for the emulator device raises an error naming
    MNCL_MACHINE (mncl/context.py)."""
    global machine_error
    import os
    from .emulator_device import EmulatorDevice
    machine = os.environ.get("MNCL_MACHINE") or "mncore2"
    try:
        return EmulatorDevice(machine)
    except Exception as e:      # an unknown preset, a missing or malformed TOML file
        machine_error = f"MNCL_MACHINE={machine!r}: {e}"
        return None
