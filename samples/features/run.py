"""Harris corners on a device, point for point against scikit-image, with pictures.

    python samples/features/run.py --builtin camera --device cpu           # the plain form on the CPU device
    python samples/features/run.py --builtin coins --crop 64 --machine tiny
    python samples/features/run.py photo.png --machine mncore2 --png out/
    python samples/features/run.py --builtin camera --frames 4 --machine mncore2
    python samples/features/run.py --builtin camera --form task --frames 64 --machine mncore2
    python samples/features/run.py --builtin coins --crop 128 --form task --machine tiny

The pipeline (reference.py has it stage by stage): Sobel -> structure-tensor products ->
Gaussian, sigma 1 -> R = det - 0.05 trace^2 -> max and min of R by a tree reduction on the
device -> non-maximum suppression in an 11 x 11 window above 0.02 max R -> the corners, as
skimage.feature.corner_peaks(corner_harris(image), min_distance=5, threshold_rel=0.02) finds
them.  Forms: 'plain' (samples/features/plain.py: one OpenCL C kernel per stage, on the 'cpu'
or 'emulator' device) and 'task' (samples/features/fused.py: one fused task kernel for a frame
per L1B, on the emulator; frames 512 wide on mncore2, 128 on tiny).

Checks (checks.py): R within 1e-5 max |R_ref| everywhere and 1e-6 in relative L2; the corner set
equal to corner_peaks', a difference allowed only where two candidates' responses tie within
1e-5 max |R_ref| (each printed).  Exit status 1 when a check fails, 2 on a usage error.
"""
from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))                      # samples.features, mncl, emulator from the checkout

from samples.features import checks as C              # noqa: E402
from samples.features import plain                    # noqa: E402
from samples.features import reference as ref         # noqa: E402

# the compulsory DRAM traffic of the pipeline: the image read and R written (fp32), the peak mask
# written as a bit (the fused form's bitmap; the plain form writes an int32 per pixel)
BYTES_PER_PIXEL = 8.125
# its arithmetic per pixel: Sobel 12, products 3, Gaussian 2 x 3 x 9 multiply-adds (108), Harris 6
FLOPS_PER_PIXEL = 129


def tighter_roofline(roof: dict) -> tuple:
    """(pixels/s, its name, the DRAM roofline, the fp32-vector one) from a profile summary's
    "roofline": the tighter of the two bounds for this pipeline."""
    dram_px = roof["dram_bytes_per_s"] / BYTES_PER_PIXEL
    flop_px = roof["peak_flop_rate_f32_vector"] / FLOPS_PER_PIXEL
    tight, which = min((dram_px, "DRAM"), (flop_px, "fp32 vector"))
    return tight, which, dram_px, flop_px


