"""mncl: a PyOpenCL-shaped host runtime for the MNCL SDK (``import mncl as cl``).

The same names and call shapes as PyOpenCL (platforms, devices, contexts,
queues, buffers, programs, kernels, events, the info enumerations and the
``Error`` family), running on MNCL's devices (mncl/backend.py): the CPU
device (mncl/cpu.py) and the MN-Core 2 emulator (mncl/emulator_device.py;
``get_device(machine=...)`` gives it for a machine).
docs/runtime.md lists the differences from PyOpenCL.
"""
from . import cltypes
from .backend import DeviceDescription, Launch
from .constants import (build_status, command_execution_status, command_queue_info,
                        command_queue_properties, command_type, context_info, device_fp_config, device_info,
                        device_type, event_info, kernel_arg_address_qualifier, kernel_arg_info,
                        kernel_info, kernel_work_group_info, map_flags, mem_flags, mem_info, mem_object_type,
                        platform_info, profiling_info, program_build_info, program_info)
from .context import Context, create_some_context, get_device
from .errors import Error, LogicError, MemoryError, RuntimeError, status_code
from .events import Event, wait_for_events
from .kernel import Kernel, enqueue_nd_range_kernel, enqueue_task
from .memory import Buffer, LocalMemory, MemoryMap
from .platform import Device, Platform, get_platforms
from .program import Program
from .queue import CommandQueue
from .recording import Arg, Recording
from .transfers import (enqueue_barrier, enqueue_copy, enqueue_copy_buffer, enqueue_fill_buffer,
                        enqueue_map_buffer, enqueue_marker, enqueue_read_buffer, enqueue_write_buffer)

VERSION = (0, 1, 0)
VERSION_TEXT = "0.1.0"
__version__ = VERSION_TEXT

__all__ = [n for n in dir() if not n.startswith("_")]
