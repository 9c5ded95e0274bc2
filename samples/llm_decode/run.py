"""LLM decode on the emulated MN-Core 2: the matrix products of a Llama-2-70B decoder layer.

    python samples/llm_decode/run.py                                  # the five layer matrices, mncore2, half, batch 1
    python samples/llm_decode/run.py --machine tiny --shape tiny --dtype fp32 --batch 2
    python samples/llm_decode/run.py --machine inference --batch 8    # the 4x-DRAM-bandwidth variant
    python samples/llm_decode/run.py --shape qkv,out --no-plain --png /tmp/roof.png

Decoding one token multiplies every weight matrix by the batch's activation vectors
(y = W x, W: rows x cols), so a decode step reads all the weights once and does two FLOP
per weight per batch entry: it is bound by DRAM bandwidth.  For each shape this runs the
MNCL task kernel (decode.py, TaskMatvec) once, checks y against numpy and prints emulated
time, DRAM bytes, the achieved fraction of the modelled DRAM bandwidth and the emulator's
wall time, next to the plain OpenCL C 1.2 kernel (plain.py, PlainMatvec) on a row slice.
With all five layer matrices it adds the layer's sum and tokens/s for an 80-layer model
(matrix products only: no attention, norms or sampling), and draws a roofline PNG.

Shapes (rows x cols of W):  qkv 10240 x 8192 (Q, K, V fused: 8192 + 2 x 1024 rows, grouped-
query attention), out 8192 x 8192, gate 28672 x 8192, up 28672 x 8192 (gate and up are two
launches), down 8192 x 28672; for tests: small 512 x 1024, tiny 256 x 512.

The machine: --machine NAME (a preset: mncore2, tiny, or inference from emulator/presets/)
or a TOML file (default: $MNCL_MACHINE, else mncore2).  Every shape runs on a new emulator
device, so no shape finds the emulated DRAM filled by the one before.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import textwrap
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))                        # plain.py, decode.py
sys.path.append(str(HERE.parents[1]))               # mncl, emulator from the checkout if not installed

import mncl as cl                                     # noqa: E402
from emulator.errors import MachineError                 # noqa: E402
from emulator.machine import load_machine                # noqa: E402
from plain import PlainMatvec                         # noqa: E402

SHAPES = {                          # name: (rows, cols) of W
    "qkv": (10240, 8192),
    "out": (8192, 8192),
    "gate": (28672, 8192),
    "up": (28672, 8192),
    "down": (8192, 28672),
    "small": (512, 1024),
    "tiny": (256, 512),           # about the smallest the task kernel takes on the tiny machine in half
}
LAYER = ("qkv", "out", "gate", "up", "down")    # one decoder layer's matrix products, in order
N_LAYERS = 80                                    # Llama-2-70B
SEED = 2024
RTOL = {"fp32": 1e-5, "half": 1e-3}              # on ||y - ref|| / ||ref||
PLAIN_ALL_ROWS_UP_TO = 1 << 20                   # weights; bigger matrices: the plain kernel's first rows only
PLAIN_SLICE_ROWS = 1024


# -- shapes and inputs --------------------------------------------------------------------------

def shape_names(spec: str) -> list[str]:
    """'all' (the five layer matrices) or a comma-separated list of names."""
    names = []
    for s in (s.strip() for s in spec.split(",")):
        names += list(LAYER) if s == "all" else [s] if s else []
    bad = [n for n in names if n not in SHAPES]
    if bad:
        raise SystemExit(f"unknown shape(s) {', '.join(bad)}; known: {', '.join(SHAPES)}, all")
    return names


def make_inputs(name: str, batch: int) -> tuple[np.ndarray, np.ndarray]:
    """W (rows x cols) and x (batch x cols), float32, N(0, 1) / sqrt(cols); a fixed seed per shape."""
    rows, cols = SHAPES[name]
    rng = np.random.default_rng([SEED, list(SHAPES).index(name)])
    scale = np.float32(1 / math.sqrt(cols))
    W = rng.standard_normal((rows, cols), dtype=np.float32)
    W *= scale
    x = rng.standard_normal((batch, cols), dtype=np.float32)
    x *= scale
    return W, x


def plain_rows(rows: int, cols: int, requested: int | None) -> int:
    n = requested if requested else (rows if rows * cols <= PLAIN_ALL_ROWS_UP_TO else PLAIN_SLICE_ROWS)
    return max(2, min(rows, n) & ~1)          # 'half' packs rows in pairs


def reference(Wd: np.ndarray, x: np.ndarray) -> np.ndarray:
    """x @ Wd.T in float64, (batch, rows), a block of rows at a time (the big matrices are ~1 GB)."""
    x64 = x.astype(np.float64)
    out = np.empty((x.shape[0], Wd.shape[0]))
    for r in range(0, Wd.shape[0], 2048):
        out[:, r:r + 2048] = x64 @ Wd[r:r + 2048].astype(np.float64).T
    return out


def rel_err(y: np.ndarray, ref: np.ndarray) -> float:
    return float(np.linalg.norm(y - ref) / max(np.linalg.norm(ref), 1e-300))


# -- the machine and its devices -----------------------------------------------------------------

def load(name: str):
    """The machine: a preset name (mncore2, tiny, inference) or a TOML file; else a clear exit."""
    try:
        return load_machine(name)
    except MachineError as e:
        raise SystemExit(str(e)) from None


def new_queue(spec: str):
    """A queue on a new emulator device for the machine.  The five layer matrices in fp32 fill
    most of a group's 4 GiB, so each shape gets its own device (and the previous one's emulated
    DRAM goes with its last reference)."""
    dev = cl.get_device(machine=spec, new=True)
    ctx = cl.Context([dev])
    return ctx, cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)


def dram_bytes_per_s(m) -> float:
    return m.links["dram_l2bm"].bytes_per_cycle * m.groups * m.clock_hz


# -- one shape -----------------------------------------------------------------------------------

def launch(kernel, x: np.ndarray) -> dict:
    """Run kernel(x) once: y, the profile summary and the emulator's wall time."""
    t0 = time.perf_counter()
    y, ev = kernel(x)
    ev.wait()
    wall = time.perf_counter() - t0
    return {"y": y, "stats": ev.stats.summary(), "wall_s": wall}


