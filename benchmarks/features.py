"""Harris corners (samples/features) on the emulated machine, next to scikit-image on this host.

    python benchmarks/features.py                        # mncore2, 64 frames of camera (16 megapixels)
    python benchmarks/features.py --frames 64 --measure 1 --machine tiny --crop 64

The workload is issue 25's 16 megapixels: 64 frames of a 512 x 512 image.  Per form, in one run:
emulated time for the workload, megapixels/s, the % of the tighter of the two rooflines (DRAM:
peak bandwidth / 8.125 B per pixel, the image read once, R written and the peak mask as a bit;
fp32 vector: peak rate / 129 flops per pixel, samples/features/run.py's counts), DRAM bytes per
pixel and the emulator's wall time per frame; and scikit-image's wall time for the same
workload (corner_harris + corner_peaks per frame) on this machine.

The fused task kernel runs the whole workload (a frame per L1B: one launch of 64 frames on
mncore2).  The plain form's frames are each the same eight launches on the same image, so their
emulated cycles are equal: it runs --measure frames (default 2) and its figures are those
frames' scaled to --frames.  Every result is checked against scikit-image.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from samples.features import checks, fused, plain, reference as ref  # noqa: E402
from samples.features.run import tighter_roofline                 # noqa: E402


def skimage_wall(image, frames: int) -> float:
    ref.corners(ref.response(image))                   # imports and first-call set-up, not timed
    t0 = time.perf_counter()
    for _ in range(frames):
        ref.corners(ref.response(image))
    return time.perf_counter() - t0


def agrees(R, corners, R_ref, want) -> bool:
    """R and the corners pass samples/features/checks.py against scikit-image's."""
    return all(c.passed for c in checks.response(R, R_ref)) and checks.corners(corners, want, R_ref)[0].passed


def figures(summary, cycles, dram, wall, pixels_run, frames_run, frames) -> dict:
    """A form's figures for the workload of `frames` frames from what it ran (cycles, DRAM bytes and
    wall time over frames_run frames of pixels_run pixels in all; summary: one launch's profile)."""
    clock = summary["cycles"] / summary["time_s"]
    t = cycles / clock
    mps = pixels_run / t / 1e6
    tight = tighter_roofline(summary["roofline"])[0]
    return {"time_s": t * frames / frames_run, "mps": mps, "roof_pct": 100 * mps * 1e6 / tight,
            "dram_px": dram / pixels_run, "wall_frame": wall / frames_run, "tight_mps": tight / 1e6}


def measure_plain(image, measure: int, frames: int, machine: str) -> dict:
    solver = plain.PlainHarris("emulator", machine)
    R_ref = ref.response(image)
    want = ref.corners(R_ref)
    cycles = wall = dram = 0.0
    for _ in range(measure):
        res = solver.run(image)
        if not agrees(res.R, res.corners, R_ref, want):
            raise RuntimeError("the plain form's corners differ from scikit-image's")
        summ = [ev.stats.summary() for ev in res.events]
        cycles += sum(s["cycles"] for s in summ)
        dram += sum(s["dram_bytes"] for s in summ)
        wall += res.wall_s
    return figures(summ[0], cycles, dram, wall, image.size * measure, measure, frames)


def measure_fused(image, frames: int, machine: str) -> dict:
    solver = fused.FusedHarris(image.shape[0], machine)
    R_ref = ref.response(image)
    want = ref.corners(R_ref)
    cycles = wall = dram = 0.0
    done = 0
    while done < frames:
        n = min(solver.nf, frames - done)
        res = solver.run(np.broadcast_to(image, (n,) + image.shape))
        for f in range(n):
            if not agrees(res.R[f], res.corners[f], R_ref, want):
                raise RuntimeError(f"the fused form's frame {done + f} differs from scikit-image's")
        s = res.events[0].stats.summary()
        cycles += s["cycles"]
        dram += s["dram_bytes"]
        wall += res.wall_s
        done += n
    return figures(s, cycles, dram, wall, image.size * frames, frames, frames)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--machine", default="mncore2")
    ap.add_argument("--image", default="camera", choices=ref.BUILTINS)
    ap.add_argument("--crop", type=int, help="the top-left N x N of the image (quick looks)")
    ap.add_argument("--frames", type=int, default=64, help="frames in the workload (default 64)")
    ap.add_argument("--measure", type=int, default=2, help="frames each emulated form runs (default 2)")
    a = ap.parse_args(argv)
    image = ref.builtin(a.image)
    if a.crop:
        image = np.ascontiguousarray(image[:a.crop, :a.crop])
    mp = image.size * a.frames / 1e6
    print(f"Harris corners, {a.frames} frames of {a.image} {image.shape[1]} x {image.shape[0]} = {mp:.1f} megapixels, "
          f"on {a.machine}")
    sk = skimage_wall(image, a.frames)
    p = measure_plain(image, a.measure, a.frames, a.machine)
    head = f"{'form':<34} {'time for the workload':>22} {'megapixels/s':>13} {'roofline':>9} {'DRAM B/px':>9} {'wall s/frame':>12}"
    print(head)
    print("-" * len(head))
    print(f"{'scikit-image on this host':<34} {sk:>20.3f} s {mp / sk:>13.1f} {'':>9} {'':>9} {sk / a.frames:>12.3f}")
    print(f"{'plain (8 launches/frame, emulated)':<34} {p['time_s'] * 1e3:>19.3f} ms {p['mps']:>13.1f} "
          f"{p['roof_pct']:>8.2f}% {p['dram_px']:>9.1f} {p['wall_frame']:>12.2f}")
    w, nf = fused.frame_width(a.machine), fused.geometry(fused.load_machine(a.machine))[0]
    if image.shape[1] == w and image.shape[0] <= 512:
        f = measure_fused(image, a.frames, a.machine)
        print(f"{f'fused task kernel ({nf} frames/launch)':<34} {f['time_s'] * 1e3:>19.3f} ms {f['mps']:>13.1f} "
              f"{f['roof_pct']:>8.2f}% {f['dram_px']:>9.2f} {f['wall_frame']:>12.2f}")
        print(f"(fused / plain: {f['mps'] / p['mps']:.1f}x the megapixels/s; fused emulated / scikit-image on "
              f"this host: {sk / f['time_s']:.0f}x faster)")
    else:
        print(f"{'fused task kernel':<34} {f'frames {w} wide only':>22}")
    print(f"(the tighter roofline: {p['tight_mps']:,.0f} megapixels/s; emulated figures from {a.measure} measured "
          f"frame(s), scaled to {a.frames})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
