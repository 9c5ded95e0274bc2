"""The machine description: one data object every layer reads.

The tree fan-outs, memory sizes, clock, link figures and MAU rates of an
MN-Core-style board, loaded from TOML.  Two presets ship with the package
(``mncore2`` with the public figures, ``tiny`` with a few MABs for fast
tests); any other machine is a TOML file of the same shape.  Nothing else in
the SDK may assume 4096 PEs: it asks this object.
"""
from __future__ import annotations

import copy

import dataclasses
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

from .errors import MachineError
from .inputs import InputError, read_input

PRESETS = ("mncore2", "tiny", "inference")


@dataclass(frozen=True)
class Link:
    """A transfer path: bandwidth in bytes per cycle and a fixed latency in cycles."""

    bytes_per_cycle: float
    latency: int

    def cycles(self, nbytes: int) -> float:
        return self.latency + nbytes / self.bytes_per_cycle


@dataclass(frozen=True)
class Machine:
    name: str
    groups: int
    l2b_per_group: int
    l1b_per_l2b: int
    mab_per_l1b: int
    pe_per_mab: int
    lm_words: int
    grf_words: int
    l1bm_longs: int
    l2bm_longs: int
    dram_longs: int
    pdm_longs: int
    cycles_per_step: int
    clock_hz: float
    mv_issue_interval_steps: int
    links: dict = field(default_factory=dict)
    mau_vector: dict = field(default_factory=dict)
    mau_matrix: dict = field(default_factory=dict)

    # -- derived counts ---------------------------------------------------
    @property
    def n_l2b(self) -> int:
        return self.groups * self.l2b_per_group

    @property
    def n_l1b(self) -> int:
        return self.n_l2b * self.l1b_per_l2b

    @property
    def n_mab(self) -> int:
        return self.n_l1b * self.mab_per_l1b

    @property
    def n_pe(self) -> int:
        return self.n_mab * self.pe_per_mab

    @property
    def pe_per_l1b(self) -> int:
        return self.mab_per_l1b * self.pe_per_mab

    def link(self, name: str) -> Link:
        return self.links[name]

    # -- peaks, for the roofline ---------------------------------------------
    def peak_flops(self, precision: str = "d", mode: str = "matrix") -> float:
        """FLOP/s of the whole board: 2 FLOP per FMA x FMAs per MAB per cycle x MABs x clock."""
        rate = (self.mau_matrix if mode == "matrix" else self.mau_vector)[precision]
        return 2.0 * rate * self.n_mab * self.clock_hz

    def peak_dram_bytes_per_s(self) -> float:
        return self.links["dram_l2bm"].bytes_per_cycle * self.groups * self.clock_hz

    # -- locations --------------------------------------------------------
    def pe_location(self, pe: int) -> str:
        """``n<group>c<l2b>b<l1b>m<mab>p<pe>`` of a flat PE index, as fault messages print it."""
        pe, p = divmod(pe, self.pe_per_mab)
        pe, m = divmod(pe, self.mab_per_l1b)
        pe, b = divmod(pe, self.l1b_per_l2b)
        n, c = divmod(pe, self.l2b_per_group)
        return f"n{n}c{c}b{b}m{m}p{p}"

    def replace(self, **changes) -> "Machine":
        return dataclasses.replace(self, **changes)


def _from_dict(d: dict, where: str) -> Machine:
    try:
        tree, mem, timing = d["tree"], d["memory"], d["timing"]
        links = {k: Link(float(v["bytes_per_cycle"]), int(v["latency"])) for k, v in d["links"].items()}
        m = Machine(
            name=str(d.get("name", Path(where).stem)),
            groups=int(tree["groups"]),
            l2b_per_group=int(tree["l2b_per_group"]),
            l1b_per_l2b=int(tree["l1b_per_l2b"]),
            mab_per_l1b=int(tree["mab_per_l1b"]),
            pe_per_mab=int(tree["pe_per_mab"]),
            lm_words=int(mem["lm_words"]),
            grf_words=int(mem["grf_words"]),
            l1bm_longs=int(mem["l1bm_longs"]),
            l2bm_longs=int(mem["l2bm_longs"]),
            dram_longs=int(mem["dram_longs"]),
            pdm_longs=int(mem["pdm_longs"]),
            cycles_per_step=int(timing["cycles_per_step"]),
            clock_hz=float(timing["clock_hz"]),
            mv_issue_interval_steps=int(timing["mv_issue_interval_steps"]),
            links=links,
            mau_vector={k: int(v) for k, v in d["mau"]["vector"].items()},
            mau_matrix={k: int(v) for k, v in d["mau"]["matrix"].items()},
        )
    except KeyError as e:
        raise MachineError(f"{where}: missing machine field {e.args[0]!r}") from None
    except (TypeError, ValueError) as e:
        raise MachineError(f"{where}: bad machine field: {e}") from None
    _validate(m, where)
    return m


