"""``CommandQueue``: an in-order queue whose commands run on one worker thread per queue.

An enqueue call validates its arguments on the caller's thread (so a mistake
raises at the call that made it), wraps the work in a closure, creates the
``Event`` and hands both to the worker through a ``SimpleQueue``; it returns
at once.  The worker runs commands in order, stamps the event's profile, and
records a failure in the event; ``Event.wait()`` and ``finish()`` raise it.
``flush()`` has nothing to do (commands are submitted as they are enqueued).
A blocking command finding the queue idle runs on the caller's thread
instead: the order is the same and it saves two thread hand-offs.

A ``KeyboardInterrupt`` (Ctrl-C) that reaches the program while it waits for
a queue, or that ends the program, cancels every command submitted so far on
every queue (``cancel_all``): the running launch stops at its next check (the
emulator asks ``current_stop_check()``), queued ones do not run, their events
fail, and the exit-time ``finish`` does not wait for them.  The interrupt is
raised once; a cancelled command's error is not raised again by ``finish``.
"""
from __future__ import annotations

import atexit
import itertools
import sys
import threading
import weakref
from queue import SimpleQueue

from .checks import as_int, check_context, check_wait_for
from .constants import command_execution_status as ces
from .constants import command_queue_info, command_queue_properties
from .errors import Error, make_error, raise_error, status_code
from .events import Event, _now

_live_queues: "weakref.WeakSet" = weakref.WeakSet()
_worker_state = threading.local()    # .shared on a queue's worker thread: what current_stop_check asks
CANCELLED = "cancelled: a KeyboardInterrupt (Ctrl-C) interrupted the program before this command finished"


class _Shared:
    """What the worker thread needs (not the queue itself, so a dropped queue can be collected).

    ``submitted`` and ``done`` count commands; a thread about to wait raises
    ``waiting`` under ``cond`` before it re-checks, and the worker notifies only
    when someone waits, so an enqueue or a completion takes no lock.
    """

    __slots__ = ("cond", "counter", "submitted", "done", "waiting", "errors", "inbox", "cancelled")

    def __init__(self):
        self.cond = threading.Condition(threading.Lock())
        self.counter = itertools.count(1)
        self.submitted = 0
        self.done = 0
        self.waiting = 0
        self.errors = []          # failures not yet raised to the user
        self.inbox = SimpleQueue()
        self.cancelled = 0        # commands numbered up to this one are cancelled (cancel_all)


def current_stop_check():
    """For a device: a callable that turns true when the command running on this thread is cancelled
    (None outside a queue's worker: there a KeyboardInterrupt reaches the running code itself)."""
    shared = getattr(_worker_state, "shared", None)
    if shared is None:
        return None
    return lambda: shared.cancelled > shared.done      # the running command is number done + 1


def _worker(shared: _Shared):
    get = shared.inbox.get
    cond = shared.cond
    SUBMITTED, RUNNING, COMPLETE = ces.SUBMITTED, ces.RUNNING, ces.COMPLETE
    _worker_state.shared = shared
    while True:
        work, ev, deps = get()
        if ev is None:
            return
        times = ev._times
        err = None
        if deps:
            times[1] = _now()
            ev._status = SUBMITTED
            for d in deps:
                if d._status > COMPLETE and d.queue is not None:
                    d.queue._wait_event(d)
                if d._status < 0:
                    err = make_error("enqueue", status_code.EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
                                     f"a command this one waits for failed: {d._error}")
            times[2] = _now()
        else:
            times[1] = times[2] = _now()
        ev._status = RUNNING
        if shared.cancelled > shared.done:
            err = make_error("enqueue", status_code.OUT_OF_RESOURCES, CANCELLED)
        if err is None:
            try:
                res = work()
                if res is not None and hasattr(res, "emulated_ns"):    # the emulator: emulated time
                    ev.stats = res
                    times[3] = times[2] + int(res.emulated_ns)
            except Error as e:
                err = e
            except BaseException as e:  # a device bug: still report it through the event
                err = make_error("enqueue", status_code.OUT_OF_RESOURCES,
                                 f"internal error while executing the command: {type(e).__name__}: {e}")
        if getattr(ev, "stats", None) is None or err is not None:
            times[3] = _now()
        if err is not None and shared.cancelled > shared.done and err.what != CANCELLED:
            err = make_error("enqueue", status_code.OUT_OF_RESOURCES, CANCELLED)   # stopped while running
        if err is None:
            ev._status = COMPLETE
        else:
            with cond:
                ev._fail(err)
                if err.what != CANCELLED:       # the user has had the KeyboardInterrupt already
                    shared.errors.append(err)
        shared.done += 1
        if shared.waiting:
            with cond:
                cond.notify_all()


