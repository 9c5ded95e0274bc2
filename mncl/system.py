"""Systems of several chips: each chip an emulator device living in its own Dask worker, holding its
own DRAM, and collectives between chips that move real data from worker to worker, costed by a
link model.

A system description (TOML; docs/scale-out.md)::

    [system]
    chips = 4
    machine = "mncore2"             # each chip's machine: a preset or a machine TOML file
    topology = "ring"               # ring | all-to-all

    [link]                          # one direction of one chip-to-chip link
    bytes_per_second = 50e9
    latency_s = 2e-6

Why workers: a model bigger than one host's memory (a Llama-2-70B in 16-bit weights is 140 GB)
only fits when each chip's weights live on their own host, and chips emulate in parallel.  The
coordinator holds no chip data; it asks chips to run functions (``System.map``) and to exchange
parts of named arrays (the collectives).  A collective's data goes from one chip's worker to the
other's directly (a Dask actor calling another), and each chip runs its own steps of it: the
coordinator makes one call per chip and collective.

Costs (bytes B of the array on each chip, N chips, link bandwidth b, latency a), the classic
algorithms, every link of the topology busy in parallel:

* ring: reduce-scatter and all-gather take N - 1 steps of B/N bytes per chip: (N - 1)(a + B/(N b));
  all-reduce is both: 2(N - 1)(a + B/(N b)); broadcast pipelines B in N - 1 hops of N chunks:
  (N - 1 + N - 1)(a + B/(N b)).
* all-to-all: reduce-scatter and all-gather are one step of N - 1 simultaneous sends of B/N:
  a + B/(N b); all-reduce 2(a + B/(N b)); broadcast a + B/b.

Each collective's record (bytes sent per chip and in all, steps, modeled seconds) is in
``System.collectives``.  Additions happen in a fixed order (a ring's order, or chip order), so a
run's results are the same every time.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TOPOLOGIES = ("ring", "all-to-all")


class SystemSpecError(ValueError):
    """A system description that cannot be built: the message names the key."""


@dataclass
class Link:
    bytes_per_second: float
    latency_s: float

    def step(self, nbytes: float) -> float:
        return self.latency_s + nbytes / self.bytes_per_second


@dataclass
class Collective:
    """What one collective moved and what it costs in the link model."""
    kind: str
    name: str
    array_bytes: int            # B: the array's size on each chip
    bytes_per_chip: int         # sent by each chip
    total_bytes: int            # over all links
    steps: int
    modeled_s: float


def load_system(spec) -> dict:
    """A system description from a TOML file path or a dict, checked."""
    import tomllib
    if not isinstance(spec, dict):
        try:
            with open(spec, "rb") as f:
                spec = tomllib.load(f)
        except OSError as e:
            raise SystemSpecError(f"cannot read {spec}: {e.strerror or e}") from None
        except tomllib.TOMLDecodeError as e:
            raise SystemSpecError(f"{spec}: not valid TOML: {e}") from None
    s = spec.get("system", {})
    chips = s.get("chips")
    if not isinstance(chips, int) or chips < 1:
        raise SystemSpecError(f"system.chips must be a positive integer, not {chips!r}")
    if s.get("topology", "ring") not in TOPOLOGIES:
        raise SystemSpecError(f"system.topology must be one of {', '.join(TOPOLOGIES)}, not {s.get('topology')!r}")
    link = spec.get("link", {})
    for k in ("bytes_per_second", "latency_s"):
        v = link.get(k)
        if not isinstance(v, (int, float)) or v < 0 or (k == "bytes_per_second" and v <= 0):
            raise SystemSpecError(f"link.{k} must be a {'positive' if k == 'bytes_per_second' else 'non-negative'} "
                               f"number, not {v!r}")
    return {"system": {"chips": chips, "machine": s.get("machine", "mncore2"),
                       "topology": s.get("topology", "ring"), "name": s.get("name", f"{chips} chips")},
            "link": {"bytes_per_second": float(link["bytes_per_second"]), "latency_s": float(link["latency_s"])}}


def _machine_dict(name: str) -> dict:
    from emulator.errors import MachineError
    from emulator.machine import machine_description
    try:
        return machine_description(name)[0]
    except MachineError as e:
        raise SystemSpecError(f"system.machine: {e}") from None


class ChipError(RuntimeError):
    """A chip function's failure, as text (picklable whatever the original exception was)."""


