"""The fused task-kernel form of the Harris corner detector (fused.cl), on the emulator device.

    res = run(frames, machine="mncore2")     # frames: (F, H, W) float32, W = frame_width(machine)
    res.R, res.mask                          # (F, H, W): the response and the peak mask per frame
                                             # (the kernel writes the mask as a bitmap: 32 rows a word)
    res.corners                              # a list of (n, 2) [row, col] per frame
    res.events, res.wall_s

One launch runs every frame: each L1B of the machine takes one (64 frames on mncore2, 4 on
tiny; fewer frames leave L1Bs idle, more take several launches).  fused.cl says how a frame is
laid out and streamed; ``pack`` / ``unpack`` convert between that layout and (F, H, W).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import mncl as cl
from emulator.machine import load_machine

from . import reference as ref
from .plain import gaussian_weights

SOURCE_PATH = Path(__file__).resolve().parent / "fused.cl"


@dataclass
class Result:
    R: np.ndarray
    mask: np.ndarray
    corners: list
    events: list = field(default_factory=list)
    wall_s: float = 0.0


def geometry(m) -> tuple:
    """(frames per launch, frame width, L1Bs per L2B, L2Bs per group, groups) of machine m."""
    vec = 4 * m.mab_per_l1b * m.pe_per_mab
    return m.groups * m.l2b_per_group * m.l1b_per_l2b, 2 * vec, m.l1b_per_l2b, m.l2b_per_group, m.groups


def frame_width(machine) -> int:
    return geometry(load_machine(machine) if isinstance(machine, str) else machine)[1]


def pack(frames: np.ndarray, m) -> np.ndarray:
    """(F, H, W) -> fused.cl's layout: per group, per row, per L2B, the l2bmd deal of its frames'
    rows (long word x of a frame: pixels x and x + W/2)."""
    nf, w, nl1, nl2, ng = geometry(m)
    F, H, W = frames.shape
    vec = w // 2
    lw = np.stack([frames[:, :, :vec], frames[:, :, vec:]], axis=-1)            # (F, H, vec, 2)
    lw = lw.reshape(ng, nl2, nl1, H, vec // 8, 8, 2)                             # frame f = (g, l, i)
    return np.ascontiguousarray(lw.transpose(0, 3, 1, 4, 2, 5, 6))               # (g, H, l, c, i, j, lane)


def unpack(dev: np.ndarray, m, H: int) -> np.ndarray:
    nf, w, nl1, nl2, ng = geometry(m)
    vec = w // 2
    lw = dev.reshape(ng, H, nl2, vec // 8, nl1, 8, 2).transpose(0, 2, 4, 1, 3, 5, 6).reshape(nf, H, vec, 2)
    return np.concatenate([lw[..., 0], lw[..., 1]], axis=-1)


class FusedHarris:
    """The fused kernel built for one machine and frame height."""

    def __init__(self, height: int, machine="mncore2"):
        self.m = load_machine(machine) if isinstance(machine, str) else machine
        self.nf, self.width = geometry(self.m)[:2]
        if not 2 * ref.MIN_DISTANCE + 1 <= height <= 512:
            raise ValueError(f"the fused form takes frames {2 * ref.MIN_DISTANCE + 1} to 512 rows high, not {height}")
        self.H = height
        w = gaussian_weights()
        opts = [f"-DH={height}"] + [f"-DW{i}={float(v)!r}f" for i, v in enumerate(w)]
        self.device = cl.get_device("emulator", self.m.name)
        self.ctx = cl.Context([self.device])
        self.queue = cl.CommandQueue(self.ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
        self.kernel = cl.Program(self.ctx, SOURCE_PATH.read_text()).build(options=opts).harris
        geo = np.zeros((2, self.nf, 1, self.width), np.int32)
        geo[0, :, :, :self.width // 2] = 1                       # a long word's first pixel
        x = np.arange(self.width)
        geo[1, :, :, :] = (x >= ref.MIN_DISTANCE) & (x < self.width - ref.MIN_DISTANCE)
        g = np.concatenate([pack(geo[r], self.m)[0].reshape(-1) for r in (0, 1)])      # the same in every group
        self.geo = cl.Buffer(self.ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=g)

    def run(self, frames: np.ndarray) -> Result:
        frames = np.asarray(frames, np.float32)
        if frames.ndim == 2:
            frames = frames[None]
        F, H, W = frames.shape
        if H != self.H or W != self.width:
            raise ValueError(f"frames must be {self.H} x {self.width} on {self.m.name}, got {H} x {W}")
        if F > self.nf:
            raise ValueError(f"at most {self.nf} frames a launch on {self.m.name}, got {F}")
        full = np.zeros((self.nf, H, W), np.float32)
        full[:F] = frames
        mf = cl.mem_flags
        img = cl.Buffer(self.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=pack(full, self.m))
        packed = -(-H // 32)                     # the mask: a bitmap, 32 rows in a word
        rb = cl.Buffer(self.ctx, mf.READ_WRITE, full.nbytes)
        mb = cl.Buffer(self.ctx, mf.READ_WRITE, full.nbytes // H * packed)
        self.kernel.set_args(img, self.geo, rb, mb)
        t0 = time.perf_counter()
        ev = cl.enqueue_task(self.queue, self.kernel)
        ev.wait()
        wall = time.perf_counter() - t0
        r_host = np.empty(pack(full, self.m).shape, np.float32)
        m_host = np.empty(pack(full[:, :packed], self.m).shape, np.uint32)
        cl.enqueue_copy(self.queue, r_host, rb)
        cl.enqueue_copy(self.queue, m_host, mb)
        self.queue.finish()
        R = unpack(r_host, self.m, H)[:F]
        words = unpack(m_host, self.m, packed)[:F]                                # (F, packed, W)
        bits = (words[:, :, None, :] >> np.arange(32, dtype=np.uint32)[None, None, :, None]) & 1
        mask = bits.reshape(F, 32 * packed, W)[:, :H] != 0
        return Result(R, mask, [ref.corners_from_mask(R[f], mask[f]) for f in range(F)], [ev], wall)


def run(frames, machine="mncore2") -> Result:
    frames = np.asarray(frames, np.float32)
    return FusedHarris(frames.shape[-2], machine).run(frames)
