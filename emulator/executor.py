"""The executor: runs a Program on the machine state, step by step.

The sequencer walks the control program (loops, branches, register
arithmetic) and calls blocks with address offsets; each statement of a
block is then executed for all PEs at once.  A step reads its operands,
computes every expression (semantics.py, transfers.py), and commits all
writes at its end, so expressions of one step see the state before it.
Forwarding paths take the step's unit results unless the step is a nop or
says ``noforward``.

The executor is also the ``ctx`` the semantics functions see: operand
reading (with offsets, bounds and T-indirect addressing) and masked writes.
What it does not need for the results -- the cycle model, the profile
counters, the strict checks -- observes it through the hooks of
observers.py: it calls them per step, per operand access and per transfer.
"""
from __future__ import annotations

import contextlib
import gc
import itertools
import threading
import time

import numpy as np

from . import isa, native
from .checks import StrictChecks, TagCheck, pfn_report
from .cycles import CycleModel
from .dump import format_get
from .errors import EmuFault, EmulatorError
from .isa import DebugStmt, MVStmt, Step
from .machine import Machine, load_machine
from .numbers import WIDTH, pack
from .observers import Footprint, Hooks, Transfer
from .plan import MASK_LETTER, StepPlan, every_cycle
from .profile import Counters, Profile
from .program import SEQ_MAX, SEQ_MIN, AnyLoop, Fault, If, IfAny, Loop, Program, Run, SetReg
from .state import MEM_NAME, State
from .transfers import mv_jobs

U64 = np.uint64
WL = {"w": 1, "l": 2, "ll": 4}
CHECK_EVERY = 256         # PE steps + sequencer loop iterations between two checks of the time limit

_runs_frozen = 0          # runs inside heap_frozen, in all threads
_freeze_lock = threading.Lock()


@contextlib.contextmanager
def heap_frozen():
    """The objects alive when a run starts (the program and its step plans, the compiler's modules
    and caches: 10^5 to 10^6 of them) kept out of the garbage collector's sight until the last run
    ends.  A run makes enough objects to set off full collections, and each one walked that whole
    heap: 30-120 ms apiece, a third of a matrix-vector run.  Young objects are still collected;
    what was frozen and died meanwhile is collected after."""
    global _runs_frozen
    with _freeze_lock:
        if _runs_frozen == 0:
            gc.freeze()
        _runs_frozen += 1
    try:
        yield
    finally:
        with _freeze_lock:
            _runs_frozen -= 1
            if _runs_frozen == 0:
                gc.unfreeze()


def _nibble_lut(quarter_bits: int, quarters: tuple) -> np.ndarray:
    """nibble -> bitmask: bit q of the nibble (3 = MSB) enables quarter `quarters[3-q]`'s bits."""
    lut = np.zeros(16, dtype=U64)
    for n in range(16):
        v = 0
        for pos, q in enumerate(quarters):
            if n >> (3 - pos) & 1 and q is not None:
                v |= ((1 << quarter_bits) - 1) << (quarter_bits * q)
        lut[n] = v
    return lut


# write-mask bit j covers a quarter of the written unit (see docs/isa.md, "Masks")
LUT_L = _nibble_lut(16, (3, 2, 1, 0))                  # long word: 16-bit quarters, MSB first
LUT_LL0 = _nibble_lut(32, (1, 0, None, None))          # first long of ll: bits 3, 2
LUT_LL1 = _nibble_lut(32, (None, None, 1, 0))          # second long of ll: bits 1, 0
LUT_W = _nibble_lut(16, (1, 0, None, None))            # word: the long's upper half, bits 3, 2
_LUT_BITS = {id(LUT_L): 0xF, id(LUT_LL0): 0xC, id(LUT_LL1): 0x3, id(LUT_W): 0xC}   # the nibble bits each reads
_LUT_AS = {}


def _lut_as(lut, dt):
    """lut in dtype dt (its values fit), made once."""
    key = (id(lut), dt)
    if key not in _LUT_AS:
        _LUT_AS[key] = lut.astype(dt)
    return _LUT_AS[key]


PARTIAL = "partial"         # Emulator._keep: a mask that keeps some bits and not others, not built
_TOKENS = itertools.count()
_NO_READERS: dict = {}
PLANS_PER_STEP = 64       # binding step plans per step (emulator, PE-memory offsets); past them, one that binds nothing


# the cycles a fixed write-mask pattern lets write; flag entries may write any cycle
_FIXED_CYCLES = {k: isa.fixed_mask_cycles(k) for k in range(isa.FIXED_MASK_BASE, isa.MASK_ENTRIES)}
_KEPT_CYCLES = {k: tuple(c for c in range(4) if on[c]) for k, on in _FIXED_CYCLES.items()}


_cycle_uniform = isa.cycle_uniform     # (a module name of its own: tests/test_fast_paths.py patches it)


def _strided(rows: np.ndarray):
    """The 4 cycles' row numbers as a slice when they step up evenly (basic indexing), else None."""
    r = rows.tolist()              # four Python ints: cheaper than numpy on a (4,) array
    d = r[1] - r[0]
    if d > 0 and all(b - a == d for a, b in zip(r[1:], r[2:])):
        return slice(r[0], r[0] + 4 * d, d)
    return None


def _nd(x) -> int:
    """np.ndim(x) for an index (a slice, an int or an array), without numpy's call."""
    return x.ndim if isinstance(x, np.ndarray) else 0


def _gather(m, at):
    """m[at] for _target's (array, index): a T-indirect access (one index array into the flat view)
    by ndarray.take, the same elements about a quarter faster than indexing."""
    return m.take(at[0]) if m.ndim == 1 else m[at]


def _flat(v):
    """A value as (cycle, P): a broadcast kept as a view (transfers._down) becomes one here."""
    return v.reshape(v.shape[0], -1) if v is not None and v.ndim > 2 else v


def _spans_at(spans):
    """x -> the spans (..., lo, hi) with lo and hi moved by x: a statement's transfers have one or two
    spans of each kind, so the usual cases build their tuple without a generator."""
    if not spans:
        return lambda x: ()
    if len(spans) == 1:
        *head, lo, hi = spans[0]
        head = tuple(head)
        return lambda x: (head + (x + lo, x + hi),)
    return lambda x: tuple((*h, x + lo, x + hi) for *h, lo, hi in spans)


def _transfer_maker(job, e, st):
    """(a, b) -> the Transfer record of an MV job called with source address a, destination b (what
    does not depend on them worked out once per statement)."""
    reads, writes, lc_out = _spans_at(job.reads), _spans_at(job.writes), _spans_at(job.lc_out)
    lc_in, lc_fresh = _spans_at(job.lc_in), _spans_at(job.lc_fresh)
    kind, tag, links, nbytes, lanes, units = job.kind, e.tag, job.links, e.size * 8, job.lanes, job.units

    def make(a, b):
        r, w, lw = reads(a), writes(b), lc_out(b)
        return Transfer(kind, tag, links, nbytes, st.line, st.text, lanes, r, w, w + r, units, lw,
                        lw + lc_in(a), lc_fresh(a))
    return make


_NO_OFFSETS: dict = {}          # a call's offsets when it names none (never written)


