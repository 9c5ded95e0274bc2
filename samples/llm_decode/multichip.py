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

Per token it prints the emulated time (chips' kernels, the slowest chip per phase; of that the
DRAM time, the busiest chip's bytes at its peak bandwidth, the rest compute and latency; the
interconnect from the link model), the share of the aggregate DRAM bandwidth, the host's dispatch
time (the coordinator's CPU time issuing every chip call and collective) and tokens/s.
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
    """decode.TaskMatvec for any rows x cols: W padded with zero rows and columns up to the kernel's
    multiples on this machine (the zero part is streamed, and counted, like the rest)."""

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
        Wp = np.zeros((R, C), np.float32)
        Wp[:self.rows, :self.cols] = W
        self.mv.upload(Wp)
        self.weight_bytes = Wp.nbytes

    def __call__(self, x):
        xp = np.zeros(self.mv.geo.cols, np.float32)
        xp[:self.cols] = x
        y, ev = self.mv(xp)
        return y[0, :self.rows], ev.stats


def setup_chip(chip, model, seed, layers, i, n):
    """Generate this chip's weights (never sent), build its kernels, upload."""
    import mncl as cl
    chip.state["layers"] = [{k: Padded(chip, W) for k, W in shard(model, seed, layer, i, n).items()}
                            for layer in range(layers)]
    chip.state["mul"] = cl.Program(chip.ctx, MUL).build().mul
    chip.state["qrows"] = model["d"] // n
    return sum(p.weight_bytes for lay in chip.state["layers"] for p in lay.values())


def attention_and_out(chip, layer, x):
    """qkv_i, a_i, o_i = W_out,i a_i; puts o_i as the array 'o'; returns (emulated s, DRAM bytes)."""
    L = chip.state["layers"][layer]
    qkv, s1 = L["qkv"](x)
    o, s2 = L["out"](qkv[:chip.state["qrows"]])
    chip.put("o", o)
    return s1.time_s + s2.time_s, s1.dram_bytes + s2.dram_bytes


def ffn(chip, layer):
    """gate, up, their product (a kernel), down; puts the partial as 'x'."""
    import mncl as cl
    L = chip.state["layers"][layer]
    o = chip.get("o")
    g, s1 = L["gate"](o)
    u, s2 = L["up"](o)
    mf = cl.mem_flags
    a = cl.Buffer(chip.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=g)
    b = cl.Buffer(chip.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=u)
    c = cl.Buffer(chip.ctx, mf.WRITE_ONLY, g.nbytes)
    ev = chip.state["mul"](chip.queue, g.shape, None, a, b, c)
    m = np.empty_like(g)
    cl.enqueue_copy(chip.queue, m, c)
    d, s3 = L["down"](m)
    chip.put("x", d)
    t = s1.time_s + s2.time_s + ev.stats.time_s + s3.time_s
    return t, s1.dram_bytes + s2.dram_bytes + ev.stats.dram_bytes + s3.dram_bytes


def chip_x(chip):
    return chip.get("x")


# -- the coordinator -----------------------------------------------------------------------------------

def decode(n, model, layers, machine, link, topology, scheduler=None, seed=SEED, x0=None):
    """Run one token through `layers` layers on n chips; returns the figures and every layer's output."""
    spec = {"system": {"chips": n, "machine": machine, "topology": topology}, "link": link}
    client = None
    if scheduler:
        from dask.distributed import Client
        client = Client(scheduler)
    with System(spec, client=client) as system:
        weight_bytes = system.map(setup_chip, [(model, seed, layers, i, n) for i in range(n)])
        x = x0
        chips_s = net_s = 0.0
        dram = dram_max = 0          # DRAM bytes in all; the busiest chip's, summed over the phases
        outs = []
        cpu0, wall0 = time.process_time(), time.perf_counter()
        for layer in range(layers):
            r = system.map(attention_and_out, None, layer, x)
            chips_s += max(t for t, _ in r)
            dram += sum(b for _, b in r)
            dram_max += max(b for _, b in r)
            net_s += system.all_reduce("o").modeled_s
            r = system.map(ffn, None, layer)
            chips_s += max(t for t, _ in r)
            dram += sum(b for _, b in r)
            dram_max += max(b for _, b in r)
            net_s += system.all_reduce("x").modeled_s
            xs = system.map(chip_x)
            x = xs[0]
            if any(not np.array_equal(x, other) for other in xs[1:]):
                raise AssertionError(f"layer {layer}: the chips' x differ after the all-reduce")
            outs.append(x)
        dispatch_s = time.process_time() - cpu0
        wall_s = time.perf_counter() - wall0
        bytes_moved = sum(c.total_bytes for c in system.collectives)
        m = system.machine
    peak_bw = m["links"]["dram_l2bm"]["bytes_per_cycle"] * m["tree"]["groups"] * float(m["timing"]["clock_hz"])
    total = chips_s + net_s
    dram_s = dram_max / peak_bw            # the busiest chip's DRAM at its peak: the DRAM-bound part
    return dict(chips=n, layers=layers, chips_s=chips_s, dram_s=dram_s, net_s=net_s, total_s=total, dram_bytes=dram,
                weight_bytes=sum(weight_bytes), bw_fraction=dram / (total * n * peak_bw) if total else 0.0,
                dispatch_s=dispatch_s, wall_s=wall_s, net_bytes=bytes_moved), outs


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
    for n in counts:
        print(f"[{n} chip(s)] ...", flush=True)
        fig, outs = decode(n, model, a.layers, a.machine, link, a.topology, a.scheduler, x0=x0)
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
    print(f"\n{'chips':>5} {'token us':>10} {'chips us':>10} {'DRAM us':>9} {'links us':>9} {'% agg DRAM BW':>14} "
          f"{'link MB':>8} {'dispatch ms':>12} {'tokens/s':>9}")
    for f in rows:
        per_token = f["total_s"] * scale
        print(f"{f['chips']:>5} {per_token * 1e6:>10.1f} {f['chips_s'] * scale * 1e6:>10.1f} "
              f"{f['dram_s'] * scale * 1e6:>9.1f} {f['net_s'] * scale * 1e6:>9.1f} {100 * f['bw_fraction']:>13.1f}% "
              f"{f['net_bytes'] * scale / 1e6:>8.2f} {f['dispatch_s'] * scale * 1e3:>12.1f} {1 / per_token:>9.1f}")
    print(f"\n(per token of the {model['layers']}-layer model: the {a.layers} emulated layers x {scale:g}; "
          f"every layer output checked against numpy, rtol {RTOL:g})")
    if failures:
        print("FAIL:\n  " + "\n  ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
