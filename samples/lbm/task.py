"""The task-kernel form of the D2Q9 lattice-Boltzmann solver (task.cl), on the emulator device.

    res = run(params, f0, steps, machine="mncore2")
    res.f        # (9, n, n) float32: the populations after `steps` steps
    res.events   # the launch's event (ev.stats: cycles, bytes per link, ...)
    res.wall_s   # host wall time of the launch (build and copies excluded)

One launch runs every step.  task.cl says how the populations are laid out on the machine and
why; ``pack`` / ``unpack`` convert between that layout and (9, n, n), and ``flags`` marks the
wall cells.  The form runs the periodic Taylor-Green vortex and the lid-driven cavity; the
grid must fill whole vectors of the machine (``sizes(machine)`` lists the n it takes).
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

import mncl as cl
from emulator.machine import load_machine

from .plain import Result
from .reference import Params   # noqa: F401 - run()'s parameters, here for its callers

SOURCE_PATH = Path(__file__).resolve().parent / "task.cl"
Q = 9
WD = np.float32(1.0) / np.float32(36.0)


def shape(machine, n: int) -> dict | None:
    """task.cl's figures for an n x n grid on `machine` (None: the grid does not fit its scheme):
    S slot rows per group, R rows per L2B per iteration, QQ iterations per step."""
    m = load_machine(machine) if isinstance(machine, str) else machine
    groups, l2b, l1b = m.groups, m.l2b_per_group, m.l1b_per_l2b
    vec, unit = 4 * m.mab_per_l1b * m.pe_per_mab, 32 * l1b
    if n % (2 * groups) or n % unit or n % l1b:
        return None
    s, share = n // 2 // groups, n // l1b
    if vec % share or vec // share not in (1, 2, 4):
        return None
    r = vec // share
    l2bm = 9 * r * (n + unit) + unit + 3 * r * n + r * n      # task.cl's in, ob and fls
    if s % (l2b * r) or l2bm > m.l2bm_longs:
        return None
    return {"S": s, "R": r, "QQ": s // (l2b * r), "groups": groups}


def fits_resident(machine, n: int) -> bool:
    """Whether lbm_resident keeps an n x n grid in LM: two copies of 9 populations, QR vectors
    each, in one LM of the two each (task.cl's fa and fb)."""
    m = load_machine(machine) if isinstance(machine, str) else machine
    s = shape(m, n)
    return s is not None and 9 * s["S"] // (m.l2b_per_group * s["R"]) * 8 <= m.lm_words


def sizes(machine, upto: int = 8192) -> list:
    """The grid sizes n the task form runs on `machine`."""
    return [n for n in range(2, upto + 1, 2) if shape(machine, n)]


def pack(f: np.ndarray, groups: int) -> np.ndarray:
    """(9, n, n) [k, y, x] -> task.cl's f: per group [2 halves][9][S + 2][n long words x 2 lanes],
    the band's rows in half 0 (the halo rows and half 1 are the kernel's to fill)."""
    q, n, _ = f.shape
    s = n // 2 // groups
    lanes = f.reshape(q, 2, n // 2, n).transpose(0, 2, 3, 1)          # [k, slot, x, lane]
    out = np.zeros((groups, 2, q, s + 2, n, 2), np.float32)
    out[:, 0, :, 1:s + 1] = lanes.reshape(q, groups, s, n, 2).transpose(1, 0, 2, 3, 4)
    return out


def unpack(dev: np.ndarray, half: int) -> np.ndarray:
    """pack's inverse, from the given half."""
    groups, _, q, s2, n, _ = dev.shape
    lanes = dev[:, half, :, 1:s2 - 1].transpose(1, 0, 2, 3, 4).reshape(q, groups * (s2 - 2), n, 2)
    return np.ascontiguousarray(lanes.transpose(0, 3, 1, 2).reshape(q, n, n))


def flags(case: str, n: int, groups: int) -> np.ndarray:
    """The wall cells, packed as one population of one half: 1 x = 0, 2 x = n-1, 4 y = 0,
    8 y = n-1 (the cavity); nothing for the periodic Taylor-Green vortex."""
    fl = np.zeros((n, n), np.int32)
    if case == "cavity":
        fl[:, 0] |= 1
        fl[:, -1] |= 2
        fl[0, :] |= 4
        fl[-1, :] |= 8
    lanes = fl.reshape(2, n // 2, n).transpose(1, 2, 0)
    return np.ascontiguousarray(lanes.reshape(groups, n // 2 // groups, n, 2))


class TaskLBM:
    """The built program and its buffers for one (machine, case, n)."""

    def __init__(self, params, machine="mncore2", resident=False):
        if params.case not in ("taylor-green", "cavity"):
            raise ValueError(f"the task form runs the taylor-green and cavity cases, not {params.case!r}")
        n = int(params.n)
        self.machine = load_machine(machine)
        self.shape = shape(self.machine, n)
        if self.shape is None:
            raise ValueError(f"the task form on {self.machine.name} takes n in {sizes(self.machine)[:8]}, not {n}")
        self.params, self.n, self.groups = params, n, self.machine.groups
        omega = np.float32(1.0 / (3.0 * float(params.nu) + 0.5))
        lid = np.float32(np.float32(6.0) * WD) * np.float32(getattr(params, "u_lid", 0.0))
        walls = int(params.case == "cavity")
        self.options = [f"-DN={n}", f"-DWALLS={walls}", f"-DOMEGA={float(omega)!r}f", f"-DLID={float(lid)!r}f"]
        self.device = cl.get_device("emulator", self.machine.name)
        self.ctx = cl.Context([self.device])
        self.queue = cl.CommandQueue(self.ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
        if resident and not fits_resident(self.machine, n):
            raise ValueError(f"the resident mode needs the grid in LM: on {self.machine.name} n in "
                             f"{[k for k in sizes(self.machine) if fits_resident(self.machine, k)]}, not {n}")
        self.resident = resident
        self.options.append(f"-DRESIDENT={int(resident)}")
        prg = cl.Program(self.ctx, SOURCE_PATH.read_text()).build(options=self.options)
        self.kernel = prg.lbm_resident if resident else prg.lbm
        mf = cl.mem_flags
        self.host = pack(np.zeros((Q, n, n), np.float32), self.groups)
        self.buf = cl.Buffer(self.ctx, mf.READ_WRITE, self.host.nbytes)
        self.flags = cl.Buffer(self.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR,
                               hostbuf=flags(params.case, n, self.groups))

    def run(self, f0: np.ndarray, steps: int) -> Result:
        if steps < 0:
            raise ValueError(f"steps must be >= 0, got {steps}")
        f0 = np.asarray(f0, np.float32)
        if f0.shape != (Q, self.n, self.n):
            raise ValueError(f"f0 must be (9, {self.n}, {self.n}), got {f0.shape}")
        cl.enqueue_copy(self.queue, self.buf, pack(f0, self.groups))
        self.kernel.set_args(self.buf, self.flags, np.int32(steps))
        t0 = time.perf_counter()
        ev = cl.enqueue_task(self.queue, self.kernel)
        ev.wait()
        wall = time.perf_counter() - t0
        cl.enqueue_copy(self.queue, self.host, self.buf)
        self.queue.finish()
        return Result(unpack(self.host, steps % 2), [ev], wall)


def run(params, f0, steps: int, machine="mncore2", resident=False) -> Result:
    """Run `steps` steps of the task form from populations f0 ((9, n, n) float32) in one launch
    (resident: the grid kept in the PEs' local memories, lbm_resident)."""
    return TaskLBM(params, machine, resident).run(f0, steps)