_REQUIRED_LINKS = ("dram_l2bm", "pdm_l2bm", "group_bus", "l2bm_l1bm", "l1bm_pe", "tree_reduce")


def _validate(m: Machine, where: str) -> None:
    if m.pe_per_mab != 4:
        raise MachineError(f"{where}: pe_per_mab must be 4 (the ISA's MAB operations span 4 PEs), got {m.pe_per_mab}")
    if m.cycles_per_step != 4:
        raise MachineError(f"{where}: cycles_per_step must be 4 (operands name 4 cycles), got {m.cycles_per_step}")
    for f in ("groups", "l2b_per_group", "l1b_per_l2b", "mab_per_l1b", "lm_words", "grf_words",
              "l1bm_longs", "l2bm_longs", "dram_longs", "pdm_longs"):
        if getattr(m, f) <= 0:
            raise MachineError(f"{where}: {f} must be positive, got {getattr(m, f)}")
    if m.lm_words % 4 or m.grf_words % 4:
        raise MachineError(f"{where}: lm_words and grf_words must be multiples of 4")
    for name in _REQUIRED_LINKS:
        if name not in m.links:
            raise MachineError(f"{where}: missing link [links.{name}]")
        if m.links[name].bytes_per_cycle <= 0:
            raise MachineError(f"{where}: link {name} needs a positive bytes_per_cycle")
    if m.clock_hz <= 0:
        raise MachineError(f"{where}: clock_hz must be positive")
    for mode, table, precs in (("vector", m.mau_vector, "dfh"), ("matrix", m.mau_matrix, "dfgh")):
        missing = [p for p in precs if table.get(p, 0) <= 0]   # the profile's FLOPs read these rates
        if missing:
            raise MachineError(f"{where}: [mau] {mode} needs a positive FMA rate for {', '.join(missing)}")


def machine_description(spec: "str | Path") -> tuple:
    """(the description as a dict, where it came from) of a preset name or a TOML file: what
    load_machine builds a Machine from, and what sweeps change field by field (mncl/sweep.py)."""
    spec = str(spec)
    if spec in PRESETS:
        text = resources.files("emulator").joinpath(f"presets/{spec}.toml").read_text()
        where = f"preset {spec}"
    else:
        path = Path(spec)
        if not path.is_file():
            raise MachineError(f"unknown machine {spec!r}: not a preset ({', '.join(PRESETS)}) nor a TOML file")
        try:
            text, where = read_input(path, 1 << 20, "a machine description").decode("utf-8"), str(path)
        except (InputError, UnicodeDecodeError) as e:
            raise MachineError(f"{spec}: {e}" if isinstance(e, UnicodeDecodeError) else str(e)) from None
    try:
        return tomllib.loads(text), where
    except tomllib.TOMLDecodeError as e:
        raise MachineError(f"{where}: not valid TOML: {e}") from None


def machine_from_dict(data: dict) -> Machine:
    """A Machine from a description dict (machine_description's, changed or not); the dict is left
    as it is."""
    return _from_dict(copy.deepcopy(data), str(data.get("name", "a machine description")))


def load_machine(spec: "str | Path | Machine" = "mncore2") -> Machine:
    """A preset name (``mncore2``, ``tiny``), a TOML file path, or a Machine (returned as is)."""
    if isinstance(spec, Machine):
        return spec
    return _from_dict(*machine_description(spec))
