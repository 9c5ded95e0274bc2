"""Emulation sweeps on Dask: every point of a spec (what to run x the axes to cross) as a task in a
worker process, results cached by content, one row per point.

A spec (TOML; docs/scale-out.md has the whole format)::

    [sweep]
    name = "saxpy"
    timeout = 600                       # seconds of emulation per launch (optional)

    [[run]]                             # one or more things to run at every point
    name = "saxpy"
    kind = "opencl"                     # opencl | vsm | python
    source = "examples/saxpy.cl"        # relative to the spec's folder
    global = "{n}"
    args = { x = "rand:{n}", y = "rand:{n}", a = "2.5", n = "{n}" }
    reference = "cpu"                   # the same launch on the CPU device; buffers compared

    [axes]
    n = [4096, 65536]                   # a parameter: {n} in the runs' strings
    machine = ["tiny", "mncore2"]       # the preset
    "links.dram_l2bm.bytes_per_cycle" = [128, 256]   # a dotted key: a machine TOML override
    options = ["", "-cl-fast-relaxed-math"]          # build options ({options} is their default)

Why Dask: a sweep is thousands of independent emulations; Dask schedules them over local worker
processes or a cluster, reruns a task whose worker died, and shows a dashboard.  A point's key
hashes everything its result depends on (the run's source text, its resolved arguments, the
machine after overrides, the build options, the compiler's fingerprint), so a cached point is
never run again and a changed one always is.
"""
from __future__ import annotations

import copy
import hashlib
import importlib
import itertools
import json
import os
import pathlib
import time
from dataclasses import dataclass, field

import numpy as np

MACHINE_SECTIONS = ("tree", "memory", "timing", "links", "mau")
KINDS = ("opencl", "vsm", "python")
RESULT_VERSION = 1


class SpecError(ValueError):
    """A spec that cannot be expanded into points: the message names the key."""


@dataclass
class Point:
    """One emulation: a run of the spec at one combination of the axes."""
    run: dict                       # the [[run]] table, strings resolved
    params: dict                    # the axes' values at this point, by axis name
    machine: dict                   # the machine description (a preset's TOML, overrides applied)
    source_text: str = ""           # the run's source, read when the spec is expanded
    timeout: float | None = None    # seconds of emulation per launch ([sweep] timeout)
    key: str = field(default="", compare=False)


# -- spec -> points ----------------------------------------------------------------------------

def load_spec(path) -> dict:
    """A spec file as a dict, with its folder (runs' paths are relative to it)."""
    import tomllib
    path = pathlib.Path(path)
    try:
        spec = tomllib.loads(path.read_text())
    except OSError as e:
        raise SpecError(f"cannot read {path}: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{path}: not valid TOML: {e}") from None
    spec.setdefault("sweep", {}).setdefault("name", path.stem)
    spec["_dir"] = str(path.resolve().parent)
    return spec


def _preset(name: str) -> dict:
    """The description of the point's machine (a preset or a TOML file), to override fields of."""
    from emulator.errors import MachineError
    from emulator.machine import machine_description
    try:
        return machine_description(name)[0]
    except MachineError as e:
        raise SpecError(f"axis machine: {e}") from None


def _override(machine: dict, dotted: str, value) -> None:
    keys = dotted.split(".")
    node = machine
    for k in keys[:-1]:
        if not isinstance(node.get(k), dict):
            raise SpecError(f"axis {dotted!r}: the machine has no table {k!r} there")
        node = node[k]
    if keys[-1] not in node:
        raise SpecError(f"axis {dotted!r}: the machine has no field {keys[-1]!r} (it has: {', '.join(node)})")
    node[keys[-1]] = value


def _resolve(value, params: dict, where: str):
    """{name} in strings (recursively in lists and tables) replaced by the point's parameters."""
    if isinstance(value, str):
        try:
            return value.format_map(params)
        except KeyError as e:
            raise SpecError(f"{where}: {{{e.args[0]}}} is not an axis of the sweep") from None
    if isinstance(value, dict):
        return {k: _resolve(v, params, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, params, where) for v in value]
    return value


def _module_text(entry: str, where: str) -> str:
    import importlib.util
    module = entry.partition(":")[0]
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        found = None
    if found is None or not found.origin or not os.path.isfile(found.origin):
        raise SpecError(f"{where}: entry {entry!r}: no module {module!r} on the Python path")
    return pathlib.Path(found.origin).read_text()


def _file_hash(path: str) -> str:
    """An input file's content, for the key (a missing one fails the point when it runs)."""
    try:
        return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()
    except OSError:
        return "missing"