def run_shape(name: str, spec: str, m, args, Task) -> dict:
    rows, cols = SHAPES[name]
    res = {"name": name, "rows": rows, "cols": cols, "failures": []}
    ctx, q = new_queue(spec)
    wbytes = rows * cols * (2 if args.dtype == "half" else 4)
    limit = ctx.devices[0].get_info(cl.device_info.MAX_MEM_ALLOC_SIZE)
    if wbytes > limit:
        res["skipped"] = (f"W needs {wbytes / 2**20:,.0f} MiB, more than one buffer may hold on "
                          f"machine {m.name} ({limit / 2**20:,.0f} MiB)")
        return res
    W, x = make_inputs(name, args.batch)
    try:
        task = Task(ctx, q, rows, cols, args.batch, args.dtype)
    except ValueError as e:                  # a shape the kernel cannot split on this machine
        res["skipped"] = str(e)
        return res
    try:
        task.upload(W)
    except cl.Error as e:                    # ... or cannot place in its DRAM
        res["skipped"] = f"upload: {str(e).strip().splitlines()[0]}"
        return res
    res["task"] = launch(task, x)
    # the reference multiplies what the device multiplies: W and x as rounded to MN-Core half
    check(res, "task", res["task"]["y"], reference(task.device_weights(W), task.device_weights(x)), args.dtype)

    if not args.no_plain:
        n = plain_rows(rows, cols, args.plain_rows)
        plain = PlainMatvec(ctx, q, n, cols, args.batch, args.dtype)
        plain.upload(W[:n])
        res["plain"] = launch(plain, x)
        res["plain"]["rows"] = n
        pref = reference(PlainMatvec.device_weights(W[:n], args.dtype), x)
        check(res, "plain", res["plain"]["y"], pref, args.dtype)
        wb = 2 if args.dtype == "half" else 4
        res["plain"]["useful_bytes"] = n * cols * wb + 4 * args.batch * (cols + n)
    return res


def check(res: dict, which: str, y: np.ndarray, ref: np.ndarray, dtype: str) -> None:
    err = rel_err(y, ref)
    res[which]["err"] = err
    if not np.all(np.isfinite(y)) or not err <= RTOL[dtype]:
        msg = (f"FAIL: {res['name']} {which}: ||y - ref|| / ||ref|| = {err:.3g} > {RTOL[dtype]:g} "
               f"({dtype}; max |y - ref| {float(np.max(np.abs(y - ref))):.3g})")
        print(msg, flush=True)
        res["failures"].append(msg)


# -- the table -----------------------------------------------------------------------------------

def pct(f) -> str:
    return f"{100 * f:.1f}%"


