"""Argument checks shared by the public calls: each turns a wrong argument into an ``mncl.Error``
naming the call and the argument, never a bare Python exception from deeper down.

OpenCL's rules, as PyOpenCL reports them: a queue, buffer, kernel or event of
another context is INVALID_CONTEXT (a buffer set as a kernel argument:
INVALID_MEM_OBJECT); a released buffer is INVALID_MEM_OBJECT; a size, offset
or count must be an integer (a float such as 10.7 is refused, not truncated).
"""
from __future__ import annotations

import operator

from .errors import raise_error, status_code


def as_int(routine: str, what: str, value, code: int = status_code.INVALID_VALUE) -> int:
    """``value`` as an int: Python and numpy integers only (no float, str or bool)."""
    if isinstance(value, bool):
        raise_error(routine, code, f"{what} must be an integer, not a bool ({value!r})")
    try:
        return operator.index(value)
    except TypeError:
        raise_error(routine, code, f"{what} must be an integer, not {type(value).__name__} ({value!r:.60})")


def _cls(name):
    """A runtime class, imported on first use (mncl's modules import this one)."""
    cls = _CLASSES.get(name)
    if cls is None:
        from . import context, events, memory, queue
        _CLASSES.update(Context=context.Context, CommandQueue=queue.CommandQueue, Buffer=memory.Buffer,
                        Event=events.Event)
        cls = _CLASSES[name]
    return cls


_CLASSES: dict = {}


def check_context(routine: str, context):
    if not isinstance(context, _cls("Context")):
        raise_error(routine, status_code.INVALID_CONTEXT,
                    f"the context must be an mncl.Context, not {type(context).__name__}")


def check_queue(routine: str, queue):
    if not isinstance(queue, _cls("CommandQueue")):
        raise_error(routine, status_code.INVALID_COMMAND_QUEUE,
                    f"the queue must be an mncl.CommandQueue, not {type(queue).__name__}")


def buffer_alloc(routine: str, what: str, buf, queue):
    """The device allocation of ``buf`` for a command of ``queue``: a live buffer of its context
    (and, in a context of several devices, of the queue's device)."""
    if not isinstance(buf, _cls("Buffer")):
        raise_error(routine, status_code.INVALID_MEM_OBJECT,
                    f"{what} must be an mncl.Buffer, not {type(buf).__name__}")
    alloc = buf._alloc
    if alloc is None:
        raise_error(routine, status_code.INVALID_MEM_OBJECT, f"{what} was released (Buffer.release())")
    if buf.context is not queue.context:
        raise_error(routine, status_code.INVALID_CONTEXT,
                    f"{what} belongs to another context than the queue")
    if buf._device is not queue.device:
        raise_error(routine, status_code.INVALID_MEM_OBJECT,
                    f"{what} lives on device '{buf._device.name}', the queue runs on "
                    f"'{queue.device.name}' (mncl devices share no memory)")
    return alloc


def check_wait_for(routine: str, wait_for, context) -> list:
    """``wait_for`` as a list of events of ``context`` (None: of any context); INVALID_EVENT_WAIT_LIST
    for what is not an event, INVALID_CONTEXT for an event of another context."""
    Event = _cls("Event")
    try:
        events = list(wait_for)
    except TypeError:
        raise_error(routine, status_code.INVALID_EVENT_WAIT_LIST,
                    f"wait_for must be a list of mncl.Event, not {type(wait_for).__name__}")
    for d in events:
        if not isinstance(d, Event):
            raise_error(routine, status_code.INVALID_EVENT_WAIT_LIST,
                        f"wait_for holds {d!r:.60}, which is not an mncl.Event")
        if context is not None and d.queue is not None and d.queue.context is not context:
            raise_error(routine, status_code.INVALID_CONTEXT,
                        f"wait_for holds an event of another context ({d!r})")
    return events