class _Same:
    """A uniform operand whose 4 cycles name one long word (auto-stride 0)."""

    step = 0

    def __init__(self, start: int):
        self.start = start


class Emulator:
    """An MN-Core-style machine: storage and a program runner, observed by its analyses.

    Out-of-range addresses fault; ``wrap=True`` makes them wrap as the hardware
    does instead.  The analyses are observers (observers.py): ``counters``
    (profile.py), ``cycle_model`` (cycles.py) and ``checks`` (checks.py: strict,
    the default, faults on hazards, races with in-flight transfers and waits on
    unknown tags; ``strict=False`` on unknown waits only).  ``pfn=True`` runs
    programs written for PFN's emulator, which enforces no hazard: what strict
    mode faults on is counted instead (``breaches``, ``pfn_report()``).  More
    observers: ``observers=[...]`` or ``subscribe``; ``unsubscribe`` removes one.
    """

    def __init__(self, machine: "str | Machine" = "mncore2", strict: bool = True, wrap: bool = False,
                 dump=None, max_steps: int | None = None, pfn: bool = False, observers=()):
        self.m = load_machine(machine)
        self.strict, self.wrap, self.max_steps = strict or pfn, wrap, max_steps
        self.pfn = pfn
        self.counters = Counters(self.m)
        self.cycle_model = CycleModel(self.m)
        self.checks = StrictChecks(pfn) if self.strict else TagCheck(pfn)
        self.observers: list = []
        for o in (self.checks, self.counters, self.cycle_model, *observers):
            self.subscribe(o)
        self.steps = 0                    # PE steps of this run
        self.in_flight: list[Transfer] = []   # transfers issued and not yet retired by a wait
        self.time_limit = None            # seconds of wall time per run (None: no limit)
        self.deadline = None
        self.stop_check = None            # a callable: True stops the run (a cancelled launch)
        self.progress = None              # a callable(emu) at each limit check (progress.Progress)
        self.seq_iters = 0                # sequencer loop iterations of this run (they count as steps)
        self._step_limit = 0              # check again when steps reaches this (see _check_limits)
        self.state = State(self.m)
        self.dump = dump if dump is not None else []
        self._zeros = np.zeros((4, self.m.n_pe), dtype=U64)
        self._one = False          # the expression being run is cycle-uniform (_cycle_uniform)
        self._fixed_cache: dict = {}
        self._scratch: dict = {}          # scratch(): temporaries reused from step to step
        self._keep_cache: dict = {}
        self._cols = np.arange(self.m.n_pe)[None, :]
        self._cols_w = 2 * self._cols + 1       # _target: a word's flat index, less (a - h) * P - h
        self._sizes = {"lb": self.m.l1bm_longs, "lc": self.m.l2bm_longs, "lbi": self.state.lbi.shape[1],
                       "d": self.m.dram_longs, "p": self.m.pdm_longs}
        self._sizes.update(self.state.words)
        st = self.state
        self._owners = {id(a) for a in list(st.mem.values()) + [st.t, st.l1bm, st.lbi, st.l2bm, st.matrix]}
        self._token = next(_TOKENS)
        self._plan_key = (self._token, 0, 0, 0, 0, False, False)
        self._readers = _NO_READERS      # the running step's bound readers (plan.py)
        self._views_ok = False           # the running expression's result may stay a broadcast view
        self.bar = {"m": None, "n": None}   # LM0/LM1 base-address registers ($lmb, $lnb): (P,) words, None = 0
        self._fwd_live: dict = {}        # forwarding name -> (space, lo, hi): its value views those PE-memory rows
        self._omr_writes = 0             # mask-entry writes by steps (_keep's per-step memo)
        self._nib_memo = (-1, -1, -1, b"")
        self._runs = 0                   # runs begun (_keep's stamp: the host may write mask entries between)
        self._keep_stamp: dict = {}
        self._fused_few: dict = {}       # plan._fused_few: (entry, layout) -> (stamp, masks, fused stores)

    # -- observers ---------------------------------------------------------------------------
    def subscribe(self, observer) -> None:
        """Add an analysis (an observers.Observer); its hooks are called from the next event on."""
        self.observers.append(observer)
        self.hooks = Hooks(self.observers)

    def unsubscribe(self, observer) -> None:
        """Remove an analysis: a run without the cycle model, say, computes the same results."""
        self.observers.remove(observer)
        self.hooks = Hooks(self.observers)

    @property
    def breaches(self) -> int:
        """PFN mode: how many times the last run broke a rule strict mode faults on."""
        return self.checks.breaches

    @property
    def first_breach(self) -> EmuFault | None:
        return self.checks.first_breach

    def pfn_report(self) -> str:
        """One line: what strict mode would have faulted on in the last run (PFN mode)."""
        return pfn_report(self.breaches, self.first_breach)

    # -- host access to DRAM / PDM --------------------------------------------------------
    def _paged(self, space: str, group: int):
        mems = self.state.dram if space == "d" else self.state.pdm
        if not 0 <= group < len(mems):
            raise EmulatorError(f"group {group} does not exist ({self.m.name} has {len(mems)} groups)")
        return mems[group]

    def write_dram(self, group: int, addr: int, data, space: str = "d") -> None:
        """Copy host data (any dtype; a whole number of long words) to DRAM at long-word addr."""
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        if raw.size % 8:
            raise EmulatorError(f"{raw.size} bytes is not a whole number of 8-byte long words")
        mem = self._paged(space, group)
        n = raw.size // 8
        if addr < 0 or addr + n > mem.n:
            raise EmulatorError(f"{MEM_NAME[space]} write of {n} long words at {addr} is beyond its "
                                f"{mem.n} long words")
        mem.write(addr, raw.view(U64))

    def read_dram(self, group: int, addr: int, n_longs: int, dtype=np.uint64, space: str = "d") -> np.ndarray:
        mem = self._paged(space, group)
        if addr < 0 or n_longs < 0 or addr + n_longs > mem.n:
            raise EmulatorError(f"{MEM_NAME[space]} read of {n_longs} long words at {addr} is beyond its "
                                f"{mem.n} long words")
        return mem.read(addr, n_longs).view(dtype)

    def read_pe(self, space: str, word: int, n_longs: int = 1) -> np.ndarray:
        """(PE, n) long words of a PE memory ('m' LM0, 'n' LM1, 'r' GRF0, 's' GRF1) from an even word address."""
        mem = self._pe_mem(space, word, n_longs)
        return mem[word // 2: word // 2 + n_longs].T.copy()

    def write_pe(self, space: str, word: int, values) -> None:
        """Set long words from an even word address: values (PE, n), or (n,) / a scalar for every PE."""
        v = np.asarray(values)
        if v.ndim > 2 or (v.ndim == 2 and v.shape[0] != self.m.n_pe):
            raise EmulatorError(f"write_pe takes (PE, n) = ({self.m.n_pe}, n), (n,) or a scalar; got {v.shape}")
        n = v.shape[-1] if v.ndim else 1
        mem = self._pe_mem(space, word, n)
        self._settle_all()
        mem[word // 2: word // 2 + n] = np.broadcast_to(v, (self.m.n_pe, n)).astype(U64).T

    def read_words(self, space: str, word: int, n_words: int = 1) -> np.ndarray:
        """(PE, n) 32-bit words of a PE memory from any word address, in address order."""
        self._pe_mem(space, word - word % 2, (n_words + word % 2 + 1) // 2)
        a = word + np.arange(n_words)
        return self.state.mem32[space][a >> 1, :, 1 - (a & 1)].T.copy()

    def _pe_mem(self, space, word, n_longs):
        if space not in self.state.mem:
            raise EmulatorError(f"unknown PE memory {space!r}: use 'm', 'n', 'r' or 's'")
        size = self.state.words[space]
        if word % 2 or word < 0 or word + 2 * n_longs > size:
            raise EmulatorError(f"{n_longs} long words from word {word} do not fit {MEM_NAME[space]} "
                                f"({size} words, long words at even addresses)")
        return self.state.mem[space]

    # -- running ---------------------------------------------------------------------------
    def run(self, program: Program, args: dict | None = None) -> Profile:
        """Run a program; returns its profile. Raises EmuFault on a fault."""
        args = dict(args or {})
        unknown = set(args) - set(program.args)
        if unknown:
            raise EmulatorError(f"{program.source}: unknown argument(s) {sorted(unknown)}; "
                                f"the program declares {program.args or 'none'}")
        missing = [a for a in program.args if a not in args]
        if missing:
            raise EmulatorError(f"{program.source}: missing argument(s) {missing}")
        for k, v in args.items():
            if not isinstance(v, (int, np.integer)):
                raise EmulatorError(f"{program.source}: argument {k} must be an integer, got {type(v).__name__}")
        self.prog = program
        for k, v in args.items():
            if not SEQ_MIN <= int(v) <= SEQ_MAX:
                raise EmulatorError(f"{program.source}: argument {k}={int(v)} does not fit a sequencer "
                                    f"register (64-bit signed)")
        self.deadline = None if self.time_limit is None else time.monotonic() + self.time_limit
        self.seq_iters = self._step_limit = self.steps = 0
        self._nib_memo = (-1, -1, -1, b"")       # (the host may have written mask entries)
        self._runs += 1
        self._plans = {}
        self.in_flight = []
        for hook in self.hooks.run_started:
            hook(self, program)
        regs = {k: int(v) for k, v in args.items()}
        try:
            with heap_frozen():
                self._nodes(program.main, regs)
        finally:
            self._settle_all()
        if self.in_flight:
            for hook in self.hooks.transfers_completed:
                hook(self, None, self.in_flight)
            self.in_flight = []
        profile = Profile(self.m, steps=self.steps)
        for hook in self.hooks.run_finished:
            hook(self, profile)
        return profile

    def fault(self, msg: str, pe: int | None = None) -> EmuFault:
        """A fault at the statement being run (for transfers.py and the observers); pe: the flat
        index of the first PE at fault, if one is."""
        return self._fault(msg, self.cur.line, self.cur.text, pe)

    def _fault(self, msg: str, line: int, text: str, pe: int | None = 0) -> EmuFault:
        loc = self.m.pe_location(int(pe)) if pe is not None else None
        return EmuFault(msg, line, text, loc, self.prog.source)

    def _eval(self, expr, regs, node):
        try:
            return expr.eval(regs)
        except KeyError as e:
            raise self._fault(f"register %{e.args[0]} is not set", node.line, node.text, None) from None
        except ZeroDivisionError:
            raise self._fault(f"division by zero in '{expr.text}'", node.line, node.text, None) from None

    def _nodes(self, nodes, regs):
        for n in nodes:
            if isinstance(n, Run):
                self._call(n, regs)
            elif isinstance(n, SetReg):
                try:                   # (the expression's code itself: _eval only to fault)
                    regs[n.reg] = n.expr.code(regs)
                except (KeyError, ZeroDivisionError):
                    self._eval(n.expr, regs, n)
                    raise
            elif isinstance(n, Loop):
                start, stop, step = (self._eval(x, regs, n) for x in (n.start, n.stop, n.step))
                if step == 0:
                    raise self._fault("loop step is 0", n.line, n.text, None)
                self._loop(n, range(start, stop, step), regs)
            elif isinstance(n, If):
                try:
                    cond = n.cond.code(regs)
                except (KeyError, ZeroDivisionError):
                    self._eval(n.cond, regs, n)
                    raise
                self._nodes(n.then if cond else n.orelse, regs)
            elif isinstance(n, Fault):
                raise self._fault(n.message, n.line, n.text, None)
            elif isinstance(n, (AnyLoop, IfAny)):
                while True:
                    any_set = self._any_flag(n.entry)
                    if isinstance(n, IfAny):
                        self._nodes(n.then if any_set else n.orelse, regs)
                        break
                    if not any_set:
                        break
                    if self.steps + 1 > self._step_limit:
                        self._check_limits(n, 1)
                    self.seq_iters += 1
                    self._step_limit -= 1
                    self._nodes(n.body, regs)

    def _loop(self, n: Loop, iterations: range, regs) -> None:
        """A ``.loop``: each iteration counts toward the limits like a PE step, charged CHECK_EVERY
        iterations at a time (one at a time under a step limit, so that it is exact)."""
        reg, body, nodes = n.reg, n.body, self._nodes
        chunk = 1 if self.max_steps is not None else CHECK_EVERY
        for lo in range(0, len(iterations), chunk):
            part = iterations[lo:lo + chunk]
            k = len(part)
            if self.steps + k > self._step_limit:
                self._check_limits(n, k)
            self.seq_iters += k
            self._step_limit -= k
            for v in part:
                regs[reg] = v
                nodes(body, regs)

    def _check_limits(self, node, units: int) -> None:
        """The step limit, the time limit and cancellation, checked before ``units`` PE steps or
        sequencer loop iterations every CHECK_EVERY of them and exactly at the step limit: loops
        without PE steps (``.set``-only, empty bodies) count too, so no program runs past a limit.
        The next check is due when PE steps + loop iterations reach a mark; ``_step_limit`` is that
        mark less the loop iterations, so a PE step asks only ``steps >= _step_limit``."""
        before = self.steps + self.seq_iters                 # units begun before these
        cycles = (f" ({self.cycle_model.now:.0f} emulated cycles)" if self.cycle_model in self.observers
                  else "")
        where = f"after {self.steps} PE steps and {self.seq_iters} sequencer loop iterations{cycles}"
        if self.max_steps is not None and before + units > self.max_steps:
            raise self._fault(f"step limit of {self.max_steps} reached {where}", node.line, node.text, None)
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise self._fault(f"time limit of {self.time_limit:g} s of emulation reached {where}",
                              node.line, node.text, None)
        if self.stop_check is not None and self.stop_check():
            raise self._fault(f"run cancelled {where}", node.line, node.text, None)
        if self.progress is not None:
            self.progress(self)
        grant = CHECK_EVERY if self.max_steps is None else min(CHECK_EVERY, self.max_steps - before)
        self._step_limit = before + max(grant, units) - self.seq_iters

    def _any_flag(self, entry: int) -> bool:
        """The sequencer asks the device: an OR-reduction up the tree, costed as tree_reduce latency."""
        for hook in self.hooks.any_reduction:
            hook(self, entry)
        return bool(self.state.omr[entry].any())

    def _call(self, node: Run, regs):
        block = self.prog.blocks[node.block]
        if node.offsets:
            try:                           # (the expressions' code itself: _eval only to fault)
                self.off = off = {sp: x.code(regs) for sp, x in node.offsets.items()}
            except (KeyError, ZeroDivisionError):
                self.off = off = {sp: self._eval(x, regs, node) for sp, x in node.offsets.items()}
                raise
            for sp, v in off.items():
                if abs(v) >= 1 << 40:
                    raise self._fault(f"'.call {node.block}': offset {sp}={v} is beyond any memory", node.line,
                                      node.text, None)
            # what a step plan depends on: the emulator, the PE-memory offsets (plan.py)
            self._plan_key = (self._token, off.get("m", 0), off.get("n", 0), off.get("r", 0), off.get("s", 0),
                              self.bar["m"] is not None, self.bar["n"] is not None)
        else:                              # (most calls: no offsets, nothing to work out)
            self.off = _NO_OFFSETS
            self._plan_key = (self._token, 0, 0, 0, 0, self.bar["m"] is not None, self.bar["n"] is not None)
        hooks = self.hooks
        for hook in hooks.block_entered:
            hook(self, node)
        step, mv = self._step, self._mv
        for st in block.stmts:
            kind = type(st)
            if kind is Step:
                step(st)
            elif kind is MVStmt:
                mv(st)
            else:
                self._debug(st)
        for hook in hooks.block_left:
            hook(self, node)

    # -- one step ----------------------------------------------------------------------------
    def _step(self, st: Step):
        if self.steps >= self._step_limit:
            self._check_limits(st, 1)
        self.cur = st
        if st.wait is not None:
            self._wait(st)
        if not st.exprs:             # nop (or a bare wait): nothing is read, written or forwarded
            for hook in self.hooks.step_executed:
                hook(self, st)
            self.steps += 1
            return
        self.pending = pending = []
        self.pending_mem = []
        plan = self._step_plan(st)
        self._flag_dsts = plan.flag_dsts
        self._readers = plan.readers
        for e, sem, one, views_ok in plan.exprs:
            self._one = one
            self._views_ok = views_ok
            sem(e, self)
        self._one = self._views_ok = False
        self._readers = _NO_READERS
        writers = plan.writers
        for e, v0, v1, flags in pending:
            for write in writers[id(e)]:
                write(self, e, v0, v1, flags, st)
        for fn in self.pending_mem:
            fn()
        if plan.fwd:
            fwd, names, dd, live = self.state.fwd, plan.fwd, plan.dd, self._fwd_live
            for e, v0, v1, _ in pending:
                name = names.get(id(e))
                if name:
                    fwd[name] = (v0, v1 if v1 is not None else self._zeros)
                    rows = dd.get(id(e)) if dd else None
                    if rows is not None and v0 is rows[0]:    # a direct store's: a view of its rows
                        live[name] = rows[1:]
                    elif live and name in live:
                        del live[name]
        for hook in self.hooks.step_executed:
            hook(self, st)
        self.steps += 1

    def _settle(self, sp: str, lo: int, hi: int) -> None:
        """PE-memory rows lo..hi-1 of sp are about to be written: forwarding values that view them
        (a direct store's, plan.py) become copies first."""
        hit = [name for name, (vsp, vlo, vhi) in self._fwd_live.items() if vsp == sp and vlo < hi and lo < vhi]
        if hit:
            self._own(hit)

    def _settle_all(self) -> None:
        """Every forwarding value a copy: at the end of a run (no view outlives it) and before a host
        write into PE memory."""
        self._own(list(self._fwd_live))

    def _own(self, names) -> None:
        """The forwarding values of names copied out of the rows they view."""
        fwd = self.state.fwd
        for name in names:
            v0, v1 = fwd[name]
            fwd[name] = (v0.copy(), v1 if v1.base is None else v1.copy())
            del self._fwd_live[name]

    def _step_plan(self, st: Step) -> StepPlan:
        """The step's plan (plan.py) for this emulator and the block's PE-memory offsets.  A plan
        that binds operands is made at the step's second run with the same offsets: the first runs
        with the step's plan that binds nothing (made once), so a block called with ever-new offsets
        costs what it did before plans.  So does one past PLANS_PER_STEP offsets (plans would pile
        up).  The key holds only the offsets of the memories the step names (a step of GRF operands
        in a block whose LM0 offset moves keeps one plan).  While an LM base-address register is
        set, that memory's addresses are per PE: the key says which are set, and the plan binds no
        operand of those memories."""
        plans = st.plans
        if plans is None:
            plans = st.plans = {}
        general = plans.get(self._token)
        if general is None:
            general = plans[self._token] = StepPlan(st, _cycle_uniform)
        key = general.key(self._plan_key)
        plan = plans.get(key)
        if plan is not None:
            return plan
        if key in plans:              # seen once: bind now
            try:
                plan = plans[key] = general.bound(self, st)
                return plan
            except EmuFault:          # an operand out of range: the general path faults where it is read
                pass
        elif len(plans) <= PLANS_PER_STEP:
            plans[key] = None
        return general

    def _wait(self, st: Step):
        """Retire the transfers with the step's tag: until then they are in flight."""
        tag = st.wait
        for hook in self.hooks.wait:
            hook(self, st, tag)
        mine = [t for t in self.in_flight if t.tag == tag]
        if mine:
            for hook in self.hooks.transfers_completed:
                hook(self, st, mine)
            self.in_flight = [t for t in self.in_flight if t.tag != tag]

    # -- the ctx interface of semantics.py and transfers.py ----------------------------------------
    def zeros(self):
        return self._zeros

    def scratch(self, shape: tuple, dtype, slot: int = 0) -> np.ndarray:
        """A buffer reused by every step: for a temporary that the caller lets go of before it
        returns (never a result: results live on in the pending writes and forwarding paths)."""
        key = (shape, dtype, slot)
        buf = self._scratch.get(key)
        if buf is None:
            buf = self._scratch[key] = np.empty(shape, dtype)
        return buf

    def full(self, value: int):
        return np.full((4, self.m.n_pe), value, dtype=U64)

    def subpe_in(self, which: tuple) -> np.ndarray:
        return np.isin(self.state.ids["subpeid"], which)

    @property
    def machine(self) -> Machine:
        return self.m

    def _access(self, op):
        """Where a PE-memory operand reads or writes this step: (word addresses, hazard words, rows,
        read views).

        Addresses are (4,) per cycle, or (4, P) when T-indirect; rows select the long words of
        slot 0 and slot 1 (a strided slice, _Same, or an index array); for a word operand the
        second is the word's half of its long word instead (0 the upper, an int when one for all).  Offset by the block call
        and bounds-checked (or wrapped).  Uniform operands are worked out once per offset; those
        whose rows are a slice or _Same also keep what a read gives, (v0, v1) views of the
        memory (else None)."""
        off = self.off.get(op.space, 0)
        bar = self.bar.get(op.space)
        if op.madpe is not None or bar is not None:     # per-PE addresses: j<madpe>, a base-address register
            n = WL[op.width]
            a = op.addrs[:, None] + off
            if op.madpe is not None:
                a = a + np.where(self.state.ids["subpeid"] <= op.madpe, n, 0)[None, :]
            if bar is not None:
                a = a + bar[None, :]
            if op.tind:
                a = a + self._t_low()
            return self._work_out(op, a & ~np.int64(n - 1), off)
        if not op.tind:
            if op.cache is None:
                op.cache = {}
            key = (self._token, off)          # a program may run on several emulators
            acc = op.cache.get(key)
            if acc is None:
                acc = op.cache[key] = self._work_out(op, op.addrs + off if off else op.addrs, off)
            return acc
        a = self._t_low()
        a += (op.addrs + off)[:, None]
        if op.width != "w":                       # unaligned run-time addresses truncate
            a &= ~np.int64(WL[op.width] - 1)
        return self._work_out(op, a, off)

    def _t_low(self) -> np.ndarray:
        """The low 32 bits of T's first long word, (4, P) int64 (a new array): T-indirect offsets."""
        return self.state.t.view(np.uint32)[:, :, 0].astype(np.int64)

    def _work_out(self, op, a, off):
        sp, n = op.space, WL[op.width]
        size = self._sizes[sp]
        if a.ndim == 1 and off % n:
            raise self._fault(f"'{op.text}': the block's offset {off} makes this {op.width}-word access "
                              f"unaligned (word address {int(a[0])}); offsets must be multiples of {n}",
                              self.cur.line, self.cur.text)
        if a.ndim == 1:               # four cycles' addresses: Python's min and max are cheaper
            al = a.tolist()
            lo, hi = min(al), max(al)
        else:
            lo, hi = int(a.min()), int(a.max())
        if lo < 0 or hi + n > size:
            if not self.wrap:
                bad = (a < 0) | (a + n > size)
                pe = int(np.argmax(bad.any(axis=0))) if a.ndim == 2 else 0
                shown = int(a[bad][0]) if a.ndim == 2 else [int(x) for x in a]
                raise self._fault(f"'{op.text}': word address {shown} is outside {MEM_NAME[sp]} "
                                  f"(0..{size - 1}); --wrap makes addresses wrap as the hardware does",
                                  self.cur.line, self.cur.text, pe)
            a = a % size
            lo, hi = int(a.min()), int(a.max())
        words = Footprint(lo, hi + n - 1, a, n)
        if op.width == "w" and a.ndim == 2:    # per-PE word addresses: _target indexes with them directly
            return a, words, None, None, None
        r0 = a >> 1
        if op.width == "w":           # the word's half of its long word (0 upper), as r1
            half = 1 - (a & 1)
            if a.ndim == 1 and (half == half[0]).all():
                rows = _strided(r0)                     # one half, evenly strided rows: basic indexing
                if rows is not None:
                    return a, words, rows, int(half[0]), None
            return a, words, r0, half, None
        if a.ndim == 1:
            rows = _strided(r0)
            if rows is not None:                        # slices (views on read)
                r0 = rows
            elif (r0 == r0[0]).all():
                r0 = _Same(int(r0[0]))
        if op.width != "ll":
            r1 = None
        elif isinstance(r0, slice):
            r1 = slice(r0.start + 1, r0.stop + 1, r0.step)
        elif isinstance(r0, _Same):
            r1 = _Same(r0.start + 1)
        else:
            r1 = r0 + 1
        views = None
        if a.ndim == 1:
            mem = self.state.mem[sp]
            if isinstance(r0, slice):
                views = mem[r0], (mem[r1] if r1 is not None else None)
            elif isinstance(r0, _Same):   # one long word every cycle: a broadcast view
                shape = (4, mem.shape[1])
                views = (np.broadcast_to(mem[r0.start], shape),
                         np.broadcast_to(mem[r1.start], shape) if r1 is not None else None)
        return a, words, r0, r1, views

    def read(self, op, e):
        rd = self._readers.get(id(op))
        if rd is not None:            # bound by the step's plan
            return rd(self)
        sp = op.space
        st = self.state
        if sp in ("m", "n", "r", "s"):
            got = None
            if op.tind and op.madpe is None and self.bar.get(sp) is None and not self.wrap:
                # T-indirect: addresses, bounds and the gather in one compiled pass (native.t_read);
                # an address outside the memory takes the numpy path (_access), which names it
                n = WL[op.width]
                got = native.t_read(st.t, op.addrs + self.off.get(sp, 0), st.mem[sp], self._sizes[sp], n)
            if got is not None:
                a, lo, hi, v0, v1 = got
                words = Footprint(lo, hi + n - 1, a, n)
            else:
                a, words, r0, r1, views = self._access(op)
            if op.via is None:            # (a forwarding read that names its producer's destination reads no memory)
                for hook in self.hooks.memory_read:
                    hook(self, sp, words, op.text)
            if got is not None:
                return v0, v1
            if views is not None:
                if self._one:        # a cycle-uniform expression works on cycle 0 (_cycle_uniform)
                    return views[0][:1], (views[1][:1] if views[1] is not None else None)
                return views
            if op.width == "w":
                m, at = self._target(st.mem32[sp], a, r0, r1)
                return _gather(m, at).astype(U64) << U64(32), None
            m, at0 = self._target(st.mem[sp], a, r0)
            at1 = self._target(st.mem[sp], a, r1)[1] if r1 is not None else None
            return _gather(m, at0), (_gather(m, at1) if at1 is not None else None)
        if sp == "t":
            return st.t[:, :, 0].copy(), st.t[:, :, 1].copy()
        if sp in st.fwd:
            v0, v1 = st.fwd[sp]
            if v0.ndim > 2:             # a broadcast kept as a view (transfers._down): (cycle, P) now
                v0, v1 = v0.reshape(v0.shape[0], -1), v1.reshape(v1.shape[0], -1)
            return v0, v1
        if sp == "fixed":
            v = self._fixed(op.fixed, e.prec or "l")
            return (v[0][:1], v[1][:1]) if self._one else v
        raise self._fault(f"'{op.text}' cannot be read here", self.cur.line, self.cur.text)  # pragma: no cover

    def _fixed(self, name: str, prec: str):
        key = (name, prec)
        if key not in self._fixed_cache:
            w = WIDTH[prec]
            n = 64 // w
            shape = (4, self.m.n_pe, n)
            if name == "msb1":
                lane = np.full(shape, 1 << (w - 1), dtype=np.uint64)
            else:
                lane = np.broadcast_to(self.state.ids[name][None, :, None], shape).astype(np.uint64)
            dt = {64: np.uint64, 32: np.uint32, 16: np.uint16}[w]
            v = pack(lane.astype(dt))
            self._fixed_cache[key] = (v, v)
        return self._fixed_cache[key]

    def write_all(self, e, v0, v1, flags):
        if v0 is not None and v0.ndim > 2 and not self._views_ok:   # a broadcast view: (cycle, P) here
            v0 = v0.reshape(v0.shape[0], -1)
            v1 = v1.reshape(v1.shape[0], -1) if v1 is not None else None
        # results that are views of the machine's storage (pass-through reads) are copied now:
        # the commit or a later step may overwrite what they view
        if v0 is not None and v0.base is not None and id(v0.base) in self._owners:
            v0 = v0.copy()
        if v1 is not None and v1.base is not None and id(v1.base) in self._owners:
            v1 = v1.copy()
        if e.zflush is not None:  # zero-flush: quarters whose mask bit is 0 become 0 (flags are not recomputed)
            nib = self.state.omr[e.zflush]
            if e.dsts and e.dsts[0].width == "ll":
                v0 = v0 & LUT_LL0[nib]
                v1 = v1 & LUT_LL1[nib] if v1 is not None else None
            else:
                v0 = v0 & LUT_L[nib]
                v1 = v1 & LUT_L[nib] if v1 is not None else None
        if self._one:             # cycle 0's result is every cycle's
            v0 = every_cycle(v0)
            v1 = every_cycle(v1) if v1 is not None else None
        if flags is not None and id(e) in self._flag_dsts:
            f = flags()                          # now, before any of this step's writes land
            flags = lambda: f
        self.pending.append((e, v0, v1, flags))

    def _mask(self, op, st: Step) -> int:
        return op.mask if op.mask is not None else st.masks.get(MASK_LETTER[op.space], 0)

    def _write(self, op, e, v0, v1, flags, st: Step):
        sp = op.space
        if sp == "nowrite":
            return
        if v0 is not None and v0.ndim > 2 and (sp not in ("m", "n", "r", "s") or op.width == "w"):
            v0, v1 = _flat(v0), _flat(v1)
        entry = self._mask(op, st)
        state = self.state
        nib = state.omr[entry] if entry else None
        if sp == "omr":
            if flags is None:
                raise self._fault(f"'{e.defn.name}' raises no mask flags, so it cannot write '{op.text}'",
                                  st.line, st.text)
            f = flags()
            old = state.omr[op.base]
            state.omr[op.base] = f if nib is None else (old & ~nib) | (f & nib)
            self._omr_writes += 1
            return
        if v1 is None:
            v1 = self._zeros
        if sp in ("mb", "nb"):        # base address: the low 12 bits of the upper word, the last written cycle's
            words = ((v0 >> U64(32)) & U64(0xFFF)).astype(np.int64)
            on = np.ones((4, self.m.n_pe), bool) if nib is None else (nib & 0xC) != 0
            cur = self.bar[sp[0]] if self.bar[sp[0]] is not None else np.zeros(self.m.n_pe, np.int64)
            for c in range(4):
                cur = np.where(on[c], words[c], cur)
            self.bar[sp[0]] = cur if cur.any() else None
            k = self._plan_key           # a plan binds no operand of a memory with a base address
            self._plan_key = k[:5] + (self.bar["m"] is not None, self.bar["n"] is not None)
            return
        if sp == "t":
            if nib is None:
                state.t[:, :, 0], state.t[:, :, 1] = v0, v1
            else:
                for s, v, lut in ((0, v0, LUT_LL0), (1, v1, LUT_LL1)):
                    old = state.t[:, :, s]
                    state.t[:, :, s] = old ^ ((old ^ v) & lut[nib])
            return
        a, words, r0, r1, _ = self._access(op)
        for hook in self.hooks.memory_written:
            hook(self, sp, words, op.text, _FIXED_CYCLES.get(entry))
        if self._fwd_live:
            self._settle(sp, 0, 1 << 62)
        if v0.ndim > 2 and (a.ndim != 1 or isinstance(r0, _Same)):
            v0, v1 = _flat(v0), _flat(v1)
        if isinstance(r0, _Same):        # every cycle names one long word: the cycles land in order
            mem = state.mem[sp]
            for row, val, lut in ((r0, v0, LUT_L if r1 is None else LUT_LL0), (r1, v1, LUT_LL1)):
                if row is None:
                    continue
                cur = mem[row.start].copy()
                for c in range(4):
                    cur = val[c] if nib is None else cur ^ ((cur ^ val[c]) & lut[nib[c]])
                mem[row.start] = cur
            return
        if op.width == "w":
            self._store(*self._target(state.mem32[sp], a, r0, r1), (v0 >> U64(32)).astype(np.uint32),
                        nib, entry, LUT_W, np.uint32)
            return
        mem = state.mem[sp]
        self._store(*self._target(mem, a, r0), v0, nib, entry, LUT_L if r1 is None else LUT_LL0, U64)
        if r1 is not None:
            self._store(*self._target(mem, a, r1), v1, nib, entry, LUT_LL1, U64)

    def _target(self, mem, a, rows, halves=None):
        """(array, index) of the long words (with halves: the words) an access names.  A T-indirect
        one ((4, P) addresses a) indexes mem's flat view with one array: about twice as fast in
        numpy as three (rows, PEs, halves)."""
        if a.ndim == 2:
            if rows is None:          # words (a (long, PE, 2) view): word a of PE p is flat element
                h = a & 1             # ((a >> 1) * P + p) * 2 + 1 - (a & 1) = (a - h) * P + 2p + 1 - h
                idx = a - h
                idx *= mem.shape[1]
                idx += self._cols_w
                idx -= h
                return mem.reshape(-1), (idx,)
            idx = rows * mem.shape[1] + self._cols
            return mem.reshape(-1), (idx if halves is None else idx * 2 + halves,)
        return mem, ((rows,) if halves is None else (rows, slice(None), halves))

    def _keep(self, nib, entry, lut, dt, lazy=False):
        """The write mask of a flag entry as dt bits per element, or True (every bit written) or
        False (none); with lazy, PARTIAL instead of a mask that keeps some bits and not others
        (the caller merges by the nibbles: native.merge).  Cached per (entry, layout) and reused
        while the entry's nibbles are the same (compared in full, so any write to the entry, by a
        step or by the host, is seen; not compared again in the same run while no step writes a
        mask entry)."""
        key = (entry, id(lut), dt)
        stamp = (self._runs, self._omr_writes)
        hit = self._keep_cache.get(key)
        if hit is not None and self._keep_stamp.get(key) == stamp and (lazy or hit[1] is not PARTIAL):
            return hit[1]                 # no mask entry written since it was checked, in this run
        self._keep_stamp[key] = stamp
        memo = self._nib_memo             # the entry's bytes, once per step (an ll store asks twice)
        if memo[0] == self.steps and memo[1] == entry and memo[2] == self._omr_writes:
            raw = memo[3]
        else:
            raw = nib.tobytes()
            self._nib_memo = (self.steps, entry, self._omr_writes, raw)
        if hit is not None and hit[0] == raw and (lazy or hit[1] is not PARTIAL):
            return hit[1]
        used = _LUT_BITS[id(lut)]
        m = nib & np.uint8(used)
        if m.min() == used:
            keep = True
        elif m.max() == 0:
            keep = False
        elif lazy:
            keep = PARTIAL
        else:
            keep = _lut_as(lut, dt).take(nib.astype(np.intp))    # (an intp index: no conversion inside take)
            keep.flags.writeable = False
        self._keep_cache[key] = (raw, keep)
        return keep

    def _few(self, key, keep):
        """For a (4, P) write mask that keeps few elements (at most 1/16; l1bmp to one PE of each
        L1B): ((cycles, PEs) of those, their flat positions, whether every bit of each is kept, a
        memo of _store_few's indices); else None.  Kept beside the mask in _keep's cache."""
        hit = self._keep_cache[key]
        if len(hit) == 3:
            return hit[2]
        few = None
        kept = (keep != 0).reshape(-1)           # (numpy's nonzero is several times faster on flat bools)
        if np.count_nonzero(kept) * 16 <= keep.size:      # (counted first: most masks keep many)
            src = kept.nonzero()[0]
            at = divmod(src, keep.shape[1])
            few = (at, src, bool((keep.reshape(-1)[src] == np.array(-1).astype(keep.dtype)).all()), {})
        self._keep_cache[key] = hit + (few,)
        return few

    def _store_few(self, mem, rows, val, keep, key) -> bool:
        """mem[rows] = val under write mask keep, touching only the PEs keep writes when they are
        few (_few) and the four cycles' rows differ; False (nothing done) otherwise."""
        few = self._few(key, keep)
        if few is None:
            return False
        at, src, full, memo = few
        P = mem.shape[1]
        if isinstance(rows, slice):           # rows start + step c: the flat positions are src moved
            rk = (rows.start, rows.stop, rows.step, mem.shape)
            idx = memo.get(rk)
            if idx is None:
                r = range(*rows.indices(mem.shape[0]))
                idx = memo[rk] = (False if len(r) != 4 else src + r.start * P if r.step == 1
                                  else (r.start + r.step * at[0]) * P + at[1])
            if idx is False:
                return False
        else:
            rows = np.asarray(rows)
            if rows.shape != (4,) or len(set(rows.tolist())) != 4:
                return False
            idx = rows[at[0]] * P + at[1]
        flat = mem.reshape(-1)
        # a broadcast kept as a view (transfers._down) gives only the elements stored: taken from the
        # run it views by their offsets there (worked out once per layout; one index, not five)
        if val.ndim == 2:
            new = val.reshape(-1)[src]
        else:
            base, size = val.base, val.itemsize
            if (base is not None and base.dtype == val.dtype and base.flags.c_contiguous
                    and not any(x % size for x in val.strides)):
                vk = (val.shape, val.strides)
                off = memo.get(vk)
                if off is None:
                    off = memo[vk] = sum(u * (x // size) for u, x in zip(np.unravel_index(src, val.shape), val.strides))
                new = base.reshape(-1)[off + (val.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // size]
            else:
                new = val[np.unravel_index(src, val.shape)]
        if not full:
            old = flat[idx]
            new = old ^ ((old ^ new) & keep.reshape(-1)[src])
        flat[idx] = new
        return True

    def _store(self, mem, where, val, nib, entry, lut, dt):
        """mem[where] = val under a write mask: none, a fixed cycle pattern, or a flag entry."""
        if nib is None:
            mem[where] = _flat(val)
        elif entry >= isa.FIXED_MASK_BASE and _nd(where[0]) <= 1:   # fixed pattern, uniform address: whole cycles
            # each kept cycle's row on its own, in cycle order (a later cycle's store to the same row
            # lands last); a broadcast view gives only those cycles' P values, not all four's
            rows, rest = where[0], where[1:]
            for c in _KEPT_CYCLES[entry]:
                if isinstance(rows, slice):
                    row = rows.start + c * rows.step
                else:
                    row = rows[c] if _nd(rows) else rows
                v = val[c]
                mem[(row,) + tuple(x[c] if isinstance(x, np.ndarray) else x for x in rest)] = \
                    v.reshape(-1) if v.ndim > 1 else v
        else:
            four_rows = dt is U64 and len(where) == 1 and isinstance(where[0], slice) and mem.ndim == 2
            keep = self._keep(nib, entry, lut, dt, lazy=four_rows)
            if keep is PARTIAL:           # a flag entry's merge into four rows: one compiled pass
                rows, v = mem[where], _flat(val)
                if rows.shape == v.shape == nib.shape and native.merge(rows, v, nib, lut):
                    return
                keep = self._keep(nib, entry, lut, dt)
            if keep is False:
                return
            if keep is True:          # as the merge below with every bit kept: a plain store
                mem[where] = _flat(val)
                return
            if mem.ndim == 2 and len(where) == 1 and _nd(where[0]) <= 1 and \
                    keep.shape == (4, mem.shape[1]) and val.shape[0] == 4 and val.size == keep.size and \
                    self._store_few(mem, where[0], val, keep, (entry, id(lut), dt)):
                return
            val = _flat(val)
            if all(isinstance(x, slice) for x in where):   # a view: merge in place
                old = mem[where]
                diff = np.bitwise_xor(old, val)
                diff &= keep
                old ^= diff
                return
            rows = where[0]
            if _nd(rows) == 1 and len(rows) == 4 and (rows == rows[0]).all():
                # every cycle names one word (a word operand without auto-stride): the cycles land
                # in order, so a masked-off cycle does not put back what an earlier one replaced
                rest = where[1:]
                keep = np.broadcast_to(keep, val.shape)
                for c in range(4):
                    at = (rows[c],) + tuple(x[c] if isinstance(x, np.ndarray) else x for x in rest)
                    mem[at] ^= (mem[at] ^ val[c]) & keep[c]
                return
            old = _gather(mem, where)
            new = old ^ ((old ^ val) & keep)
            if _nd(where[0]) == 2 and all(isinstance(x, np.ndarray) for x in where):
                # T-indirect: several cycles may name one address, and a masked-off cycle must not
                # write back the value it read before an unmasked one stored
                sel = keep != 0
                mem[tuple(np.broadcast_to(x, sel.shape)[sel] for x in where)] = new[sel]
            else:
                mem[where] = new

    # L1BM / L2BM access for transfers.py
    def l1b_mem(self, op):
        return self.state.lbi if op.space == "lbi" else self.state.l1bm

    def _tree_range(self, op, n, write, sp):
        """The run of n long words an L1BM/L2BM operand covers this step: a slice (an index array if wrapped)."""
        a = op.base + (self.off.get(sp, 0) if sp != "lbi" else 0)
        size = self._sizes[sp]
        where = slice(a, a + n)
        if a < 0 or a + n > size:
            if not self.wrap:
                raise self._fault(f"'{op.text}': long words {a}..{a + n - 1} are outside {MEM_NAME[sp]} "
                                  f"(0..{size - 1}); --wrap makes addresses wrap", self.cur.line, self.cur.text,
                                  None)
            where = np.arange(a, a + n) % size
        hooks = self.hooks.memory_written if write else self.hooks.memory_read
        if hooks and sp != "lbi":
            fp = Footprint(a, a + n - 1)
            for hook in hooks:
                hook(self, sp, fp, op.text, None) if write else hook(self, sp, fp, op.text)
        return where

    def lb_range(self, op, n, write):
        return self._tree_range(op, n, write, op.space)

    def lc_range(self, op, n, write):
        return self._tree_range(op, n, write, "lc")

    def lb_write(self, op, where, vals):
        if op.space == "lbi":        # the turnaround register: read back within this step
            self.state.lbi[:, where] = vals
        else:
            self.pending_mem.append(lambda: self.state.l1bm.__setitem__((slice(None), where), vals))

    def lc_write(self, where, vals):
        self.pending_mem.append(lambda: self.state.l2bm.__setitem__((slice(None), where), vals))

    def count_bytes(self, link, direction, nbytes):
        for hook in self.hooks.bytes_moved:
            hook(self, link, direction, nbytes)

    # -- MV transfers ----------------------------------------------------------------------------
    def _mv_range(self, op, n, st):
        a = op.base + self.off.get(op.space, 0)
        size = self._sizes[op.space]
        if a < 0 or a + n > size:
            if self.wrap and a % size + n <= size:
                return a % size
            raise self._fault(f"'{op.text}': long words {a}..{a + n - 1} are outside {MEM_NAME[op.space]} "
                              f"(0..{size - 1}){' (a transfer does not wrap across the end)' if self.wrap else ''}",
                              st.line, st.text, None)
        return a

    def mv_read(self, op, g, l2b, a, n):
        """n long words from an MV source, a view where it can be: every MV moves between two different
        memories, so its source cannot change before the data is copied to its destination."""
        if op.space == "lc":
            return self.state.l2bm[g * self.m.l2b_per_group + l2b, a:a + n]
        return self._paged(op.space, g).read(a, n, copy=False)

    def mv_write(self, op, g, l2b, a, data):
        """data to an MV destination: L2BM l2b of group g, or group g's DRAM / PDM."""
        if op.space == "lc":
            self.state.l2bm[g * self.m.l2b_per_group + l2b, a:a + data.size] = data
        else:
            self._paged(op.space, g).write(a, data)

    def _mv(self, st: MVStmt):
        """An MV statement: work out its transfers, tell the observers (checks, cycle model, counters),
        move the data; the transfers are in flight until a wait retires them.

        Which transfers a statement makes depends only on the statement: they are worked out once
        per run (transfers.mv_jobs, the row's planner), relative to the source and destination
        addresses of the call."""
        e = st.expr
        src, dst, n = e.srcs[0], e.dsts[0], e.size
        self.cur = st
        a, b = self._mv_range(src, n, st), self._mv_range(dst, n, st)
        made = self._plans.get(id(st))
        if made is None:
            jobs = mv_jobs(e, self)
            made = self._plans[id(st)] = (jobs, [_transfer_maker(job, e, st) for job in jobs])
        jobs, makers = made
        transfers = [make(a, b) for make in makers]
        for hook in self.hooks.transfers_issued:
            hook(self, st, transfers)
        for job in jobs:
            job.move(a, b)
        self.in_flight.extend(transfers)

    # -- debug statements ------------------------------------------------------------------------
    def _select_pes(self, loc):
        sel = np.ones(self.m.n_pe, dtype=bool)
        for lvl, v in enumerate(loc):
            if v is not None:
                sel &= self.state.coords[:, lvl] == v
        return np.nonzero(sel)[0]

    def _select_units(self, sp, loc):
        """Indices of the L1Bs (lb), L2Bs (lc) or groups (d, p) a debug location names."""
        m = self.m
        fan = {"lb": (m.groups, m.l2b_per_group, m.l1b_per_l2b), "lc": (m.groups, m.l2b_per_group),
               "d": (m.groups,), "p": (m.groups,)}[sp]
        grids = np.indices(fan).reshape(len(fan), -1).T
        sel = np.ones(len(grids), dtype=bool)
        for lvl, v in enumerate(loc):
            if v is not None:
                sel &= grids[:, lvl] == v
        return np.nonzero(sel)[0], grids

    def _debug(self, d: DebugStmt):
        self.cur = d
        sp = d.target.space
        m = self.m
        for lvl, v in enumerate(d.loc):
            limit = (m.groups, m.l2b_per_group, m.l1b_per_l2b, m.mab_per_l1b, m.pe_per_mab)[lvl]
            if v is not None and v >= limit:
                raise self._fault(f"debug location level {'ncbmp'[lvl]}{v} does not exist on {m.name} "
                                  f"(0..{limit - 1})", d.line, d.text, None)
        if sp in ("m", "n", "r", "s", "t", "omr"):
            pes = self._select_pes(d.loc)
            if sp in "mnrs":
                a0 = int(d.target.addrs[0]) + self.off.get(sp, 0)
                a0 -= a0 % 2
                size = self._sizes[sp]
                if a0 < 0 or a0 + 2 * d.count > size:
                    raise self._fault(f"'{d.target.text}': {d.count} long words from word {a0} run past "
                                      f"{MEM_NAME[sp]} ({size} words)", d.line, d.text, None)
                cols = a0 // 2 + np.arange(d.count)
                if d.kind == "set":   # a debugger write: no pipeline, so no hazard either
                    self._settle_all()
                    self.state.mem[sp][np.ix_(cols, pes)] = np.array(d.payload, dtype=U64)[:, None]
                    for hook in self.hooks.memory_set:
                        hook(self, sp, Footprint.span(a0, a0 + 2 * d.count - 1))
                    return
                vals, addrs = self.state.mem[sp][np.ix_(cols, pes)].T, a0 + 2 * np.arange(d.count)
            elif sp == "t":
                if d.count > 4:
                    raise self._fault("the T register has 4 cycles: count at most 4", d.line, d.text, None)
                if d.kind == "set":
                    self.state.t[np.ix_(np.arange(d.count), pes, [0])] = np.array(d.payload, U64)[:, None, None]
                    return
                vals, addrs = self.state.t[:d.count, pes, 0].T, np.arange(d.count)
            else:
                if d.kind == "set":
                    raise self._fault("'d set' of mask registers is not supported", d.line, d.text, None)
                entry = d.target.base
                if not 0 <= entry or entry + d.count > isa.MASK_ENTRIES:
                    raise self._fault(f"mask entries {entry}..{entry + d.count - 1} are outside 0..{isa.MASK_ENTRIES - 1}",
                                      d.line, d.text, None)
                vals, addrs = self.state.omr[entry:entry + d.count][:, :, pes].transpose(2, 0, 1), None
            units = [self.m.pe_location(int(p)) for p in pes]
        else:
            idx, grids = self._select_units(sp, d.loc)
            a0 = d.target.base + self.off.get(sp, 0)
            size = {"lb": m.l1bm_longs, "lc": m.l2bm_longs, "d": m.dram_longs, "p": m.pdm_longs}[sp]
            if a0 < 0 or a0 + d.count > size:
                raise self._fault(f"'{d.target.text}': {d.count} long words from {a0} run past "
                                  f"{MEM_NAME[sp]} ({size} long words)", d.line, d.text, None)
            mem = {"lb": self.state.l1bm, "lc": self.state.l2bm}.get(sp)
            rows = []
            for i in idx:
                if mem is not None:
                    if d.kind == "set":
                        mem[i, a0:a0 + d.count] = np.array(d.payload, U64)
                    else:
                        rows.append(mem[i, a0:a0 + d.count])
                else:
                    if d.kind == "set":
                        self._paged(sp, int(i)).write(a0, np.array(d.payload, U64))
                    else:
                        rows.append(self._paged(sp, int(i)).read(a0, d.count))
            if d.kind == "set":
                return
            vals, addrs = np.array(rows), a0 + np.arange(d.count)
            units = ["".join(f"{c}{v}" for c, v in zip("ncb", grids[i])) for i in idx]
        self.dump.extend(format_get(d, units, vals, addrs))
