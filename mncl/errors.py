"""The runtime's one exception family, shaped like PyOpenCL's.

``Error`` is the base; ``LogicError`` (the caller did something invalid),
``RuntimeError`` (a failure the caller could not have prevented, such as a
build failure) and ``MemoryError`` (allocation / resources) derive from it.
Each carries ``code`` (the OpenCL status number), ``code_name``
(``"INVALID_ARG_SIZE"``), ``routine`` (the call that failed) and ``what`` (a
sentence saying what and why).  ``raise_error`` picks the class from the code
the way PyOpenCL does, so callers only name the code.
"""
from __future__ import annotations

import builtins


class status_code:
    """OpenCL status codes (the numbers of CL/cl.h)."""

    SUCCESS = 0
    DEVICE_NOT_FOUND = -1
    DEVICE_NOT_AVAILABLE = -2
    COMPILER_NOT_AVAILABLE = -3
    MEM_OBJECT_ALLOCATION_FAILURE = -4
    OUT_OF_RESOURCES = -5
    OUT_OF_HOST_MEMORY = -6
    PROFILING_INFO_NOT_AVAILABLE = -7
    MEM_COPY_OVERLAP = -8
    BUILD_PROGRAM_FAILURE = -11
    MAP_FAILURE = -12
    EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST = -14
    INVALID_VALUE = -30
    INVALID_DEVICE_TYPE = -31
    INVALID_PLATFORM = -32
    INVALID_DEVICE = -33
    INVALID_CONTEXT = -34
    INVALID_QUEUE_PROPERTIES = -35
    INVALID_COMMAND_QUEUE = -36
    INVALID_HOST_PTR = -37
    INVALID_MEM_OBJECT = -38
    INVALID_BINARY = -42
    INVALID_BUILD_OPTIONS = -43
    INVALID_PROGRAM = -44
    INVALID_PROGRAM_EXECUTABLE = -45
    INVALID_KERNEL_NAME = -46
    INVALID_KERNEL_DEFINITION = -47
    INVALID_KERNEL = -48
    INVALID_ARG_INDEX = -49
    INVALID_ARG_VALUE = -50
    INVALID_ARG_SIZE = -51
    INVALID_KERNEL_ARGS = -52
    INVALID_WORK_DIMENSION = -53
    INVALID_WORK_GROUP_SIZE = -54
    INVALID_WORK_ITEM_SIZE = -55
    INVALID_GLOBAL_OFFSET = -56
    INVALID_EVENT_WAIT_LIST = -57
    INVALID_EVENT = -58
    INVALID_OPERATION = -59
    INVALID_BUFFER_SIZE = -61
    INVALID_GLOBAL_WORK_SIZE = -63

    @classmethod
    def to_string(cls, value: int) -> str:
        for name, v in vars(cls).items():
            if not name.startswith("_") and v == value and isinstance(v, int):
                return name
        raise ValueError(f"no status code {value}")


_MEMORY_CODES = {status_code.OUT_OF_HOST_MEMORY, status_code.OUT_OF_RESOURCES,
                 status_code.MEM_OBJECT_ALLOCATION_FAILURE}


class Error(Exception):
    """Base of every error the runtime raises on purpose."""

    def __init__(self, routine: str, code: int, what: str):
        self.routine = routine
        self.code = code
        self.code_name = status_code.to_string(code)
        self.what = what
        super().__init__(f"{routine} failed: {self.code_name} - {what}")

    def is_out_of_memory(self) -> bool:
        return self.code in _MEMORY_CODES


class LogicError(Error):
    """The call was invalid (a wrong argument, size, index, ...)."""


class RuntimeError(Error, builtins.RuntimeError):  # noqa: A001 - PyOpenCL's name
    """The call was valid but failed (a build failure, a corrupted buffer, ...)."""


class MemoryError(Error, builtins.MemoryError):  # noqa: A001 - PyOpenCL's name
    """Allocation or resource exhaustion."""


def error_class(code: int) -> type:
    if code in _MEMORY_CODES:
        return MemoryError
    if code <= status_code.INVALID_VALUE:
        return LogicError
    return RuntimeError


def make_error(routine: str, code: int, what: str) -> Error:
    return error_class(code)(routine, code, what)


def raise_error(routine: str, code: int, what: str):
    raise make_error(routine, code, what)