def expand(spec: dict) -> list[Point]:
    """Every point of a spec, in order: runs outermost, then the axes as written (last fastest)."""
    from .cache import compiler_fingerprint
    runs = spec.get("run")
    if not runs or not isinstance(runs, list):
        raise SpecError("the spec has no [[run]] table: say what to run")
    axes = spec.get("axes", {})
    for name, values in axes.items():
        if not isinstance(values, list) or not values:
            raise SpecError(f"axis {name!r}: give a non-empty list of values")
    base = pathlib.Path(spec.get("_dir", "."))
    names = list(axes)
    points = []
    for i, run in enumerate(runs):
        where = f"run {run.get('name', i)!r}"
        kind = run.get("kind")
        if kind not in KINDS:
            raise SpecError(f"{where}: kind must be one of {', '.join(KINDS)}, not {kind!r}")
        text = ""
        if kind != "python":
            if "source" not in run:
                raise SpecError(f"{where}: a {kind} run needs source = FILE")
            path = base / run["source"]
            try:
                text = path.read_text()
            except OSError as e:
                raise SpecError(f"{where}: cannot read {path}: {e.strerror or e}") from None
            run = {**run, "source": str(path)}
        else:
            if "entry" not in run:
                raise SpecError(f"{where}: a python run needs entry = 'module:function'")
            text = _module_text(run["entry"], where)      # its code is part of its points' keys
        for combo in itertools.product(*(axes[n] for n in names)):
            params = dict(zip(names, combo))
            params.setdefault("options", "")
            machine = _preset(str(params.get("machine", "mncore2")))
            for n, v in params.items():
                if "." in n and n.split(".")[0] in MACHINE_SECTIONS:
                    _override(machine, n, v)
            resolved = _resolve({k: v for k, v in run.items()}, params, where)
            for name, v in resolved.get("args", {}).items():    # .npy inputs: from the spec's folder
                if isinstance(v, str) and v.endswith(".npy"):
                    resolved["args"][name] = str(base / v)
            points.append(Point(resolved, params, machine, text, spec.get("sweep", {}).get("timeout")))
    fingerprint = compiler_fingerprint()
    for p in points:
        # a python run is given every parameter; the others only what their strings name
        used = p.params if p.run["kind"] == "python" else {}
        inputs = [_file_hash(v) for v in p.run.get("args", {}).values() if isinstance(v, str) and v.endswith(".npy")]
        blob = json.dumps([RESULT_VERSION, fingerprint, p.run, used, p.machine, p.source_text, inputs,
                           spec.get("sweep", {}).get("seed", 0)], sort_keys=True, default=str)
        p.key = hashlib.sha256(blob.encode()).hexdigest()[:24]
    return points


# -- one point, in a worker ---------------------------------------------------------------------

_devices: dict = {}


def _device(machine: dict):
    """The emulator device for a machine description, one per description per process."""
    from emulator.machine import machine_from_dict

    from .context import get_device
    key = json.dumps(machine, sort_keys=True)
    if key not in _devices:
        _devices[key] = get_device("emulator", machine_from_dict(machine), new=True)
    return _devices[key]


def _profile_columns(prof) -> dict:
    s = prof.summary()
    row = {"cycles": s["cycles"], "time_s": s["time_s"], "steps": s["steps"], "dram_bytes": s["dram_bytes"],
           "dram_bw_fraction": s["dram_bandwidth_fraction_of_peak"], "flops": s["flops"],
           "flop_rate": s["flop_rate"], "arithmetic_intensity": s["arithmetic_intensity_flop_per_dram_byte"],
           "roofline_fraction": s["roofline"]["fraction_of_attainable"],
           "peak_flop_rate": s["roofline"]["peak_flop_rate_f32_vector"],
           "peak_dram_bytes_per_s": s["roofline"]["dram_bytes_per_s"]}
    row.update({f"bytes.{k}": v for k, v in sorted(s["bytes_by_link"].items())})
    return row


def _agree(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype.kind == "f":
        return bool(np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True))
    return bool(np.array_equal(a, b))


def _run_opencl(p: Point, seed: int) -> dict:
    from .context import get_device
    from .launch import launch
    r = p.run
    args = [f"{k}={v}" for k, v in r.get("args", {}).items()]
    size = lambda k: None if r.get(k) is None else str(r[k])         # global = 64 or "{n}" alike
    common = dict(kernel_name=r.get("kernel"), global_size=size("global"), local_size=size("local"),
                  arg_specs=args, defines=r.get("defines", []), extra_options=r.get("options", p.params["options"]),
                  seed=seed)
    run = launch(p.source_text, r["source"], device=_device(p.machine), **common)
    row = _profile_columns(run.stats)
    if r.get("reference") == "cpu":
        ref = launch(p.source_text, r["source"], device=get_device("cpu"), **common)
        bad = [n for n in run.arrays if not _agree(run.arrays[n], ref.arrays[n])]
        row["passed"] = not bad
        if bad:
            row["error"] = f"differs from the CPU device in {', '.join(bad)}"
    return row


