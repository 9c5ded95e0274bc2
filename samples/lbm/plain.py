"""The plain OpenCL C form of the D2Q9 lattice-Boltzmann solver (plain.cl), on any MNCL device.

    res = run(params, f0, steps, device="emulator", machine="tiny")
    res.f        # (9, n, n) float32: the populations after `steps` steps
    res.events   # the launches' mncl events (ev.stats on the emulator device)
    res.wall_s   # host wall time of the launches (build and copies excluded)

One launch of ``lbm_step`` per time step (plus ``lbm_halo`` before it for the periodic case),
ping-pong between two sets of nine buffers: the buffers are set once, the steps launched, the
result read back once.  plain.cl says how the arrays are laid out and why (ghost rows, a 2-D
launch over the whole array with the domain's rows as a guard).

``params`` is any object with ``case`` ("taylor-green" | "cavity" | "channel"), ``n``, ``nu``,
``u0`` and ``u_lid`` (samples/lbm/reference.py's Params, also importable from here); tau = 3 nu +
0.5.  The channel case also reads ``solid`` ((n, n) bool, default: a disc of radius n/10 at
(n/4, n/2)) and uses u_lid as its inflow speed (as reference.py does); a channel
wider than high (reference.py's aspect > 1) is not supported by this form yet.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import mncl as cl

from .reference import Params   # noqa: F401 - run()'s parameters, here for its callers

SOURCE_PATH = Path(__file__).resolve().parent / "plain.cl"
CASES = {"taylor-green": 0, "cavity": 1, "channel": 2}
Q = 9


@dataclass
class Result:
    f: np.ndarray                         # (9, n, n) float32
    events: list = field(default_factory=list)
    wall_s: float = 0.0                   # host wall time of the launches and the final wait


def default_solid(n: int) -> np.ndarray:
    """The channel's obstacle: a disc of radius n/10 at (n/4, n/2), (n, n) bool indexed [y, x]."""
    y, x = np.mgrid[0:n, 0:n]
    return (x + 0.5 - n / 4) ** 2 + (y + 0.5 - n / 2) ** 2 <= (n / 10) ** 2


def _device(device, machine):
    if isinstance(device, cl.Device):
        return device
    if device == "cpu":
        return cl.get_device("cpu")
    if device == "emulator":
        return cl.get_device("emulator", machine or "mncore2")
    raise ValueError(f"device must be 'cpu', 'emulator' or an mncl.Device, got {device!r}")


def to_device_layout(f: np.ndarray) -> np.ndarray:
    """(9, n, n) -> (9, n + 2, n): a zero ghost row below and above each population."""
    q, n, _ = f.shape
    out = np.zeros((q, n + 2, n), np.float32)
    out[:, 1:-1] = f
    return out


class PlainLBM:
    """The built program and its 18 buffers for one (device, case, n)."""

    def __init__(self, params, device="emulator", machine=None):
        case = getattr(params, "case", None)
        if case not in CASES:
            raise ValueError(f"params.case must be one of {sorted(CASES)}, got {case!r}")
        n = int(params.n)
        if getattr(params, "aspect", 1) != 1:
            raise ValueError(f"the plain form runs square grids; params.aspect = {params.aspect}")
        if n < 3:
            raise ValueError(f"n must be at least 3, got {n}")
        self.params, self.case, self.n = params, case, n
        self.omega = np.float32(1.0 / (3.0 * float(params.nu) + 0.5))
        self.device = _device(device, machine)
        self.ctx = cl.Context([self.device])
        self.queue = cl.CommandQueue(self.ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
        prg = cl.Program(self.ctx, SOURCE_PATH.read_text()).build(options=[f"-DLBM_CASE={CASES[case]}"])
        self.step_kernel, self.halo_kernel = prg.lbm_step, prg.lbm_halo
        nbytes = 4 * (n + 2) * n
        mf = cl.mem_flags
        self.bufs = [[cl.Buffer(self.ctx, mf.READ_WRITE, nbytes) for _ in range(Q)] for _ in range(2)]
        self.extra = []
        if case == "channel":
            solid = getattr(params, "solid", None)
            solid = default_solid(n) if solid is None else np.asarray(solid, bool)
            if solid.shape != (n, n):
                raise ValueError(f"params.solid must be ({n}, {n}), got {solid.shape}")
            host = np.zeros((n + 2, n), np.int32)
            host[1:-1] = solid
            self.solid_buf = cl.Buffer(self.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=host)
            self.extra = [np.float32(params.u_lid), self.solid_buf]
        else:
            self.extra = [np.float32(getattr(params, "u_lid", 0.0))]

    def set_f(self, f0: np.ndarray) -> None:
        f0 = np.asarray(f0, np.float32)
        if f0.shape != (Q, self.n, self.n):
            raise ValueError(f"f0 must be (9, {self.n}, {self.n}), got {f0.shape}")
        host = to_device_layout(f0)
        for k in range(Q):
            for side in (0, 1):                  # both sides: the ghost rows start defined in either
                cl.enqueue_copy(self.queue, self.bufs[side][k], host[k])
        self.queue.finish()

    def get_f(self, side: int) -> np.ndarray:
        out = np.empty((Q, self.n + 2, self.n), np.float32)
        for k in range(Q):
            cl.enqueue_copy(self.queue, out[k], self.bufs[side][k])
        self.queue.finish()
        return out[:, 1:-1].copy()

    def launch(self, side: int) -> list:
        """One step from bufs[side] into bufs[1 - side]; the step's events."""
        n, src, dst = self.n, self.bufs[side], self.bufs[1 - side]
        evs = []
        if self.case == "taylor-green":
            evs.append(self.halo_kernel(self.queue, (n,), None, src[2], src[4], src[5], src[6], src[7],
                                        src[8], np.int32(n)))
        evs.append(self.step_kernel(self.queue, (n, n + 2), None, *src, *dst, np.int32(n), self.omega,
                                    *self.extra))
        return evs

    def run(self, f0: np.ndarray, steps: int, progress=None) -> Result:
        if steps < 0:
            raise ValueError(f"steps must be >= 0, got {steps}")
        self.set_f(f0)
        events, side = [], 0
        t0 = time.perf_counter()
        for s in range(steps):
            events += self.launch(side)
            side = 1 - side
            if progress is not None:
                progress(s + 1, steps)
        self.queue.finish()
        wall = time.perf_counter() - t0
        return Result(self.get_f(side), events, wall)


def run(params, f0, steps: int, device="emulator", machine=None, progress=None) -> Result:
    """Run `steps` steps of the plain form from populations f0 ((9, n, n) float32) on `device`
    ("cpu", "emulator" with `machine`, or an mncl.Device); progress(done, total) after each step."""
    return PlainLBM(params, device, machine).run(f0, steps, progress)
