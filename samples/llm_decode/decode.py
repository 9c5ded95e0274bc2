"""The decode matmul y = W x as an MNCL task kernel (matvec_task.cl), and the host side of it.

``TaskMatvec(ctx, queue, rows, cols, batch, dtype)`` builds the kernel for one shape
(-D ROWS/COLS/BATCH/HALF), ``upload(W)`` packs the weights once into the order the
kernel streams them (``pack``: done once per model, like any inference engine's weight
prepacking), and calling it with x runs one launch: y (batch, rows) in fp32.

The order (matvec_task.cl explains why): every L1B of the board owns COLS / #L1B
columns, in runs of 8 long words interleaved the way l2bmd deals them out; each PE of
an L1B owns 4 x LANES rows per row group, one column per step; group g's stream is
its chunks one after another, each chunk its two L2Bs' halves (mvd), each half the
l2bmd order of its L1Bs' steps.
"""
from __future__ import annotations

import os

import numpy as np

from emulator.numbers import f32_to_mnhalf, mnhalf_to_f32

import mncl as cl

KERNEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "matvec_task.cl")
T = 4                      # W steps per chunk (matvec_task.cl)


class Geometry:
    """The machine's tree and one shape, as the kernel splits them."""

    def __init__(self, machine, rows, cols, half):
        m = machine
        self.G, self.L, self.N = m.groups, m.l2b_per_group, m.l1b_per_l2b
        self.PES = m.mab_per_l1b * m.pe_per_mab
        self.lanes = 4 if half else 2
        self.rows, self.cols = rows, cols
        self.kp = cols // (self.G * self.L * self.N)
        rows_step = 4 * self.lanes
        self.rho = rows // (self.PES * rows_step)
        problems = []
        if self.PES % 8:
            problems.append(f"{self.PES} PEs per L1B (a multiple of 8 is needed)")
        if cols % (self.G * self.L * self.N * 8 * self.lanes) or not self.kp:
            problems.append(f"cols={cols} must be a multiple of {self.G * self.L * self.N * 8 * self.lanes} "
                            f"(#L1B x 8 long words)")
        if rows % (self.PES * rows_step) or not self.rho:
            problems.append(f"rows={rows} must be a multiple of {self.PES * rows_step} (PEs per L1B x rows per step)")
        if problems:
            raise ValueError(f"shape {rows} x {cols} does not fit the kernel on '{m.name}': " + "; ".join(problems))
        self.nchunk = self.rho * self.kp // T


def pack(W_lanes: np.ndarray, geo: Geometry) -> np.ndarray:
    """W as lane values (uint16 half bits or uint32 float bits), shape (rows, cols) -> the packed
    stream of long words (uint64), group 0's part first."""
    g = geo
    H = 2 if g.lanes == 4 else 1
    qa = g.kp // (8 * g.lanes)
    # rows: j, H, c, ia, jb, e  (row = j*block + 2*(4*PES*H + PES*c + 8*ia + jb) + (1 - e))
    # cols: g, l, qa, i, qb, h  (col = ... + lane h holds element LANES-1-h of its long word)
    w = W_lanes.reshape(g.rho, H, 4, g.PES // 8, 8, 2, g.G, g.L, qa, g.N, 8, g.lanes)
    w = w[:, :, :, :, :, ::-1, :, :, :, :, :, ::-1]
    # -> g, [j, qa, qb, h] (the steps), l, c, ia, i, jb, [H, e] (the lanes, most significant first)
    w = w.transpose(6, 0, 8, 10, 11, 7, 2, 3, 9, 4, 1, 5)
    w = w.reshape(g.G, g.nchunk, T, g.L, 4, g.PES // 8, g.N, 8, g.lanes).swapaxes(2, 3)
    out = np.ascontiguousarray(w[..., ::-1])           # lane 0 is the most significant: last in memory
    return out.reshape(-1).view(np.uint64)


class TaskMatvec:
    """y = W x on the emulator device with the MNCL task kernel; dtype 'half' (MN-Core half
    weights and activations) or 'fp32'; fp32 accumulation either way."""

    def __init__(self, ctx, queue, rows, cols, batch, dtype):
        if dtype not in ("half", "fp32"):
            raise ValueError(f"dtype must be 'half' or 'fp32', not {dtype!r}")
        self.ctx, self.queue, self.batch, self.half = ctx, queue, batch, dtype == "half"
        machine = ctx.devices[0].backend.machine
        self.geo = Geometry(machine, rows, cols, self.half)
        opts = [f"-DROWS={rows}", f"-DCOLS={cols}", f"-DBATCH={batch}", f"-DHALF={int(self.half)}"]
        with open(KERNEL) as f:
            self.program = cl.Program(ctx, f.read()).build(options=opts)
        self.kernel = self.program.matvec
        self.w = None
        self.y = np.zeros((batch, rows), np.float32)
        self.y_buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, size=self.y.nbytes)

    def lanes(self, a):
        a = np.ascontiguousarray(a, np.float32)
        return f32_to_mnhalf(a).astype(np.uint16) if self.half else a.view(np.uint32)

    def device_weights(self, W):
        """W as the device multiplies it (rounded to MN-Core half for dtype 'half')."""
        return mnhalf_to_f32(f32_to_mnhalf(np.asarray(W, np.float32))) if self.half else np.asarray(W, np.float32)

    def upload(self, W):
        packed = pack(self.lanes(W), self.geo)
        mf = cl.mem_flags
        self.w = cl.Buffer(self.ctx, mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=packed)
        self._packed = packed               # the buffer's host mirror

    def __call__(self, x):
        x = np.asarray(x, np.float32).reshape(self.batch, self.geo.cols)
        xl = self.lanes(x)
        mf = cl.mem_flags
        x_buf = cl.Buffer(self.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=xl)
        self.kernel.set_args(self.w, x_buf, self.y_buf)
        ev = cl.enqueue_task(self.queue, self.kernel)
        cl.enqueue_copy(self.queue, self.y, self.y_buf)
        return self.y.copy(), ev
