"""mncl.characterize: what PyOpenCL's examples ask of a device (pyopencl.characterize's names)."""
from __future__ import annotations

from .constants import device_info


def has_double_support(dev) -> bool:
    return "cl_khr_fp64" in dev.get_info(device_info.EXTENSIONS).split()


def has_amd_double_support(dev) -> bool:
    return False


def local_memory_size(dev) -> int:
    return dev.get_info(device_info.LOCAL_MEM_SIZE)


def usable_local_mem_size(dev, nargs=None) -> int:
    return local_memory_size(dev)


def get_simd_group_size(dev, type_size) -> int | None:
    """Work-items that run in lock step: on the emulator device a PE's lanes and cycles (8 work-
    items of 4-byte values per PE step), on the CPU device none are promised (None)."""
    name = dev.get_info(device_info.NAME).lower()
    return 8 if "emulator" in name or "mn-core" in name else None


def reasonable_work_group_size_multiple(dev, ctx=None) -> int:
    return get_simd_group_size(dev, 4) or 1


def nv_compute_capability(dev):
    return None
