"""``Event``: the handle of one enqueued command, with status, errors and host profiling.

An event is created QUEUED by an enqueue call; the queue's worker thread moves
it to SUBMITTED, RUNNING and COMPLETE (or to a negative status code when the
command failed) and stamps ``time.perf_counter_ns()`` at each step.
``profile.queued/submit/start/end`` report those stamps in nanoseconds (host
wall clock; the queue must have PROFILING_ENABLE, as in OpenCL).
"""
from __future__ import annotations

import time

from .constants import command_execution_status as ces
from .constants import event_info, profiling_info
from .errors import Error, raise_error, status_code

_now = time.perf_counter_ns


class Event:
    __slots__ = ("queue", "command_type", "_status", "_error", "_times", "stats", "__weakref__")

    def __init__(self, queue, command_type: int):
        self.queue = queue
        self.command_type = command_type
        self._status = ces.QUEUED
        self._error = None
        self._times = [_now(), 0, 0, 0]
        self.stats = None          # the emulator device's profile of a kernel run

    # -- status ---------------------------------------------------------------
    @property
    def command_execution_status(self) -> int:
        return self._status

    def get_info(self, param):
        if param == event_info.COMMAND_EXECUTION_STATUS:
            return self._status
        if param == event_info.COMMAND_TYPE:
            return self.command_type
        if param == event_info.COMMAND_QUEUE:
            return self.queue
        if param == event_info.CONTEXT:
            return self.queue.context if self.queue is not None else None
        if param == event_info.REFERENCE_COUNT:
            return 1
        raise_error("Event.get_info", status_code.INVALID_VALUE, f"unknown event_info {param!r}")

    def wait(self):
        """Block until the command finished; raise its error if it failed."""
        if self._status > ces.COMPLETE:          # QUEUED, SUBMITTED or RUNNING
            self.queue._wait_event(self)
        if self._error is not None:
            err = self._error
            self.queue._mark_reported(err)
            raise err

    # -- profiling ------------------------------------------------------------
    @property
    def profile(self) -> "_Profile":
        return _Profile(self)

    def get_profiling_info(self, param):
        idx = {profiling_info.QUEUED: 0, profiling_info.SUBMIT: 1,
               profiling_info.START: 2, profiling_info.END: 3}.get(param) if isinstance(param, int) else None
        if idx is None:
            raise_error("Event.get_profiling_info", status_code.INVALID_VALUE,
                        f"unknown profiling_info {param!r}")
        if self.queue is None or not self.queue._profiling:
            raise_error("Event.get_profiling_info", status_code.PROFILING_INFO_NOT_AVAILABLE,
                        "the command queue was created without "
                        "command_queue_properties.PROFILING_ENABLE")
        if self._status != ces.COMPLETE:
            raise_error("Event.get_profiling_info", status_code.PROFILING_INFO_NOT_AVAILABLE,
                        f"the command has not completed (status "
                        f"{ces.to_string(self._status, '%d')}); call wait() first")
        return self._times[idx]

    # -- used by the queue's worker ------------------------------------------
    def _fail(self, err: Error):
        self._error = err
        self._status = err.code if err.code < 0 else status_code.OUT_OF_RESOURCES

    def __repr__(self):
        return f"<mncl.Event {ces.to_string(self._status, '%d')}>"


class _Profile:
    __slots__ = ("_ev",)

    def __init__(self, ev):
        self._ev = ev

    queued = property(lambda s: s._ev.get_profiling_info(profiling_info.QUEUED))
    submit = property(lambda s: s._ev.get_profiling_info(profiling_info.SUBMIT))
    start = property(lambda s: s._ev.get_profiling_info(profiling_info.START))
    end = property(lambda s: s._ev.get_profiling_info(profiling_info.END))
    QUEUED = queued
    SUBMIT = submit
    START = start
    END = end


class CompletedEvent(Event):
    """An event for work already done on the calling thread (e.g. a zero-byte copy)."""

    __slots__ = ()

    def __init__(self, queue, command_type: int):
        super().__init__(queue, command_type)
        t = self._times[0]
        self._times[1:] = [t, t, t]
        self._status = ces.COMPLETE


def wait_for_events(events):
    """Block until every event completed; raise the first failure."""
    from .checks import check_wait_for
    events = check_wait_for("wait_for_events", events, None)
    for ev in events:
        ev.wait()