def _run_vsm(p: Point, seed: int) -> dict:
    from emulator import Emulator, assemble
    from emulator.machine import machine_from_dict
    emu = Emulator(machine_from_dict(p.machine))
    emu.time_limit = p.timeout
    args = {k: int(v) for k, v in p.run.get("args", {}).items()}
    return {**_profile_columns(emu.run(assemble(p.source_text, p.run["source"]), args)), "passed": True}


def _run_python(p: Point, seed: int) -> dict:
    """entry = 'module:function', called with the point's parameters and its emulator device; it
    returns a dict of metrics (a 'passed' among them if it checks its result)."""
    module, _, name = p.run["entry"].partition(":")
    fn = getattr(importlib.import_module(module), name)
    out = fn(dict(p.params), _device(p.machine))
    if not isinstance(out, dict):
        raise TypeError(f"{p.run['entry']} returned {type(out).__name__}, not a dict of metrics")
    return out


def _row(p: Point) -> dict:
    """The start of a point's row: which run, its parameters, its key, no error yet."""
    return {"run": p.run.get("name", p.run.get("source", p.run.get("entry"))), "kind": p.run["kind"],
            **p.params, "key": p.key, "error": ""}


def run_point(p: Point, seed: int = 0) -> dict:
    """One point's row: its parameters, its profile, passed / error, wall time.  Never raises for
    the point's own failure (a build error, a fault, a wrong result): that is the row's error."""
    t0 = time.perf_counter()
    row = _row(p)
    saved = os.environ.get("MNCL_EMU_TIME_LIMIT")
    if p.timeout:                # the emulator device's launches read their limit from here
        os.environ["MNCL_EMU_TIME_LIMIT"] = str(p.timeout)
    try:
        row.update({"opencl": _run_opencl, "vsm": _run_vsm, "python": _run_python}[p.run["kind"]](p, seed))
        row.setdefault("passed", None)
    except Exception as e:       # the point's failure is its result; the sweep goes on
        from .launch import LaunchError
        row.update(passed=False, error=e.message if isinstance(e, LaunchError) else f"{type(e).__name__}: {e}")
    finally:
        if p.timeout:
            if saved is None:
                os.environ.pop("MNCL_EMU_TIME_LIMIT", None)
            else:
                os.environ["MNCL_EMU_TIME_LIMIT"] = saved
    row["wall_s"] = time.perf_counter() - t0
    row["status"] = "ok" if not row["error"] else "failed"
    return row


# -- the sweep ---------------------------------------------------------------------------------

def cache_dir() -> pathlib.Path:
    import platformdirs
    return pathlib.Path(os.environ.get("MNCL_SWEEP_CACHE") or
                        pathlib.Path(platformdirs.user_cache_dir("mncl")) / "sweeps")


def _load(where: pathlib.Path, key: str):
    try:
        return json.loads((where / f"{key}.json").read_text())
    except (OSError, ValueError):
        return None


def _store(where: pathlib.Path, row: dict) -> None:
    where.mkdir(parents=True, exist_ok=True)
    tmp = where / f".{row['key']}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(row, default=float))
    tmp.replace(where / f"{row['key']}.json")


# Dask starts workers with MALLOC_TRIM_THRESHOLD_=65536, so glibc hands freed memory back to the
# system at once: the emulator's numpy temporaries are then mapped and faulted in afresh on every
# step, and a point took 2-2.5x as long (benchmarks/sweep.py).  Dask's statistical profiler samples
# the worker thread's stack every 10 ms: the emulator's deep stacks made points slower too (0.46
# against 0.40 s in one measurement).
WORKER_CONFIG = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
                 "distributed.worker.profile.enabled": False}


def local_cluster(workers: int):
    """A LocalCluster of single-threaded worker processes configured for emulation (above).  Each
    nanny keeps its own copy of the configuration: the copy Dask takes shares its nested tables
    with the global one, so leaving ``dask.config.set`` would give a worker the nanny restarts
    (after a crash) the profiler back."""
    import dask
    from dask.distributed import LocalCluster
    with dask.config.set(WORKER_CONFIG):
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0")
        for nanny in cluster.workers.values():       # (the nanny's and its worker process's copies)
            nanny.config = copy.deepcopy(nanny.config)
            if getattr(nanny, "process", None) is not None:
                nanny.process.config = copy.deepcopy(nanny.process.config)
    return cluster


@dataclass
class SweepResult:
    """The rows in point order, and what the sweep did: emulations computed and taken from the
    cache (points that differ only in an axis their run does not use are one emulation)."""
    rows: list
    computed: int
    cached: int
    axes: list
    dashboard: str | None = None

    def frame(self):
        import pandas as pd
        return pd.DataFrame(self.rows)