def table_rows(results: list[dict], m, args) -> list[tuple]:
    peak = dram_bytes_per_s(m)
    head = ("shape", "rows x cols", "emulated us", "DRAM MB", "BW of peak", "emu wall s", "err",
            "plain rows", "plain BW", "plain useful", "plain us")
    rows = [head]
    for r in results:
        size = f"{r['rows']} x {r['cols']}"
        if "skipped" in r:
            rows.append((r["name"], size, f"skipped: {r['skipped']}") + ("",) * (len(head) - 3))
            continue
        s = r["task"]["stats"]
        row = [r["name"], size, f"{s['time_s'] * 1e6:,.1f}", f"{s['dram_bytes'] / 1e6:,.2f}",
               pct(s["dram_bandwidth_fraction_of_peak"]), f"{r['task']['wall_s']:.2f}", f"{r['task']['err']:.1e}"]
        if "plain" in r:
            p, ps = r["plain"], r["plain"]["stats"]
            row += [str(p["rows"]), pct(ps["dram_bandwidth_fraction_of_peak"]),
                    pct(p["useful_bytes"] / ps["time_s"] / peak), f"{ps['time_s'] * 1e6:,.1f}"]
        else:
            row += ["-"] * 4
        rows.append(tuple(row))
    layer = layer_sum(results)
    if layer:
        t, b = layer
        rows.append(("layer", "qkv+out+gate+up+down", f"{t * 1e6:,.1f}", f"{b / 1e6:,.2f}",
                     pct(b / t / peak), "", "") + ("",) * 4)
    return rows


def layer_sum(results: list[dict]):
    """(emulated seconds, DRAM bytes) summed over one decoder layer's launches, or None."""
    got = {r["name"]: r["task"]["stats"] for r in results if "task" in r}
    if not all(n in got for n in LAYER):
        return None
    return sum(got[n]["time_s"] for n in LAYER), sum(got[n]["dram_bytes"] for n in LAYER)


def print_table(rows: list[tuple]) -> None:
    widths = [max(len(str(r[i])) for r in rows if not str(r[2]).startswith("skipped")) for i in range(len(rows[0]))]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()
    print(line(rows[0]))
    print(line(["-" * w for w in widths]))
    for r in rows[1:]:
        print(line(r))


def print_footnotes(results: list[dict], m, args, task_dw: bool) -> None:
    layer = layer_sum(results)
    if layer:
        t, _ = layer
        print(f"\ntokens/s, {N_LAYERS} layers at batch {args.batch}: {args.batch / (N_LAYERS * t):,.1f} "
              f"(matrix products only: batch / ({N_LAYERS} x the layer's summed emulated time))")
    wave = 8 * m.n_pe
    notes = [
        "emulated us, DRAM MB (ev.stats dram_bytes, 1e6 bytes), BW of peak (ev.stats "
        "dram_bandwidth_fraction_of_peak: bytes moved / emulated time / modelled peak): the task kernel "
        "(decode.py), one launch; emu wall s: time.perf_counter around the call (x in, run, y out).",
        f"err: ||y - ref|| / ||ref|| against numpy in float64; must be <= {RTOL[args.dtype]:g} for {args.dtype}.",
    ]
    if args.dtype == "half":
        notes.append("half: the task kernel's reference uses "
                     + ("TaskMatvec.device_weights(W) (W as rounded to MN-Core half)" if task_dw else
                        "W rounded to IEEE half (TaskMatvec has no device_weights)")
                     + "; the plain kernel stores IEEE half bits, two per 32-bit word, converted in C "
                       "(vload_half is a gather on the SIMD backend: see plain.py).")
    if not args.no_plain:
        notes.append(
            "plain: the plain OpenCL C 1.2 kernel (plain.py; W column-major, one work-item per row, per pair "
            "of rows for half) on the "
            f"first 'plain rows' rows of W (default: all rows up to {PLAIN_ALL_ROWS_UP_TO:,} weights, else "
            f"{PLAIN_SLICE_ROWS}; --plain-rows); its figures are measured on that row slice.  plain BW: "
            "ev.stats, bytes moved; each pass over j moves a whole wave's stripe "
            f"({wave:,} lanes on {m.name}) whatever the rows, so up to a wave its cycles and bytes do not "
            "depend on the rows.  plain useful: the slice's own bytes (weights + x + y, once) / its time / peak.")
    print()
    for n in notes:
        print(textwrap.fill(n, 110, initial_indent="  * ", subsequent_indent="    "))


# -- the roofline plot -----------------------------------------------------------------------------