def parse(argv):
    ap = argparse.ArgumentParser(prog="samples/features/run.py", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("image", nargs="?", help="an image file (grey or colour; default: --builtin camera)")
    ap.add_argument("--builtin", choices=ref.BUILTINS, help="one of scikit-image's test images")
    ap.add_argument("--crop", type=int, help="the top-left N x N (or a smaller image's whole)")
    ap.add_argument("--at", type=int, nargs=2, default=(0, 0), metavar=("ROW", "COL"), help="the crop's corner")
    ap.add_argument("--form", choices=("plain", "task"), default="plain")
    ap.add_argument("--device", choices=("cpu", "emulator"), default="emulator")
    ap.add_argument("--machine", default=None, help="emulator machine: tiny, mncore2 or a TOML file "
                    "(default: the device's, $MNCL_MACHINE else mncore2)")
    ap.add_argument("--frames", type=int, default=1, help="run the image this many times (a stream of frames)")
    ap.add_argument("--png", metavar="DIR", help="write the pictures to DIR")
    ap.add_argument("--no-progress", dest="progress", action="store_false")
    a = ap.parse_args(argv)
    if a.image and a.builtin:
        ap.error("give an image file or --builtin, not both")
    if a.frames < 1:
        ap.error("--frames must be at least 1")
    return a


def load(a) -> tuple:
    name = a.builtin or ("camera" if not a.image else Path(a.image).stem)
    image = ref.builtin(a.builtin or "camera") if not a.image else ref.load(a.image)
    if a.crop:
        r, c = a.at
        image = np.ascontiguousarray(image[r:r + a.crop, c:c + a.crop])
    return name, image


def table(res_events, frames, pixels, wall_s) -> list:
    rows = []
    stats = [ev.stats for ev in res_events if getattr(ev, "stats", None) is not None]
    if not stats:
        rows.append(("host wall time", f"{wall_s:.3f} s ({pixels * frames / wall_s / 1e6:.2f} megapixels/s)"))
        return rows
    sums = [s.summary() for s in stats]
    t = sum(s["time_s"] for s in sums)
    roof = sums[0]["roofline"]
    tight, which, dram_px, flop_px = tighter_roofline(roof)
    mps = pixels * frames / t / 1e6
    links = defaultdict(float)
    for s in sums:
        for k, v in s["bytes_by_link"].items():
            links[k.split(".")[0]] += v
    rows += [("emulated time", f"{t * 1e6:,.1f} us ({t * 1e6 / frames:,.1f} us per frame)"),
             ("megapixels/s (emulated)", f"{mps:,.1f}"),
             ("% of the tighter roofline", f"{100 * mps * 1e6 / tight:.2f}%  ({which}: {tight / 1e6:,.0f} "
                                           f"megapixels/s; DRAM {dram_px / 1e6:,.0f}, fp32 vector {flop_px / 1e6:,.0f})")]
    for k in sorted(links):
        rows.append((f"bytes moved: {k}", f"{links[k] / 1e6:,.3f} MB ({links[k] / (pixels * frames):.1f} B/pixel)"))
    rows.append(("emulator wall time", f"{wall_s:.2f} s ({wall_s / frames:.2f} s per frame)"))
    return rows


def main(argv=None) -> int:
    a = parse(argv)
    try:
        name, image = load(a)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if min(image.shape) < 2 * ref.MIN_DISTANCE + 1:
        print(f"error: the image is {image.shape[0]} x {image.shape[1]}; the pipeline needs at least "
              f"{2 * ref.MIN_DISTANCE + 1} pixels a side", file=sys.stderr)
        return 2
    import mncl as cl
    if a.form == "task":
        if a.device != "emulator":
            print("error: --form task runs on the emulator device (task kernels are the machine's)", file=sys.stderr)
            return 2
        from samples.features import fused
        machine = a.machine or "mncore2"
        width = fused.frame_width(machine)
        if image.shape[1] != width or image.shape[0] > 512:
            print(f"error: --form task on {machine} takes frames {width} pixels wide and at most 512 high "
                  f"(one row a vector of an L1B); this image is {image.shape[1]} x {image.shape[0]}: "
                  f"try --crop {width}", file=sys.stderr)
            return 2
    where = a.device if a.device == "cpu" else f"emulator ({a.machine or 'default machine'})"
    print(f"{name}: {image.shape[1]} x {image.shape[0]} pixels, {a.frames} frame(s); {a.form} form on {where}",
          flush=True)
    try:
        events, wall, res, differ = [], 0.0, None, 0
        bar = _progress(a.frames, a.progress and a.frames > 1)
        if a.form == "task":
            solver = fused.FusedHarris(image.shape[0], machine)
            done = 0
            if a.frames % solver.nf:
                print(f"(a launch takes {solver.nf} frames, one per L1B: {solver.nf - a.frames % solver.nf} L1Bs "
                      f"idle in the last; the figures are per frame run)")
            while done < a.frames:                   # one launch takes a frame per L1B
                n = min(solver.nf, a.frames - done)
                out = solver.run(np.broadcast_to(image, (n,) + image.shape))
                res = plain.Result(out.R[0], out.mask[0], out.corners[0])
                differ += sum(not (np.array_equal(out.R[f], res.R) and np.array_equal(out.mask[f], res.mask))
                              for f in range(1, n))
                events += out.events
                wall += out.wall_s
                done += n
                bar(done)
        else:
            solver = plain.PlainHarris(a.device, a.machine if a.device == "emulator" else None)
            for i in range(a.frames):
                res = solver.run(image)
                events += res.events
                wall += res.wall_s
                bar(i + 1)
        bar(None)
    except cl.Error as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    R_ref = ref.response(image)
    want = ref.corners(R_ref)
    print(f"\n{len(res.corners)} corners (row, col): " + ", ".join(f"({r}, {c})" for r, c in res.corners[:12])
          + (" ..." if len(res.corners) > 12 else ""))
    print()
    rows = table(events, a.frames, image.size, wall)
    w = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"  {k.ljust(w)}  {v}")
    results = C.response(res.R, R_ref)
    corner_check, lines = C.corners(res.corners, want, R_ref)
    results.append(corner_check)
    if a.form == "task" and a.frames > 1:       # every frame is the same image: the same R and mask
        results.append(C.Check("frames whose R or mask differ from the first's", float(differ), 0.0, differ == 0))
    print("\nchecks")
    for c in results:
        print("  " + c.line)
    for line in lines:
        print("    " + line)
    if a.png:
        from samples.features import plots
        d = Path(a.png)
        extra, missing = C.corner_difference(res.corners, want)
        for p in (plots.corners(image, res.corners, d / f"{name}-corners.png", f"{name}: {len(res.corners)} corners"),
                  plots.response(res.R, d / f"{name}-response.png", f"{name}: Harris response"),
                  plots.difference(image, extra, missing, d / f"{name}-difference.png")):
            print(f"wrote {p}")
    failed = [c for c in results if not c.passed]
    if failed:
        print(f"\n{len(failed)} check(s) failed")
        return 1
    return 0


def _progress(total: int, on: bool):
    """A rich progress bar over the frames (nothing when off); call with done, then None."""
    if not on:
        return lambda done: None
    from rich.progress import Progress
    bar = Progress(transient=True)
    bar.start()
    task = bar.add_task("frames", total=total)

    def update(done):
        if done is None:
            bar.stop()
        else:
            bar.update(task, completed=done)
    return update


if __name__ == "__main__":
    sys.exit(main())