class Chip:
    """One chip, as a Dask actor in its worker: an emulator device of its own, a context and a
    queue, named host-side arrays (what its kernels read and write), and what setup functions
    keep in ``state``."""

    def __init__(self, index: int, machine: dict):
        from emulator.machine import machine_from_dict

        from . import CommandQueue, Context
        from .context import get_device
        self.index = index
        self.device = get_device("emulator", machine_from_dict(machine), new=True)
        self.ctx = Context([self.device])
        self.queue = CommandQueue(self.ctx)
        self.arrays: dict = {}
        self.state: dict = {}
        self.inbox: dict = {}
        self._events: dict = {}

    def call(self, fn, *args, **kwargs):
        """fn(chip, *args, **kwargs) in this chip's worker; its result comes back.  An exception
        comes back as a ChipError with its type, message and traceback: not every exception class
        can be rebuilt on the other side (one whose __init__ takes other arguments fails to
        unpickle, and the caller would wait for ever)."""
        try:
            return fn(self, *args, **kwargs)
        except Exception as e:
            import traceback
            raise ChipError(f"chip {self.index}: {type(e).__name__}: {e}\n{traceback.format_exc()}") from None

    def put(self, name: str, array) -> None:
        self.arrays[name] = np.array(array)

    def get(self, name: str):
        return self.arrays[name]

    async def receive(self, name: str, step: int, sender: int, lo: int, data) -> None:
        """A peer's part of array ``name`` (from element lo) for a step of a collective."""
        self.inbox[name, step, sender, lo] = data
        self._arrived(name, step, sender, lo).set()

    def _arrived(self, name, step, sender, lo):
        import asyncio
        return self._events.setdefault((name, step, sender, lo), asyncio.Event())

    async def exchange(self, peers: list, name: str, plan: list) -> int:
        """This chip's part of a collective, step by step: send its parts to their receivers
        (worker to worker), wait for the parts it receives, combine them in the order given
        (added or copied).  One call per chip and collective: the coordinator only starts them.
        plan: per step (op, [(receiver, lo, hi)], [(senders in order, lo, hi)]).  Returns the
        bytes this chip sent."""
        sent = 0
        for step, (op, sends, combines) in enumerate(plan):
            for r, lo, hi in sends:
                data = np.ascontiguousarray(self.arrays[name][lo:hi])
                await peers[r].receive(name, step, self.index, lo, data)
                sent += data.nbytes
            for senders, lo, hi in combines:
                part = self.arrays[name][lo:hi]
                for snd in senders:
                    await self._arrived(name, step, snd, lo).wait()
                    del self._events[name, step, snd, lo]
                    data = self.inbox.pop((name, step, snd, lo))
                    if op == "add":
                        part += data
                    else:
                        part[...] = data
        return sent