def plot_roofline(results: list[dict], m, args, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bw = dram_bytes_per_s(m)
    points = []                                   # (label, intensity, flop rate, marker)
    roof_f32 = None
    for r in results:
        for which, marker in (("task", "o"), ("plain", "s")):
            if which not in r:
                continue
            s = r[which]["stats"]
            roof_f32 = s["roofline"]["peak_flop_rate_f32_vector"]
            ai = s["arithmetic_intensity_flop_per_dram_byte"]
            if ai and s["flop_rate"] > 0:
                label = f"{r['name']} {which}" + (f" ({r[which]['rows']} rows)" if which == "plain" else "")
                points.append((label, ai, s["flop_rate"], marker))
    peak_h = m.peak_flops("h", "matrix")
    if roof_f32 is None:
        roof_f32 = m.peak_flops("f", "vector")
    lo = min([p[1] for p in points] + [0.1]) / 4
    hi = max([p[1] for p in points] + [peak_h / bw]) * 4
    ai = np.logspace(math.log10(lo), math.log10(hi), 200)

    fig, ax = plt.subplots(figsize=(8, 5.5))
    mem = ai[ai <= peak_h / bw]
    ax.loglog(mem, bw * mem, "k-", lw=1.2, label=f"memory roof: DRAM {bw / 1e9:,.0f} GB/s x intensity")
    for roof, style, what in ((roof_f32, "b--", "fp32 vector peak (ev.stats roofline)"),
                              (peak_h, "r:", "half matrix peak (machine)")):
        flat = ai[ai >= roof / bw]
        ax.loglog(flat, np.full_like(flat, roof), style, lw=1.2,
                  label=f"compute roof: {what} {roof / 1e12:,.2f} TFLOP/s")
    groups = {}                                   # points that coincide on the plot share one label
    for label, x, y, marker in points:
        key = (marker, round(math.log10(x), 1), round(math.log10(y), 1))
        groups.setdefault(key, []).append((label, x, y))
    for i, ((marker, _, _), pts) in enumerate(groups.items()):
        x, y = pts[0][1], pts[0][2]
        ax.loglog([p[1] for p in pts], [p[2] for p in pts], marker, ms=6)
        names = ", ".join(p[0].split(" ", 1)[0] for p in pts) + " " + pts[0][0].split(" ", 1)[1]
        ax.annotate(names, (x, y), textcoords="offset points", xytext=(8, -3 - 12 * (i % 2)), fontsize=8)
    ax.set_xlabel("arithmetic intensity (FLOP per DRAM byte, ev.stats)")
    ax.set_ylabel("achieved FLOP/s (emulated)")
    ax.set_title(f"y = W x on {m.name}, {args.dtype} weights, batch {args.batch}")
    ax.set_ylim(bottom=min([p[2] for p in points] + [bw * lo]) / 3, top=peak_h * 3)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# -- main ----------------------------------------------------------------------------------------

def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--machine", default=os.environ.get("MNCL_MACHINE") or "mncore2",
                    help="mncore2, tiny, inference (emulator/presets/) or a TOML file "
                         "(default: $MNCL_MACHINE, else mncore2)")
    ap.add_argument("--batch", type=int, default=1, help="activation vectors per launch (default 1)")
    ap.add_argument("--dtype", choices=("half", "fp32"), default="half", help="weights (default half)")
    ap.add_argument("--shape", default="all",
                    help=f"'all' (the layer: {', '.join(LAYER)}) or names, comma-separated: {', '.join(SHAPES)}")
    ap.add_argument("--plain-rows", type=int, default=None,
                    help=f"rows the plain kernel runs on (default: all up to {PLAIN_ALL_ROWS_UP_TO:,} weights, "
                         f"else {PLAIN_SLICE_ROWS})")
    ap.add_argument("--no-plain", action="store_true", help="skip the plain OpenCL C kernel")
    ap.add_argument("--png", default=None,
                    help="roofline plot (default samples/llm_decode/roofline-<machine>-<dtype>-b<batch>.png)")
    args = ap.parse_args(argv)
    if args.batch < 1:
        ap.error("--batch must be at least 1")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    t_start = time.perf_counter()
    names = shape_names(args.shape)
    spec = args.machine
    m = load(spec)
    from decode import TaskMatvec                 # the task kernel's host side (decode.py)

    link = m.links["dram_l2bm"]
    print(f"LLM decode (Llama-2-70B layer matrices), y = W x: machine {m.name} ({spec}), "
          f"{args.dtype} weights, batch {args.batch}")
    print(f"modelled DRAM bandwidth: {link.bytes_per_cycle:g} B/cycle per group x {m.groups} groups x "
          f"{m.clock_hz / 1e6:.0f} MHz = {dram_bytes_per_s(m) / 1e9:,.0f} GB/s\n", flush=True)

    results = []
    for name in names:
        rows, cols = SHAPES[name]
        print(f"[{name}] {rows} x {cols} ...", flush=True)
        results.append(run_shape(name, spec, m, args, TaskMatvec))
    print()
    print_table(table_rows(results, m, args))
    print_footnotes(results, m, args, hasattr(TaskMatvec, "device_weights"))

    png = args.png or str(HERE / f"roofline-{m.name}-{args.dtype}-b{args.batch}.png")
    if any("task" in r for r in results):
        plot_roofline(results, m, args, png)
        print(f"\nroofline plot: {png}")
    failures = [f for r in results for f in r["failures"]]
    print(f"total wall time {time.perf_counter() - t_start:.1f} s")
    if failures:
        print(f"\nFAIL: {len(failures)} result(s) differ from numpy:")
        for f in failures:
            print("  " + f)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
