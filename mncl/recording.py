"""Recorded launch sequences: enqueue a sequence of kernels once, replay it with new arguments.

A decode step launches the same dozens of kernels per layer with the same
shapes; only a few arguments change (the position, the layer's weights, the
token's activations).  Enqueueing them call by call pays for setting and
checking every argument, looking up the launch shape and handing each command
to the queue's worker.  A recording does that once:

    pos, w = mncl.Arg("pos"), mncl.Arg("w")
    with queue.record() as layer:          # kernel launches are recorded, not run
        rmsnorm(queue, (n,), None, x, xn)
        matvec(queue, (m,), None, w, xn, y, pos)
    ev = layer.replay(pos=np.int32(7), w=weights[3])   # one command for the whole sequence

An ``Arg`` stands where an argument value would go; ``replay`` checks each
value it is given against every parameter the placeholder fills (the checks of
``Kernel.set_arg``) and submits the sequence as one command.  Its event's
``stats`` (emulator device) sums the launches' emulated time and cycles and
keeps each launch's profile in ``commands``.  This is the role of OpenCL's
``cl_khr_command_buffer`` with mutable dispatch, in PyOpenCL's call style.
"""
from __future__ import annotations

from .constants import command_type
from .errors import raise_error, status_code


class Arg:
    """A named placeholder for a kernel argument in a recording."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        if not isinstance(name, str) or not name.isidentifier():
            raise_error("Arg", status_code.INVALID_VALUE, f"an Arg needs an identifier for a name, got {name!r}")
        self.name = name

    def __repr__(self):
        return f"mncl.Arg({self.name!r})"


class SequenceStats:
    """The emulator's profile of a replayed sequence: totals, and each launch's profile."""

    def __init__(self, commands):
        self.commands = commands
        self.emulated_ns = sum(c.emulated_ns for c in commands)
        self.time_s = self.emulated_ns * 1e-9
        self.cycles = sum(c.cycles for c in commands)

    def __repr__(self):
        return f"<SequenceStats {len(self.commands)} launches, {self.cycles:,.0f} cycles, {self.time_s * 1e6:.1f} us>"


class Recording:
    """A sequence of kernel launches on one queue (``queue.record()``), replayed by ``replay``."""

    def __init__(self, queue):
        self.queue = queue
        self._commands = []          # (run, loaded, kernel info, args, launch), args holding Args
        self._types = {}             # placeholder -> {parameter type: (a kernel, argument index) of it}
        self._patches = {}           # command index -> [(argument index, placeholder, parameter type)]

    def __enter__(self):
        if self.queue._recorder is not None:
            raise_error("CommandQueue.record", status_code.INVALID_OPERATION,
                        "the queue is already recording a sequence")
        self.queue._recorder = self
        return self

    def __exit__(self, *exc):
        self.queue._recorder = None

    def _add(self, kernel, loaded, args, launch, wait_for):
        if wait_for:
            raise_error("enqueue_nd_range_kernel", status_code.INVALID_OPERATION,
                        "a recorded launch cannot wait for events: the sequence runs in order, "
                        "give wait_for to replay() instead")
        if launch is None:           # an empty NDRange: nothing to replay
            return
        k = len(self._commands)
        for i, a in enumerate(args):
            if type(a) is Arg:
                key = (kernel._kinds[i], kernel._pdtypes[i], kernel._scalar_dtypes[i])
                self._types.setdefault(a.name, {}).setdefault(key, (kernel, i))
                self._patches.setdefault(k, []).append((i, a.name, key))
        self._commands.append((self.queue.device.backend.run, loaded, kernel._info, args, launch))

    @property
    def placeholders(self) -> list:
        return list(self._types)

    def __len__(self):
        return len(self._commands)

    def replay(self, wait_for=None, **values):
        """Submit the whole sequence as one command, placeholders filled from ``values``."""
        if self.queue._recorder is self:
            raise_error("Recording.replay", status_code.INVALID_OPERATION,
                        "the sequence is still being recorded (replay it after the with block)")
        slots = self._types
        if values.keys() != slots.keys():
            missing = [n for n in slots if n not in values]
            unknown = [n for n in values if n not in slots]
            raise_error("Recording.replay", status_code.INVALID_KERNEL_ARGS,
                        (f"no value for placeholder(s) {', '.join(missing)}" if missing else "")
                        + ("; " if missing and unknown else "")
                        + (f"the sequence has no placeholder(s) {', '.join(unknown)} (it has: "
                           f"{', '.join(slots) or 'none'})" if unknown else ""))
        # the host only checks each value once per parameter type; the worker patches the launches
        given = {name: {key: kernel._dev_value(i, value) for key, (kernel, i) in slots[name].items()}
                 for name, value in values.items()}
        commands, patches = self._commands, self._patches

        def work():
            stats = []
            for k, (run, loaded, info, args, launch) in enumerate(commands):
                patch = patches.get(k)
                if patch:
                    args = list(args)
                    for i, name, key in patch:
                        args[i] = given[name][key]
                stats.append(run(loaded, info, args, launch))
            if stats and all(s is not None and hasattr(s, "emulated_ns") for s in stats):
                return SequenceStats(stats)
            return None
        return self.queue._submit(work, command_type.NDRANGE_KERNEL, wait_for)

    def __repr__(self):
        return f"<mncl.Recording of {len(self._commands)} launches, placeholders {self.placeholders}>"