def sweep(spec, scheduler: str | None = None, workers: int | None = None, cache: bool = True,
          where=None, progress=None, client=None, announce=None) -> SweepResult:
    """Run every point of ``spec`` (a dict from load_spec, or a path) not in the cache.

    ``scheduler``: an existing Dask scheduler's address; else a LocalCluster of ``workers``
    processes (default: the machine's cores) made for this sweep; ``workers=0`` runs in this
    process without Dask.  ``client``: an existing dask.distributed Client instead.
    ``progress``: a callable(done, total) (the command line's bar); ``announce``: a callable given
    the Dask dashboard's address once the cluster is up."""
    if not isinstance(spec, dict):
        spec = load_spec(spec)
    points = expand(spec)
    seed = spec.get("sweep", {}).get("seed", 0)
    store = pathlib.Path(where) if where is not None else cache_dir()
    rows = {p.key: _load(store, p.key) for p in points} if cache else {}
    todo = list({p.key: p for p in points if rows.get(p.key) is None}.values())
    cached = len({p.key for p in points}) - len(todo)
    done = 0

    def finish(row):
        nonlocal done
        rows[row["key"]] = row
        if cache and row["status"] in ("ok", "failed"):
            _store(store, row)
        done += 1
        if progress:
            progress(done + cached, len(points))

    dashboard = None
    if todo and workers == 0 and client is None and scheduler is None:
        for p in todo:
            finish(run_point(p, seed))
    elif todo:
        from dask.distributed import Client, as_completed
        own = client is None
        cluster = None
        if own and scheduler is None:
            cluster = local_cluster(workers or os.cpu_count() or 1)
        client = client or Client(scheduler or cluster)
        dashboard = client.dashboard_link
        if announce:
            announce(dashboard)
        try:
            futures = {client.submit(run_point, p, seed, key=f"mncl-point-{p.key}", pure=False): p for p in todo}
            for fut in as_completed(futures):
                p = futures[fut]
                try:
                    finish(fut.result())
                except Exception as e:      # the task itself was lost (its workers died too often)
                    finish({**_row(p), "passed": False, "error": f"{type(e).__name__}: {e}", "wall_s": None,
                            "status": "lost"})
        finally:
            if own:
                client.close()
                if cluster is not None:
                    cluster.close()
    # points that differ only in axes a run does not use share a key, a row and its computation
    return SweepResult([{**rows[p.key], **p.params} for p in points], len(todo), cached, list(spec.get("axes", {})), dashboard)


def write(result: SweepResult, path) -> None:
    """The rows as Parquet (.parquet) or CSV (.csv)."""
    path = str(path)
    df = result.frame()
    if path.endswith(".parquet"):
        df.to_parquet(path, index=False)
    elif path.endswith(".csv"):
        df.to_csv(path, index=False)
    else:
        raise SpecError(f"-o {path}: write a .parquet or .csv file")


def plot(result: SweepResult, path, metric: str = "cycles", axis: str | None = None) -> None:
    """The standard pictures, side by side: every point on the fp32 vector roofline, and a metric
    against an axis (default: the first axis with more than one value), a line per run."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    df = result.frame()
    ok = df[df["status"] == "ok"] if "status" in df else df
    fig, (roof, line) = plt.subplots(1, 2, figsize=(12, 4.5))
    if "arithmetic_intensity" in ok and len(ok):
        pts = ok.dropna(subset=["arithmetic_intensity"])
        ai = np.logspace(-3, 3, 128)
        for (peak, bw), _ in pts.groupby(["peak_flop_rate", "peak_dram_bytes_per_s"]):
            roof.plot(ai, np.minimum(peak, ai * bw) / 1e9, color="0.6", lw=1)
        for name, g in pts.groupby("run"):
            roof.scatter(g["arithmetic_intensity"], g["flop_rate"] / 1e9, s=18, label=str(name))
        roof.legend()
    roof.set(xscale="log", yscale="log", xlabel="FLOP per DRAM byte", ylabel="GFLOP/s", title="roofline")
    varying = [a for a in result.axes if df[a].nunique() > 1]
    axis = axis or (varying[0] if varying else None)
    if axis is not None and metric in ok:
        others = [a for a in varying if a != axis]
        for name, g in ok.groupby(["run", *others]):
            g = g.sort_values(axis)
            label = ", ".join(str(v) if i == 0 else f"{others[i - 1]}={v}" for i, v in enumerate(name))
            line.plot(g[axis].astype(str), g[metric], marker="o", label=label)
        line.set(xlabel=axis, ylabel=metric, title=f"{metric} against {axis}")
        line.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
