"""Tensor-parallel LLM decode across N emulated chips on Dask (issue 27; docs/scale-out.md).

    python samples/llm_decode/multichip.py --chips 1,2,4 --model reduced --machine tiny --layers 2
    python samples/llm_decode/multichip.py --chips 8 --model 70b --scheduler tcp://HOST:8786   # a cluster

A Llama-2-70B-shaped decoder layer stack split Megatron-style over N chips (mncl/system.py: each
chip an emulator device in its own Dask worker):

* column-parallel QKV and gate / up: chip i holds rows i of each (its heads: Q_i, K_i, V_i), so
  its products need the whole input and give its own part of the output;
* row-parallel output and down projections: chip i holds the columns that meet its part, so each
  chip's product is a partial sum of the whole output, and an **all-reduce** after each adds them.

Per layer and chip: qkv_i = W_qkv,i x; a_i = the Q_i rows of qkv_i (the attention output of the
chip's heads: attention, norms, residuals and the activation are not modelled, as in run.py);
o_i = W_out,i a_i -> all-reduce -> o; m_i = (W_gate,i o) * (W_up,i o) (an OpenCL kernel on the
chip); d_i = W_down,i m_i -> all-reduce -> the next layer's x.  Every product is the task-kernel
matvec of decode.py (zero rows and columns pad a part up to the kernel's multiples; the padding's
bytes are counted).  Weights are generated on each worker from the seed, block by block (1/8 of a
matrix's split dimension a block, so N = 1, 2, 4, 8 hold the same model): no weight crosses the
network.  Every output is checked against numpy, and N > 1 against N = 1.

Each chip records its layers' two phases once (queue.record(): the products chain in device
buffers) and replays them every token (``--replay off``: launch by launch, to compare).

Per token it prints the emulated time (chips' kernels, the slowest chip per phase; of that the
DRAM time, the busiest chip's bytes at its peak bandwidth, the rest compute and latency; the
interconnect from the link model), the share of the aggregate DRAM bandwidth, the host's dispatch
time (on the chips: the CPU time issuing the copies and launches, the slowest chip per phase;
and the coordinator's CPU time issuing every chip call and collective) and tokens/s.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.append(str(HERE.parents[1]))

from mncl.system import System  # noqa: E402

MODELS = {                  # hidden d, key/value width kv, feed-forward width ffn, layers
    "70b": dict(d=8192, kv=1024, ffn=28672, layers=80),
    "reduced": dict(d=1024, kv=128, ffn=2048, layers=80),
    "tiny": dict(d=512, kv=64, ffn=1024, layers=80),
}
BLOCKS = 8                  # a matrix's split dimension in 8 generated blocks: N = 1, 2, 4, 8 share them
SEED = 2027
RTOL = 1e-4                 # ||y - ref|| / ||ref|| per layer output, fp32

MUL = "__kernel void mul(__global const float *a, __global const float *b, __global float *c)" \
      " { int i = get_global_id(0); c[i] = a[i] * b[i]; }"


# -- the model's weights, block by block -----------------------------------------------------------

def block(seed, layer, name, b, shape):
    """Block b of matrix `name` of `layer`: the same numbers whoever asks."""
    rng = np.random.default_rng([seed, layer, {"q": 0, "k": 1, "v": 2, "out": 3, "gate": 4, "up": 5,
                                               "down": 6}[name], b])
    fan_in = shape[1] * (BLOCKS if name in ("out", "down") else 1)      # out, down: split by columns
    return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)


def shard(model, seed, layer, i, n):
    """Chip i of n's parts of one layer: qkv (rows), out (columns), gate, up (rows), down (columns)."""
    d, kv, ffn = model["d"], model["kv"], model["ffn"]
    per = BLOCKS // n
    bs = range(i * per, (i + 1) * per)
    rows = lambda name, total, cols: np.concatenate([block(seed, layer, name, b, (total // BLOCKS, cols)) for b in bs])
    cols = lambda name, total, rows_: np.concatenate([block(seed, layer, name, b, (rows_, total // BLOCKS))
                                                      for b in bs], axis=1)
    return {"qkv": np.concatenate([rows("q", d, d), rows("k", kv, d), rows("v", kv, d)]),
            "out": cols("out", d, d), "gate": rows("gate", ffn, d), "up": rows("up", ffn, d),
            "down": cols("down", ffn, d)}


def reference(model, seed, layers, x):
    """numpy's decode of the same model: the layers' outputs."""
    d = model["d"]
    outs = []
    for layer in range(layers):
        full = shard(model, seed, layer, 0, 1)
        q = (full["qkv"] @ x)[:d]        # the whole Q (with N chips: chip i's Q_i rows, in order)
        o = full["out"] @ q
        x = full["down"] @ ((full["gate"] @ o) * (full["up"] @ o))
        outs.append(x)
    return outs


# -- on a chip (these run in the chip's worker) -----------------------------------------------------

class Padded:
    """decode.TaskMatvec's kernel and packed weights for any rows x cols: W padded with zero rows
    and columns up to the kernel's multiples on this machine (the zero part is streamed, and
    counted, like the rest).  ``launch(x_buf, y_buf)`` multiplies a device buffer of at least
    ``C`` floats into one of at least ``R``: the layer's products chain on the chip."""

    def __init__(self, chip, W):
        from decode import TaskMatvec
        m = chip.device.backend.machine
        lanes = 2                                        # fp32 (decode.Geometry)
        row_unit = m.mab_per_l1b * m.pe_per_mab * 4 * lanes
        col_unit = m.groups * m.l2b_per_group * m.l1b_per_l2b * 8 * lanes
        col_unit = max(col_unit, m.groups * m.l2b_per_group * 64 * lanes)   # x: 64 long words per L2B at least
        self.rows, self.cols = W.shape
        R, C = -(-self.rows // row_unit) * row_unit, -(-self.cols // col_unit) * col_unit
        while True:                      # the kernel also wants whole chunks of its T steps
            try:
                self.mv = TaskMatvec(chip.ctx, chip.queue, R, C, 1, "fp32")
                break
            except ValueError:
                R += row_unit
        self.R, self.C = R, C
        Wp = np.zeros((R, C), np.float32)
        Wp[:self.rows, :self.cols] = W
        self.mv.upload(Wp)
        self.weight_bytes = Wp.nbytes

    def launch(self, queue, x_buf, y_buf):
        """y = W x (fp32 lanes are the floats' own bits, so a float buffer is the kernel's x)."""
        import mncl as cl
        self.mv.kernel.set_args(self.mv.w, x_buf, y_buf)
        return cl.enqueue_task(queue, self.mv.kernel)


class ChipLayers:
    """One chip's layers: packed weights, device buffers that chain the products, and each layer's
    two phases recorded once (queue.record()) and replayed every token:

        A: x -> qkv -> (its Q rows) -> out -> o partial        (then the all-reduce of o)
        B: o -> gate, up -> mul -> down -> x partial            (then the all-reduce of x)
    """

    def __init__(self, chip, model, seed, layers, i, n):
        import mncl as cl
        self.chip, self.d = chip, model["d"]
        mul = cl.Program(chip.ctx, MUL).build().mul
        mf = cl.mem_flags

        def buf(floats):
            return cl.Buffer(chip.ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.zeros(floats, np.float32))
        self.layers = []
        for layer in range(layers):
            P = {k: Padded(chip, W) for k, W in shard(model, seed, layer, i, n).items()}
            # qkv's output feeds out: out reads its first C floats, the chip's Q rows and then K, V
            # rows or zeros against W_out's zero columns
            b = dict(x=buf(P["qkv"].C), qkv=buf(max(P["qkv"].R, P["out"].C)), o=buf(P["out"].R),
                     xo=buf(P["gate"].C), g=buf(P["gate"].R), u=buf(P["up"].R),
                     m=buf(max(P["gate"].R, P["down"].C)), y=buf(P["down"].R))
            A = [lambda q, P=P, b=b: P["qkv"].launch(q, b["x"], b["qkv"]),
                 lambda q, P=P, b=b: P["out"].launch(q, b["qkv"], b["o"])]
            B = [lambda q, P=P, b=b: P["gate"].launch(q, b["xo"], b["g"]),
                 lambda q, P=P, b=b: P["up"].launch(q, b["xo"], b["u"]),
                 lambda q, P=P, b=b: mul(q, (P["gate"].R,), None, b["g"], b["u"], b["m"]),
                 lambda q, P=P, b=b: P["down"].launch(q, b["m"], b["y"])]
            recorded = []
            for phase in (A, B):
                with chip.queue.record() as rec:
                    for launch in phase:
                        launch(chip.queue)
                recorded.append(rec)
            self.layers.append(dict(P=P, b=b, phases=(A, B), recorded=recorded))
        self.weight_bytes = sum(p.weight_bytes for L in self.layers for p in L["P"].values())

    def run(self, layer, phase, x_in, replay):
        """Phase 0 or 1 of a layer on input x_in (d floats); returns its output (d floats, a partial
        sum), the phase's emulated seconds and DRAM bytes, and the host's dispatch time (this
        thread's CPU time issuing the copies and launches, not the emulation)."""
        import mncl as cl
        L, q = self.layers[layer], self.chip.queue
        src, dst = ("x", "o") if phase == 0 else ("xo", "y")
        t0 = time.thread_time()
        cl.enqueue_copy(q, L["b"][src], np.ascontiguousarray(x_in, np.float32))
        events = [L["recorded"][phase].replay()] if replay else [launch(q) for launch in L["phases"][phase]]
        out = np.empty(self.d, np.float32)
        copy = cl.enqueue_copy(q, out, L["b"][dst], is_blocking=False)
        dispatch = time.thread_time() - t0
        copy.wait()
        stats = [c for e in events for c in (e.stats.commands if replay else [e.stats])]
        return out, sum(c.time_s for c in stats), sum(c.dram_bytes for c in stats), dispatch


def setup_chip(chip, model, seed, layers, i, n):
    """Generate this chip's weights (never sent), build its kernels, upload, record the phases."""
    chip.state["layers"] = ChipLayers(chip, model, seed, layers, i, n)
    return chip.state["layers"].weight_bytes


def phase(chip, layer, which, replay, x=None):
    """One phase on this chip: its input is x (phase 0) or the all-reduced 'o' (phase 1); its
    partial output goes to 'o' or 'x' for the all-reduce.  Returns (emulated s, DRAM bytes,
    dispatch s)."""
    out, t, dram, dispatch = chip.state["layers"].run(layer, which, x if which == 0 else chip.get("o"), replay)
    chip.put("o" if which == 0 else "x", out)
    return t, dram, dispatch


def chip_x(chip):
    return chip.get("x")


# -- the coordinator -----------------------------------------------------------------------------------

def decode(n, model, layers, machine, link, topology, scheduler=None, seed=SEED, x0=None, replay=True):
    """Run one token through `layers` layers on n chips; returns the figures and every layer's output."""
    spec = {"system": {"chips": n, "machine": machine, "topology": topology}, "link": link}
    client = None
    if scheduler:
        from dask.distributed import Client
        client = Client(scheduler)
    with System(spec, client=client) as system:
        weight_bytes = system.map(setup_chip, [(model, seed, layers, i, n) for i in range(n)])
        x = x0
        chips_s = net_s = launch_s = 0.0
        dram = dram_max = 0          # DRAM bytes in all; the busiest chip's, summed over the phases
        outs = []
        cpu0, wall0 = time.process_time(), time.perf_counter()
        for layer in range(layers):
            for which, name in ((0, "o"), (1, "x")):
                r = system.map(phase, None, layer, which, replay, x)
                chips_s += max(t for t, _, _ in r)               # the chips run at once: the slowest
                dram += sum(b for _, b, _ in r)
                dram_max += max(b for _, b, _ in r)
                launch_s += max(d for _, _, d in r)
                net_s += system.all_reduce(name).modeled_s
            xs = system.map(chip_x)
            x = xs[0]
            if any(not np.array_equal(x, other) for other in xs[1:]):
                raise AssertionError(f"layer {layer}: the chips' x differ after the all-reduce")
            outs.append(x)
        coordinator_s = time.process_time() - cpu0
        wall_s = time.perf_counter() - wall0
        bytes_moved = sum(c.total_bytes for c in system.collectives)
        m = system.machine
    peak_bw = m["links"]["dram_l2bm"]["bytes_per_cycle"] * m["tree"]["groups"] * float(m["timing"]["clock_hz"])
    total = chips_s + net_s
    dram_s = dram_max / peak_bw            # the busiest chip's DRAM at its peak: the DRAM-bound part
    return dict(chips=n, layers=layers, replay=replay, chips_s=chips_s, dram_s=dram_s, net_s=net_s, total_s=total,
                dram_bytes=dram, weight_bytes=sum(weight_bytes),
                bw_fraction=dram / (total * n * peak_bw) if total else 0.0,
                launch_s=launch_s, coordinator_s=coordinator_s, wall_s=wall_s, net_bytes=bytes_moved), outs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chips", default="1,2,4", help="comma-separated chip counts (1, 2, 4, 8)")
    ap.add_argument("--model", choices=sorted(MODELS), default="reduced")
    ap.add_argument("--layers", type=int, default=2, help="layers emulated (tokens/s scales to the model's)")
    ap.add_argument("--machine", default=os.environ.get("MNCL_MACHINE", "tiny"))
    ap.add_argument("--topology", choices=("ring", "all-to-all"), default="ring")
    ap.add_argument("--link-gbps", type=float, default=100.0, help="GB/s per link direction")
    ap.add_argument("--link-latency-us", type=float, default=2.0)
    ap.add_argument("--scheduler", help="an existing Dask scheduler's address (default: a local cluster)")
    ap.add_argument("--replay", choices=("on", "off", "both"), default="on",
                    help="each chip's launches replayed from a recording, or issued call by call, or both")
    a = ap.parse_args(argv)
    model = MODELS[a.model]
    counts = [int(c) for c in a.chips.split(",")]
    if any(c not in (1, 2, 4, 8) for c in counts):
        ap.error("--chips: each count must be 1, 2, 4 or 8 (the weights come in 8 blocks)")
    link = {"bytes_per_second": a.link_gbps * 1e9, "latency_s": a.link_latency_us * 1e-6}
    x0 = np.random.default_rng(SEED).standard_normal(model["d"]).astype(np.float32)
    print(f"tensor-parallel decode, model {a.model} (d={model['d']}, kv={model['kv']}, ffn={model['ffn']}), "
          f"{a.layers} of {model['layers']} layers emulated, chips of {a.machine}, {a.topology} links "
          f"{a.link_gbps:g} GB/s {a.link_latency_us:g} us", flush=True)
    ref = reference(model, SEED, a.layers, x0)
    rows, first, failures = [], None, []
    modes = {"on": [True], "off": [False], "both": [False, True]}[a.replay]
    for n, replay in ((n, r) for n in counts for r in modes):
        print(f"[{n} chip(s), {'replayed' if replay else 'call by call'}] ...", flush=True)
        fig, outs = decode(n, model, a.layers, a.machine, link, a.topology, a.scheduler, x0=x0, replay=replay)
        for layer, (y, r) in enumerate(zip(outs, ref)):
            err = np.linalg.norm(y - r) / np.linalg.norm(r)
            if err > RTOL:
                failures.append(f"{n} chips, layer {layer}: relative error {err:.2e} against numpy")
        if first is not None:
            err = np.linalg.norm(outs[-1] - first) / np.linalg.norm(first)
            if err > RTOL:
                failures.append(f"{n} chips: relative error {err:.2e} against 1 chip")
        first = outs[-1] if first is None else first
        rows.append(fig)
    scale = model["layers"] / a.layers
    print(f"\n{'chips':>5} {'launches':>8} {'token us':>10} {'chips us':>10} {'DRAM us':>9} {'links us':>9} "
          f"{'% agg DRAM BW':>14} {'link MB':>8} {'launch ms':>10} {'coord ms':>9} {'tokens/s':>9}")
    for f in rows:
        per_token = f["total_s"] * scale
        print(f"{f['chips']:>5} {'replayed' if f['replay'] else 'calls':>8} {per_token * 1e6:>10.1f} "
              f"{f['chips_s'] * scale * 1e6:>10.1f} {f['dram_s'] * scale * 1e6:>9.1f} {f['net_s'] * scale * 1e6:>9.1f} "
              f"{100 * f['bw_fraction']:>13.1f}% {f['net_bytes'] * scale / 1e6:>8.2f} "
              f"{f['launch_s'] * scale * 1e3:>10.2f} {f['coordinator_s'] * scale * 1e3:>9.0f} {1 / per_token:>9.1f}")
    print(f"\n(per token of the {model['layers']}-layer model: the {a.layers} emulated layers x {scale:g}; "
          f"every layer output checked against numpy, rtol {RTOL:g})")
    if failures:
        print("FAIL:\n  " + "\n  ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