class System:
    """N chips on a Dask cluster (a LocalCluster of N single-threaded workers by default, or
    ``client``'s), one chip per worker while there are workers enough."""

    def __init__(self, spec, client=None):
        from dask.distributed import Client
        self.spec = load_system(spec)
        s = self.spec["system"]
        self.n, self.topology = s["chips"], s["topology"]
        self.link = Link(**self.spec["link"])
        self.machine = _machine_dict(s["machine"])
        self._own = client is None
        if self._own:
            from .sweep import local_cluster
            self._cluster = local_cluster(self.n)
            client = Client(self._cluster)
        self.client = client
        workers = list(client.scheduler_info()["workers"])
        self.chips = [client.submit(Chip, i, self.machine, actor=True, workers=[workers[i % len(workers)]],
                                    pure=False).result() for i in range(self.n)]
        self.collectives: list[Collective] = []

    def close(self) -> None:
        if self._own:
            self.client.close()
            self._cluster.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- work on every chip ----------------------------------------------------------------------
    def map(self, fn, per_chip_args=None, *args, **kwargs) -> list:
        """fn(chip, *per_chip_args[i], *args, **kwargs) on every chip i at once; the results in chip
        order (a chip's failure is raised here as a ChipError naming the chip)."""
        futures = [c.call(fn, *((per_chip_args[i] if per_chip_args else ()) + args), **kwargs)
                   for i, c in enumerate(self.chips)]
        return [f.result() for f in futures]

    def put(self, name: str, arrays: list) -> None:
        for c, a in zip(self.chips, arrays):
            c.put(name, a).result()

    def get(self, name: str) -> list:
        return [f.result() for f in [c.get(name) for c in self.chips]]

    # -- collectives -----------------------------------------------------------------------------
    def part(self, i: int, size: int) -> tuple:
        """The elements (lo, hi) of a size-element array that chip i owns in a reduce-scatter or
        contributes to an all-gather."""
        edges = np.linspace(0, size, self.n + 1).astype(int)
        return int(edges[i]), int(edges[i + 1])

    def _scatter_steps(self, size: int) -> list:
        """Reduce-scatter: lists of simultaneous (sender, receiver, lo, hi); chip i ends with part i."""
        n, part = self.n, lambda c: self.part(c % self.n, size)
        if self.topology == "ring":          # step s: chip i passes its running sum of part i - 1 - s on
            return [[(i, (i + 1) % n, *part(i - 1 - s)) for i in range(n)] for s in range(n - 1)]
        return [[(i, j, *part(j)) for i in range(n) for j in range(n) if i != j]] if n > 1 else []

    def _gather_steps(self, size: int) -> list:
        """All-gather of the parts chip i owns."""
        n, part = self.n, lambda c: self.part(c % self.n, size)
        if self.topology == "ring":          # step s: chip i forwards part i - s
            return [[(i, (i + 1) % n, *part(i - s)) for i in range(n)] for s in range(n - 1)]
        return [[(j, i, *part(j)) for i in range(n) for j in range(n) if i != j]] if n > 1 else []

    def _broadcast_steps(self, size: int, root: int) -> list:
        n = self.n
        if self.topology == "ring":          # pipelined: part c leaves the root at step c, one hop a step
            return [[((root + t - c) % n, (root + t - c + 1) % n, *self.part(c, size))
                     for c in range(n) if 0 <= t - c < n - 1] for t in range(2 * (n - 1))]
        return [[(root, i, 0, size) for i in range(n) if i != root]] if n > 1 else []

    def _collective(self, kind: str, name: str, phases: list) -> Collective:
        """Run the steps of phases [(op, steps of size)]: each step's moves (sender, receiver, lo,
        hi) happen at once; a receiver combines what a step brought in a fixed order (its ring
        predecessors nearest first), so the same inputs give the same bits."""
        size, array_bytes = self.chips[0].call(_shape_bytes, name).result()
        plans = [[] for _ in range(self.n)]
        for op, make in phases:
            for moves in make(size):
                for plan in plans:
                    plan.append((op, [], []))
                senders: dict = {}
                for snd, r, lo, hi in moves:
                    plans[snd][-1][1].append((r, lo, hi))
                    senders.setdefault((r, lo, hi), []).append(snd)
                for (r, lo, hi), ss in senders.items():
                    plans[r][-1][2].append((sorted(ss, key=lambda x: (r - x) % self.n), lo, hi))
        runs = [c.exchange(self.chips, name, plan) for c, plan in zip(self.chips, plans)]
        total = sum(f.result() for f in runs)
        steps = len(plans[0])
        rec = Collective(kind, name, array_bytes, total // self.n, total, steps, self.modeled(kind, array_bytes))
        self.collectives.append(rec)
        return rec

    def all_reduce(self, name: str) -> Collective:
        """Every chip's 1-D array ``name`` becomes the sum over the chips."""
        return self._collective("all-reduce", name, [("add", self._scatter_steps), ("set", self._gather_steps)])

    def reduce_scatter(self, name: str) -> Collective:
        """Chip i's part i of ``name`` (``part(i, size)``) becomes the sum over the chips; the rest
        of each chip's array is left as partial sums."""
        return self._collective("reduce-scatter", name, [("add", self._scatter_steps)])

    def all_gather(self, name: str) -> Collective:
        """Every chip's ``name`` gets part j from chip j."""
        return self._collective("all-gather", name, [("set", self._gather_steps)])

    def broadcast(self, name: str, root: int = 0) -> Collective:
        """Every chip's ``name`` becomes chip ``root``'s."""
        return self._collective("broadcast", name, [("set", lambda size: self._broadcast_steps(size, root))])

    def modeled(self, kind: str, nbytes: int) -> float:
        """The link model's seconds for a collective of an nbytes array (the module docstring)."""
        n, ring = self.n, self.topology == "ring"
        if n == 1:
            return 0.0
        steps = {"all-reduce": 2 * (n - 1) if ring else 2, "reduce-scatter": n - 1 if ring else 1,
                 "all-gather": n - 1 if ring else 1, "broadcast": 2 * (n - 1) if ring else 1}[kind]
        return steps * self.link.step(nbytes if kind == "broadcast" and not ring else nbytes / n)


def _shape_bytes(chip, name):
    a = chip.arrays[name]
    if a.ndim != 1:
        raise ValueError(f"collectives work on 1-D arrays; '{name}' has shape {a.shape}")
    return a.size, a.nbytes

