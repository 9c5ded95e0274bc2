"""The plain OpenCL C form of the Harris corner detector (plain.cl), on any MNCL device.

    res = run(image, device="emulator", machine="tiny")
    res.R        # (H, W) float32: the Harris response
    res.mask     # (H, W) bool: the peaks the device found
    res.corners  # (n, 2) [row, col], listed as skimage.feature.corner_peaks lists them
    res.events   # the launches' mncl events (ev.stats on the emulator device)
    res.wall_s   # host wall time of the launches (build and copies excluded)

Eight launches per image (plain.cl says what each does); the intermediate images stay in
device buffers, and only R and the peak mask are read back.  The corner list is the mask's
pixels in skimage's order, ties within min_distance resolved as corner_peaks does
(reference.corners_from_mask).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import mncl as cl

from . import reference as ref

SOURCE_PATH = Path(__file__).resolve().parent / "plain.cl"
REDUCE_LOCAL = 64             # the work-group of the min / max tree


@dataclass
class Result:
    R: np.ndarray
    mask: np.ndarray
    corners: np.ndarray
    events: list = field(default_factory=list)
    wall_s: float = 0.0


def gaussian_weights(sigma: float = ref.SIGMA, truncate: float = 4.0) -> np.ndarray:
    """scipy.ndimage.gaussian_filter's 1-D weights, centre out (computed in double as scipy does)."""
    radius = int(truncate * sigma + 0.5)
    x = np.arange(-radius, radius + 1)
    phi = np.exp(-0.5 / sigma ** 2 * x.astype(np.float64) ** 2)
    phi /= phi.sum()
    return phi[radius:].astype(np.float32)


def _device(device, machine):
    if isinstance(device, cl.Device):
        return device
    if device == "cpu":
        return cl.get_device("cpu")
    if device == "emulator":
        return cl.get_device("emulator", machine or "mncore2")
    raise ValueError(f"device must be 'cpu', 'emulator' or an mncl.Device, got {device!r}")


class PlainHarris:
    """The built program for one device; run(image) any number of times."""

    def __init__(self, device="emulator", machine=None):
        w = gaussian_weights()
        if len(w) != 5:
            raise ValueError("plain.cl is written for sigma = 1 (9 taps)")
        self.device = _device(device, machine)
        self.ctx = cl.Context([self.device])
        self.queue = cl.CommandQueue(self.ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
        opts = [f"-DW{i}={float(v)!r}f" for i, v in enumerate(w)]
        self.prg = cl.Program(self.ctx, SOURCE_PATH.read_text()).build(options=opts)

    def run(self, image: np.ndarray) -> Result:
        image = np.ascontiguousarray(image, np.float32)
        if image.ndim != 2 or min(image.shape) < 2 * ref.MIN_DISTANCE + 1:
            raise ValueError(f"image must be 2-D and at least {2 * ref.MIN_DISTANCE + 1} pixels a side, "
                             f"got shape {image.shape}")
        H, W = image.shape
        n = H * W
        ctx, q, p = self.ctx, self.queue, self.prg
        mf = cl.mem_flags
        img = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=image)
        a, b, c, d, e, g, R, My = (cl.Buffer(ctx, mf.READ_WRITE, 4 * n) for _ in range(8))
        part = cl.Buffer(ctx, mf.READ_WRITE, 8 * H)
        mm = cl.Buffer(ctx, mf.READ_WRITE, 8)
        mask = cl.Buffer(ctx, mf.READ_WRITE, 4 * n)
        i32 = np.int32
        shape = (W, H)
        t0 = time.perf_counter()
        evs = [p.sobel(q, shape, None, img, a, b, c, i32(W), i32(H)),
               p.gauss_y(q, shape, None, a, b, c, d, e, g, i32(W), i32(H)),
               p.gauss_x(q, shape, None, d, e, g, a, b, c, i32(W), i32(H)),
               p.harris(q, shape, None, a, b, c, R, i32(W), i32(H)),
               p.minmax(q, (H,), None, R, part, i32(W)),
               p.minmax_final(q, (REDUCE_LOCAL,), (REDUCE_LOCAL,), part, mm, i32(H),
                              cl.LocalMemory(4 * REDUCE_LOCAL), cl.LocalMemory(4 * REDUCE_LOCAL)),
               p.max_y(q, shape, None, R, My, i32(W), i32(H)),
               p.peaks(q, shape, None, R, My, mm, mask, i32(W), i32(H))]
        q.finish()
        wall = time.perf_counter() - t0
        r_host = np.empty((H, W), np.float32)
        m_host = np.empty((H, W), np.int32)
        cl.enqueue_copy(q, r_host, R)
        cl.enqueue_copy(q, m_host, mask)
        q.finish()
        m_host = m_host != 0
        return Result(r_host, m_host, ref.corners_from_mask(r_host, m_host), evs, wall)


def run(image, device="emulator", machine=None) -> Result:
    """Harris corners of `image` ((H, W) float32) with the plain form on `device`."""
    return PlainHarris(device, machine).run(image)