class CommandQueue:
    """An in-order command queue on one device of a context (PyOpenCL's ``CommandQueue``)."""

    def __init__(self, context, device=None, properties=None):
        check_context("CommandQueue", context)
        if device is None:
            device = context.devices[0]
        elif not any(device is d for d in context.devices):
            raise_error("CommandQueue", status_code.INVALID_DEVICE,
                        f"device {getattr(device, 'name', device)!r:.60} is not in the context")
        props = as_int("CommandQueue", "properties (command_queue_properties bits)", properties or 0)
        known = (command_queue_properties.PROFILING_ENABLE
                 | command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
        if props & ~known:
            raise_error("CommandQueue", status_code.INVALID_QUEUE_PROPERTIES,
                        f"unknown command_queue_properties bits 0x{props & ~known:x}")
        self.context = context
        self.device = device
        self.properties = props
        self._profiling = bool(props & command_queue_properties.PROFILING_ENABLE)
        self._recorder = None          # a Recording taking this queue's kernel launches
        self._shared = _Shared()
        self._thread = threading.Thread(target=_worker, args=(self._shared,), daemon=True,
                                        name="mncl-queue")
        self._thread.start()
        weakref.finalize(self, self._shared.inbox.put, (None, None, None))
        _live_queues.add(self)

    # -- submission (used by the enqueue functions) ----------------------------
    def _submit(self, work, command_type: int, wait_for=None) -> Event:
        if self._recorder is not None:
            self._refuse_while_recording()
        ev = Event(self, command_type)
        deps = None
        if wait_for is not None:
            deps = [d for d in check_wait_for("enqueue", wait_for, self.context) if d.queue is not self]
        shared = self._shared
        shared.submitted = next(shared.counter)
        shared.inbox.put((work, ev, deps))
        return ev

    def _run_blocking(self, work, command_type: int, wait_for=None) -> Event:
        """A blocking command: run here when the queue is idle (same order, no thread hand-off), else wait."""
        if self._recorder is not None:
            self._refuse_while_recording()
        shared = self._shared
        if wait_for is not None:
            wait_for = check_wait_for("enqueue", wait_for, self.context)
        if wait_for or shared.done != shared.submitted:
            ev = self._submit(work, command_type, wait_for)
            ev.wait()
            self._raise_pending()        # a failed kernel before this read must not go unnoticed
            return ev
        self._raise_pending()
        ev = Event(self, command_type)
        times = ev._times
        times[1] = times[2] = _now()
        ev._status = ces.RUNNING
        try:
            work()
        except Error as e:
            ev._fail(e)
            raise
        except KeyboardInterrupt:
            ev._fail(make_error("enqueue", status_code.OUT_OF_RESOURCES, CANCELLED))
            cancel_all()
            raise
        finally:
            times[3] = _now()
        ev._status = ces.COMPLETE
        return ev

    def _wait_until(self, done):
        shared = self._shared
        if done():
            return
        try:
            with shared.cond:
                shared.waiting += 1
                try:
                    while not done():
                        shared.cond.wait()
                finally:
                    shared.waiting -= 1
        except KeyboardInterrupt:
            cancel_all()
            raise

    def _wait_event(self, ev: Event):
        self._wait_until(lambda: ev._status <= ces.COMPLETE)

    def _raise_pending(self):
        """Raise the first failure of an earlier command that has not been raised to the user yet."""
        shared = self._shared
        with shared.cond:
            errors, shared.errors = shared.errors, []
        if errors:
            raise errors[0]

    def _mark_reported(self, err):
        with self._shared.cond:
            if err in self._shared.errors:
                self._shared.errors.remove(err)

    @staticmethod
    def _refuse_while_recording():
        raise_error("enqueue", status_code.INVALID_OPERATION,
                    "the queue is recording (queue.record()): only kernel launches can be recorded; "
                    "enqueue copies and waits before or after the with block")

    # -- recording -----------------------------------------------------------------
    def record(self):
        """A ``Recording``: inside ``with queue.record() as rec:`` kernel launches are recorded,
        not run; ``rec.replay(**values)`` runs them as one command (mncl/recording.py)."""
        from .recording import Recording
        return Recording(self)

    # -- PyOpenCL API -----------------------------------------------------------
    def finish(self):
        """Block until every enqueued command completed; raise the first failure not yet raised."""
        shared = self._shared
        target = shared.submitted
        self._wait_until(lambda: shared.done >= target)
        self._raise_pending()

    def flush(self):
        """Nothing to do: commands reach the worker when they are enqueued."""

    def get_info(self, param):
        table = {command_queue_info.CONTEXT: self.context, command_queue_info.DEVICE: self.device,
                 command_queue_info.PROPERTIES: self.properties,
                 command_queue_info.REFERENCE_COUNT: 1}
        if not isinstance(param, int) or param not in table:
            raise_error("CommandQueue.get_info", status_code.INVALID_VALUE,
                        f"unknown command_queue_info {param!r}")
        return table[param]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.finish()

    def __repr__(self):
        return f"<mncl.CommandQueue on '{self.device.name}'>"


def cancel_all():
    """Cancel every command submitted so far on every queue (a KeyboardInterrupt: see the module
    docstring).  Queues stay usable: commands submitted later run."""
    for q in list(_live_queues):
        shared = q._shared
        with shared.cond:
            shared.cancelled = shared.submitted


@atexit.register
def _finish_all():
    """At exit, finish every queue, unless a KeyboardInterrupt ends the program: then cancel."""
    # sys.last_value: the exception that ended the program (in the interactive interpreter, ps1 is
    # set and last_value is only the last statement's, which ended nothing)
    if isinstance(getattr(sys, "last_value", None), KeyboardInterrupt) and not hasattr(sys, "ps1"):
        cancel_all()
        return
    for q in list(_live_queues):
        try:
            q.finish()
        except Error:
            pass
        except KeyboardInterrupt:           # Ctrl-C while the exit waits: cancelled, exit now
            print("mncl: interrupted at exit: the queued commands were cancelled", file=sys.stderr)
            return
