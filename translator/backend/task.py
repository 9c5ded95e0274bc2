"""The task-kernel compiler: a __task kernel's AST -> the machine program, for one machine.

A task kernel (``__task void f(...)``) runs once on the whole machine: one
instruction stream, as the hardware has.  Its integer scalars are *uniform*
(sequencer registers: loop counters, sizes, addresses); its per-PE values have
the vector types that fill one step (``mnhalf16``: 4 cycles x 4 halves,
``mnfloat8``: 4 cycles x 2 floats, ``mnint8``, ``mnlong4``, and ``mnfloat16``:
4 cycles x 4 floats, what half-precision MAU operations produce).  Data moves
only through the transfer builtins, each one instruction family (mv*, l2bm*,
l1bm*); arrays declared ``L2BM`` / ``L1BM`` are allocated in those memories at
compile time, private vector arrays in LM0/LM1.  docs/language.md
("Task kernels") is the user's description; translator/task.py the dialect's
types and signature (the front end's part).  This module is the compiler:
takes the module's preprocessed task source (parsed again by the front end's
parser) and a machine; gives the backend's ops tree (ops.py), then schedule.py and printer.py's
scheduler and assembly printer give the assembly text and sequencer
arguments.

Why not through LLVM IR like SPMD kernels: a task kernel *is* the machine
program (every builtin is an instruction, every scalar a sequencer register),
so there is nothing for LLVM's optimiser to do that the sequencer does not,
and the operand placement (which LM, which offset space) is what the
programmer reasons about.  Constant-trip loops of up to ``UNROLL`` passes are
unrolled (their counters become constants); other loops run on the sequencer.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np
from pycparser import c_ast

from emulator.numbers import f32_to_mnhalf

from ..constfold import BINARY_OPS, fold_binary, fold_unary, parse_char, parse_float, parse_int
from ..module import CompileError, KernelInfo
from ..scopes import Scopes
from ..srcloc import SourceMap, preprocessed_lines
from . import abi
from ..task import ELEMS, SCALARS, VECS, VEC_OF_ELEM, VecType, qualifiers, task_functions, type_name
from .printer import print_program
from .schedule import schedule_tree
from .ops import Call, MaskReg, Op, SeqFault, SeqIf, SeqLoop, SeqSet, VReg

UNROLL = 64              # constant-trip loops up to this many passes are unrolled


class TaskError(Exception):
    """An error in the kernel at node (None: the statement being compiled); compile_task turns it
    into a located CompileError."""

    def __init__(self, node, msg):
        super().__init__(msg)
        self.node, self.msg = node, msg


@dataclass
class U:
    """A uniform integer: a sequencer expression, and its value when known at compile time.
    ``dyn`` + ``add`` is the same value split into a run-time part and a constant, so that
    arr[j + 3] and arr[j + 5] share one block offset (j) and differ in static addresses."""
    text: str
    const: int | None = None
    dyn: str | None = None
    add: int = 0

    def __post_init__(self):
        if self.dyn is None and self.const is None:
            self.dyn = self.text

    @staticmethod
    def k(v: int) -> "U":
        return U(str(v), v)


@dataclass
class Ptr:
    """A pointer into DRAM, L2BM or L1BM: the object it points into, and a byte offset in it."""
    space: str           # "d" | "lc" | "lb"
    elem: str
    base: U              # bytes from the start of the space (DRAM: a buffer's address)
    size: U              # bytes of the buffer or array
    off: U               # bytes from base
    const: bool = False
    name: str = ""


@dataclass
class Loc:
    """Where a per-PE vector lives: a GRF or LM word address, maybe plus a sequencer offset."""
    space: str           # "r" | "s" (GRF0/1) | "m" | "n" (LM0/1)
    addr: int            # words
    slots: int
    offset: str = "0"    # sequencer expression in words, applied as the block's .call offset
    stride: int = 1      # 2: the first (or, at addr + 2, the second) long words of an $ll value;
                         # 0: one long word read in every cycle (a cycle-uniform vector)
    regs: tuple = ()     # VRegs for the scheduler's hazard tracking (GRF locations)

    def operand(self, width=None):
        w = width or ("ll" if self.slots == 2 and self.stride == 1 else "l")
        if self.stride == 0:
            return f"$l{self.space}{self.addr}"
        return f"${w}{self.space}{self.addr}v" + ("" if self.stride == 1 else str(self.stride))

    def mem(self, rw):
        if self.space in ("m", "n"):
            hi = self.addr + (2 if self.stride == 0 else 8 * self.slots if self.stride == 1 else 8 * self.stride)
            return ((rw, self.space, self.addr, hi),)
        return ()


@dataclass
class V:
    vt: VecType
    loc: Loc


@dataclass
class Event:
    name: str
    tags: list           # one tag per element (a scalar event has one)
    state: list = field(default_factory=list)   # "idle" | "pending" | "unknown" per element
    started: dict = field(default_factory=dict)  # element -> C line of its last transfer

    def label(self, i):
        return self.name + (f"[{i}]" if len(self.tags) > 1 else "")


@dataclass
class Var:
    kind: str            # "u" (uniform int) | "ptr" | "vec" | "vecarr" | "event"
    value: object = None
    reg: str = ""        # the sequencer register of an assignable uniform integer
    count: int = 0       # array length
    name: str = ""


BUILTIN_CONSTS = ("NUM_PE", "NUM_GROUPS", "NUM_L2B", "NUM_L1B", "NUM_MAB", "NUM_PE_MAB")


class TaskCompiler:
    """One task kernel -> (assembly text, sequencer argument names)."""

    def __init__(self, fdef, machine, info: KernelInfo):
        self.fdef, self.m, self.info = fdef, machine, info
        self.items = []                  # the ops tree being built
        self.scopes = Scopes()
        self.alloc = {}                  # VReg -> (space, slot): schedule.py's view of locations
        self.grf0 = [0] * 64             # named vectors in GRF0 (slots)
        self.tmp_next = 0                # GRF1 temporaries: a stack reset per statement
        self.tmp_peak = 0
        self.lm = {"m": 0, "n": 0}       # words used in LM0 / LM1
        self.mem_used = {"lc": 0, "lb": 0}   # long words of L2BM / L1BM arrays
        self.next_tag = abi.TASK_EVENT_TAGS.start
        self.nregs = 0
        self.line = 0
        self.statement = None
        self.args = []
        self._consts = {}
        self.touched = {}                # id(Call) -> {space: the block's offset there ("0": none)}

    # -- entry --------------------------------------------------------------------------------
    def compile(self):
        for k, p in enumerate(self.info.params):
            if p.kind == "global":
                self.args += [abi.base(k), abi.nbytes(k)]
                self.declare(p.name, Var("ptr", Ptr("d", p.type_name, U(f"{abi.reg(abi.base(k))}*8"),
                                                     U(abi.reg(abi.nbytes(k))), U.k(0),
                                                     p.is_const, p.name)))
            else:
                self.args.append(abi.param(k))
                self.declare(p.name, Var("u", U(abi.reg(abi.param(k))), abi.param(k)))
        self.block(self.fdef.body)
        tree = self.items
        asm = print_program(schedule_tree(tree, self.alloc), self.args, self.alloc)
        return asm, self.args

    def events(self):
        for s in self.scopes:
            for v in s.values():
                if v.kind == "event":
                    yield v.value

    # -- scopes ---------------------------------------------------------------------------------
    def declare(self, name, var, node=None):
        if self.scopes.declared_here(name):
            raise TaskError(node, f"'{name}' is declared twice")
        self.scopes[-1][name] = var

    def lookup(self, name, node):
        var = self.scopes.lookup(name)
        if var is not None:
            return var
        if name in BUILTIN_CONSTS:
            m = self.m
            return Var("u", U.k({"NUM_PE": m.n_pe, "NUM_GROUPS": m.groups, "NUM_L2B": m.l2b_per_group,
                                 "NUM_L1B": m.l1b_per_l2b, "NUM_MAB": m.mab_per_l1b,
                                 "NUM_PE_MAB": m.pe_per_mab}[name]))
        raise TaskError(node, f"use of undeclared identifier '{name}'")

    def lookup_kind(self, name, node, kind, what):
        """The value of `name`, which must be a `kind` variable ("'x' is not <what>" otherwise)."""
        var = self.lookup(name, node)
        if var.kind != kind:
            raise TaskError(node, f"'{name}' is not {what}")
        return var.value

    # -- emission -------------------------------------------------------------------------------
    def emit(self, text, unit, reads=(), writes=(), offsets=None, mask_w=None, mask_r=None, mat_w=None, mat_r=None):
        """One PE expression; reads/writes are Locs (or mem tuples for L1BM/L2BM); mask_w/mask_r
        the mask entry it writes / is masked by (so the scheduler keeps them in order)."""
        srcs, dsts, mem, offs = [], [], [], dict(offsets or {})
        for rw, lst in (("r", reads), ("w", writes)):
            for x in lst:
                if isinstance(x, Loc):
                    (srcs if rw == "r" else dsts).extend(x.regs)
                    mem.extend(x.mem(rw))
                    if x.offset != "0" or x.space not in offs:
                        if offs.get(x.space, x.offset) != x.offset:
                            raise TaskError(None, "internal: one instruction with two offsets in one space")
                        offs[x.space] = x.offset
                else:
                    mem.append((rw,) + tuple(x))
        op = Op(text, unit, tuple(dsts), tuple(srcs), mdst=tuple(x for x in (mask_w, mat_w) if x),
                msrc=tuple(x for x in (mask_r, mat_r) if x), mem=tuple(mem), line=self.line,
                partial=mask_r is not None)
        self.add_to_block(op, offs)
        self.last_emit = (op, [x for x in reads if isinstance(x, Loc)], [x for x in writes if isinstance(x, Loc)])

    def retarget(self, val: Loc, dst: Loc) -> bool:
        """`dst = <expression>`: when the expression's last instruction wrote val (a temporary) and
        nothing else, make it write dst instead, saving the copy."""
        last = getattr(self, "last_emit", None)
        block = self.items[-1] if self.items else None
        if last is None or not isinstance(block, Call) or not block.body or block.body[-1] is not last[0]:
            return False
        op, reads, writes = last
        if op.partial or len(writes) != 1 or writes[0] != val or val.space != "s" or dst.slots != val.slots:
            return False
        if any(_clash(r, dst) for r in reads if r != val):
            return False
        touched = self.touched[id(block)]
        if touched.get(dst.space, dst.offset) != dst.offset:
            return False
        for w in ("ll", "l"):
            old = val.operand(w)
            at = op.text.rfind(old)
            if at >= 0 and not op.text[at + len(old):at + len(old) + 1].isalnum():
                break
        else:
            return False
        op.text = op.text[:at] + dst.operand(w) + op.text[at + len(old):]
        op.dsts = tuple(dst.regs)
        op.mem = tuple(m for m in op.mem) + dst.mem("w")
        touched[dst.space] = dst.offset
        if dst.offset != "0":
            block.offsets[dst.space] = dst.offset
        self.last_emit = None
        return True

    def add_to_block(self, op, offs, new=False):
        """Append op to the current block if the block's offset in every space op touches is op's
        (a block has one .call offset per space), else (or if new) start a block."""
        last = self.items[-1] if self.items else None
        touched = self.touched.get(id(last)) if isinstance(last, Call) else None
        if new or touched is None or any(touched.get(s, o) != o for s, o in offs.items()):
            last = Call([], {})
            self.items.append(last)
            touched = self.touched[id(last)] = {}
        last.body.append(op)
        touched.update(offs)
        last.offsets.update({s: o for s, o in offs.items() if o != "0"})

    def seq(self, node):
        self.items.append(node)

    def fault_if(self, cond, msg):
        """A run-time check on sequencer registers.  It goes before the block being built (no
        register changes inside a block), so checks do not cut blocks apart."""
        check = SeqIf(cond, [SeqFault(f"line {self.line}: {msg}")])
        at = len(self.items) - 1 if self.items and isinstance(self.items[-1], Call) else len(self.items)
        self.items.insert(at, check)

    # -- storage --------------------------------------------------------------------------------
    def vreg_loc(self, space, slot, slots):
        regs = []
        for i in range(slots):
            r = VReg(f"{space}{slot + i}")
            self.alloc[r] = (space, slot + i)
            regs.append(r)
        return Loc(space, 8 * slot, slots, regs=tuple(regs))

    def temp(self, vt_or_slots, node=None):
        slots = vt_or_slots if isinstance(vt_or_slots, int) else vt_or_slots.slots
        start = self.tmp_next + (self.tmp_next % 2 if slots == 2 else 0)
        if start + slots > 64:
            raise TaskError(node, "the expression needs more than 64 temporary registers (GRF1): split it")
        self.tmp_next = start + slots
        self.tmp_peak = max(self.tmp_peak, self.tmp_next)
        return self.vreg_loc("s", start, slots)

    def named(self, vt, node):
        for s in range(0, 64 - vt.slots + 1, vt.slots):
            if not any(self.grf0[s:s + vt.slots]):
                self.grf0[s:s + vt.slots] = [1] * vt.slots
                return self.vreg_loc("r", s, vt.slots)
        raise TaskError(node, "more per-PE vector variables than GRF0 holds (64 registers of 4 long words): "
                              "use an array (in LM) instead")

    def lm_array(self, vt, count, node):
        words = vt.words * count
        sp = "m" if self.lm["m"] <= self.lm["n"] else "n"
        if self.lm[sp] + words > self.m.lm_words:
            sp = "n" if sp == "m" else "m"
        if self.lm[sp] + words > self.m.lm_words:
            raise TaskError(node, f"private array of {count} {vt.name} needs {words} words; LM0 has "
                                  f"{self.m.lm_words - self.lm['m']} and LM1 {self.m.lm_words - self.lm['n']} "
                                  f"words left (of {self.m.lm_words} each)")
        a = self.lm[sp]
        self.lm[sp] += words
        return Loc(sp, a, vt.slots)

    def static_array(self, space, elem, count, node, name):
        size = ELEMS[elem][0] * count
        if size % 8:
            raise TaskError(node, f"{_SPACE_NAME[space]} array '{name}' is {size} bytes; arrays there are "
                                  f"whole long words (a multiple of 8 bytes)")
        longs = size // 8
        cap = self.m.l2bm_longs if space == "lc" else self.m.l1bm_longs
        a = -(-self.mem_used[space] // 64) * 64          # 64-long-word aligned (the transfer unit)
        if a + longs > cap:
            raise TaskError(node, f"{_SPACE_NAME[space]} array '{name}' needs {longs} long words; {cap - a} "
                                  f"of the {cap} long words of each {_SPACE_NAME[space]} are left")
        self.mem_used[space] = a + longs
        return Ptr(space, elem, U.k(8 * a), U.k(8 * longs), U.k(0), False, name)

    # -- statements -----------------------------------------------------------------------------
    def block(self, comp):
        self.scopes.append({})
        for s in comp.block_items or ():
            self.stmt(s)
        for v in self.scopes.pop().values():
            if v.kind == "vec" and v.value.loc.space == "r":        # its GRF0 registers are free again
                a = v.value.loc.addr // 8
                self.grf0[a:a + v.value.vt.slots] = [0] * v.value.vt.slots
            if v.kind == "event":
                self.event_ends(v.value, comp)

    def event_ends(self, ev, node):
        """An event leaves scope (or the kernel ends): nothing may still be in flight on it."""
        for k in range(len(ev.tags)):
            at = f" (started at line {ev.started[k]})" if k in ev.started else ""
            self.event_must_be(ev, k, "idle", node, f"event '{ev.label(k)}'{at} goes out of scope with a "
                                                   f"transfer in flight: wait for it (mn_wait)")

    def event_must_be(self, ev, i, want, node, msg):
        """Element i of ev must be 'idle' (nothing in flight) or 'pending': an error when the
        compiler knows it is not, a run-time check on its sequencer register when it cannot know."""
        st = ev.state[i]
        if st != "unknown" and st != want:
            raise TaskError(node, msg)
        if st == "unknown":
            self.fault_if(f"%ev{ev.tags[i]}{'!=' if want == 'idle' else '=='}0", msg)

    def stmt(self, s):
        self.line = getattr(s.coord, "line", self.line) if s.coord else self.line
        self.statement = s               # where an error without a node of its own is reported
        self.tmp_next = 0                # temporaries (and the constants made for them) live one statement
        self._consts = {}
        if isinstance(s, c_ast.Compound):
            self.block(s)
        elif isinstance(s, c_ast.Decl):
            self.decl(s)
        elif isinstance(s, c_ast.DeclList):
            for d in s.decls:
                self.decl(d)
        elif isinstance(s, c_ast.For):
            self.for_loop(s)
        elif isinstance(s, c_ast.If):
            self.if_stmt(s)
        elif isinstance(s, c_ast.Return):
            if s.expr is not None:
                raise TaskError(s, "a task kernel returns nothing")
        elif isinstance(s, c_ast.EmptyStatement):
            pass
        elif isinstance(s, (c_ast.Assignment, c_ast.FuncCall, c_ast.UnaryOp)):
            self.expr_stmt(s)
        elif isinstance(s, (c_ast.While, c_ast.DoWhile)):
            raise TaskError(s, "task kernels have no while loops: write a counted 'for' (the sequencer runs "
                               "loops with a trip count)")
        else:
            raise TaskError(s, f"{type(s).__name__} statements are not supported in task kernels")

    def decl(self, d):
        if d.name is None:
            raise TaskError(d, "declaration without a name")
        tn = type_name(d.type)
        q = qualifiers(d.type) | set(d.quals or ())
        if isinstance(d.type, c_ast.ArrayDecl):
            count = self.const(d.type.dim, "an array size")
            if count <= 0:
                raise TaskError(d, f"array '{d.name}' has size {count}")
            if "L2BM" in q or "L1BM" in q:
                if tn not in ELEMS:
                    raise TaskError(d, f"L2BM/L1BM arrays hold scalars ({', '.join(ELEMS)}), not '{tn}'")
                p = self.static_array("lc" if "L2BM" in q else "lb", tn, count, d, d.name)
                self.declare(d.name, Var("ptr", p), d)
            elif "DRAM" in q:
                raise TaskError(d, "DRAM arrays cannot be declared in a kernel: pass a buffer")
            elif tn in VECS:
                self.declare(d.name, Var("vecarr", (VECS[tn], self.lm_array(VECS[tn], count, d)), count=count, name=d.name), d)
            elif tn == "mn_event":
                self.declare(d.name, Var("event", self.new_event(d.name, count, d)), d)
            else:
                raise TaskError(d, f"private arrays in task kernels hold per-PE vectors ({', '.join(VECS)}) "
                                   f"or events, not '{tn}'")
            if d.init is not None:
                raise TaskError(d, "arrays in task kernels cannot have initialisers")
            return
        if isinstance(d.type, c_ast.PtrDecl):
            if d.init is None:
                raise TaskError(d, f"pointer '{d.name}' needs an initial value")
            p = self.ptr_expr(d.init)
            if tn != p.elem:
                raise TaskError(d, f"pointer '{d.name}' to '{tn}' initialised with a pointer to '{p.elem}'")
            self.declare(d.name, Var("ptr", p), d)
            return
        if tn in VECS:
            vt = VECS[tn]
            if vt.uniform:
                raise TaskError(d, f"{tn} values live in arrays (fill them with mn_split_cycles)")
            loc = self.named(vt, d)
            self.declare(d.name, Var("vec", V(vt, loc)), d)
            if d.init is not None:
                self.store_vec(V(vt, loc), self.vec_expr(d.init, vt), d)
            return
        if tn == "mn_event":
            ev = self.new_event(d.name, 1, d)
            self.declare(d.name, Var("event", ev), d)
            if d.init is not None:
                self.async_into(ev, 0, d.init)
            return
        if tn in SCALARS or tn in ("short", "ushort", "char", "uchar"):
            if "const" in q and d.init is not None:
                v = self.uexpr(d.init)
                if v.const is not None:
                    self.declare(d.name, Var("u", v), d)
                    return
            reg = f"v{self.nregs}_{d.name}"
            self.nregs += 1
            self.declare(d.name, Var("u", U(f"%{reg}"), reg), d)
            if d.init is not None:
                self.seq(SeqSet(f"%{reg}", self.uexpr(d.init).text))
            return
        raise TaskError(d, f"type '{tn}' is not supported in task kernels (uniform integers, DRAM/L2BM/L1BM "
                           f"pointers, per-PE vectors {', '.join(VECS)}, mn_event)")

    def new_event(self, name, count, node):
        if self.next_tag + count > abi.TASK_EVENT_TAGS.stop:
            raise TaskError(node, f"more than {len(abi.TASK_EVENT_TAGS)} events in one kernel")
        tags = list(range(self.next_tag, self.next_tag + count))
        self.next_tag += count
        for t in tags:                   # run-time state, for the checks the compiler cannot decide
            self.seq(SeqSet(f"%ev{t}", "0"))
        return Event(name, tags, ["idle"] * count)

    def expr_stmt(self, s):
        if isinstance(s, c_ast.FuncCall):
            self.call(s, want=None)
        elif isinstance(s, c_ast.UnaryOp) and s.op in ("p++", "++", "p--", "--"):
            var = self.uvar(s.expr)
            self.seq(SeqSet(f"%{var.reg}", f"(%{var.reg}{'+' if '+' in s.op else '-'}1)"))
        elif isinstance(s, c_ast.Assignment):
            self.assign(s)
        else:
            raise TaskError(s, "this expression does nothing")

    def uvar(self, n):
        if not isinstance(n, c_ast.ID):
            raise TaskError(n, "only named integer variables can be assigned here")
        var = self.lookup(n.name, n)
        if var.kind != "u" or not var.reg:
            raise TaskError(n, f"'{n.name}' cannot be assigned")
        if var.reg.startswith("p") or var.reg.startswith("loop"):
            raise TaskError(n, f"'{n.name}' is a kernel argument or loop counter and cannot be assigned")
        return var

    def assign(self, s):
        target = self.chosen(s.lvalue)
        if isinstance(target, c_ast.ID) and self.lookup(target.name, target).kind == "u":
            var = self.uvar(target)
            v = self.uexpr(s.rvalue)
            if s.op != "=":
                v = self.ubin(s.op[:-1], U(var.value.text), v, s)
            self.seq(SeqSet(f"%{var.reg}", v.text))
            return
        if isinstance(target, (c_ast.ID, c_ast.ArrayRef)):
            base = target.name if isinstance(target, c_ast.ArrayRef) else target
            var = self.lookup(base.name, base) if isinstance(base, c_ast.ID) else None
            if var is not None and var.kind == "event":
                idx = self.event_index(target, var)
                if s.op != "=":
                    raise TaskError(s, "events can only be assigned")
                self.async_into(var.value, idx, s.rvalue)
                return
            dst = self.vec_lvalue(target)
            if s.op == "=":
                self.store_vec(dst, self.vec_expr(s.rvalue, dst.vt), s)
            else:
                val = self.vec_binary(s.op[:-1], dst, self.vec_expr(s.rvalue, dst.vt), s)
                self.store_vec(dst, val, s)
            return
        raise TaskError(s, "this cannot be assigned in a task kernel")

    def for_loop(self, s):
        if not isinstance(s.init, c_ast.DeclList) or len(s.init.decls) != 1:
            raise TaskError(s, "task-kernel loops are counted: 'for (int i = a; i < b; i += c)'")
        d = s.init.decls[0]
        name = d.name
        start = self.uexpr(d.init) if d.init is not None else None
        cond = s.cond
        if start is None or not (isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=", "!=")
                                 and isinstance(cond.left, c_ast.ID) and cond.left.name == name):
            raise TaskError(s, f"task-kernel loops are counted: 'for (int {name} = a; {name} < b; {name}++)'")
        step = self.loop_step(s.next, name)
        self.scopes.append({})
        self.declare(name, Var("u", start), d)     # the bound may not mention the counter
        stop = self.uexpr(cond.right)
        self.scopes.pop()
        if cond.op == "<=":
            stop = self.ubin("+", stop, U.k(1), s)
        if start.const is not None and stop.const is not None:
            trips = len(range(start.const, stop.const, step))
            if trips <= UNROLL:
                for v in range(start.const, stop.const, step):
                    self.scopes.append({name: Var("u", U.k(v))})
                    self.body(s.stmt)
                    self.scopes.pop()
                return
        reg = f"loop{self.nregs}_{name}"
        self.nregs += 1
        self.forget_events()
        loop = SeqLoop(f"%{reg}", start.text, stop.text, [], str(step))
        self.seq(loop)
        outer, self.items = self.items, loop.body
        self.scopes.append({name: Var("u", U(f"%{reg}"), reg)})
        self.body(s.stmt)
        self.scopes.pop()
        self.items = outer
        self.forget_events()

    def body(self, st):
        if isinstance(st, c_ast.Compound):
            self.block(st)
        else:
            self.stmt(st)

    def loop_step(self, nxt, name):
        if isinstance(nxt, c_ast.UnaryOp) and nxt.op in ("p++", "++") and getattr(nxt.expr, "name", None) == name:
            return 1
        if isinstance(nxt, c_ast.Assignment) and nxt.op == "+=" and getattr(nxt.lvalue, "name", None) == name:
            k = self.const(nxt.rvalue, "a loop step")
            if k > 0:
                return k
        raise TaskError(nxt, f"task-kernel loops count up: '{name}++' or '{name} += <positive constant>'")

    def forget_events(self):
        """Entering or leaving sequencer control flow: an event's state is known only at run time."""
        for ev in self.events():
            ev.state = ["unknown"] * len(ev.state)

    def if_stmt(self, s):
        c = self.uexpr(s.cond)
        if c.const is not None:
            if c.const:
                self.body(s.iftrue)
            elif s.iffalse is not None:
                self.body(s.iffalse)
            return
        node = SeqIf(c.text, [], [])
        self.seq(node)
        outer = self.items
        self.forget_events()
        self.items = node.then
        self.body(s.iftrue)
        if s.iffalse is not None:
            self.items = node.orelse
            self.body(s.iffalse)
        self.items = outer
        self.forget_events()

    # -- uniform expressions ------------------------------------------------------------------
    def const(self, n, what):
        v = self.uexpr(n)
        if v.const is None:
            raise TaskError(n, f"{what} must be a compile-time constant")
        return v.const

    def uexpr(self, n) -> U:
        if isinstance(n, c_ast.Constant):
            if n.type == "char":
                return U.k(parse_char(n.value))
            v = parse_int(n.value)[0] if n.type.endswith("int") else None
            if v is None:
                raise TaskError(n, f"uniform values are integers; '{n.value}' is not")
            return U.k(v)
        if isinstance(n, c_ast.ID):
            return self.lookup_kind(n.name, n, "u", "a uniform integer here")
        if isinstance(n, c_ast.BinaryOp):
            return self.ubin(n.op, self.uexpr(n.left), self.uexpr(n.right), n)
        if isinstance(n, c_ast.UnaryOp):
            if n.op == "-":
                v = self.uexpr(n.expr)
                return U.k(fold_unary("-", v.const)) if v.const is not None else U(f"(-{v.text})")
            if n.op == "!":
                v = self.uexpr(n.expr)
                return U.k(fold_unary("!", v.const)) if v.const is not None else U(f"({v.text}==0)")
            if n.op == "sizeof":
                tn = type_name(n.expr.type) if isinstance(n.expr, c_ast.Typename) else None
                if tn in ELEMS:
                    return U.k(ELEMS[tn][0])
                if tn in VECS:
                    return U.k(32 * VECS[tn].slots)
            raise TaskError(n, f"operator '{n.op}' is not supported on uniform integers")
        if isinstance(n, c_ast.TernaryOp):
            c, a, b = self.uexpr(n.cond), self.uexpr(n.iftrue), self.uexpr(n.iffalse)
            if c.const is not None:
                return a if c.const else b
            return U(f"({a.text} if {c.text} else {b.text})")
        if isinstance(n, c_ast.Cast):
            return self.uexpr(n.expr)
        if isinstance(n, c_ast.FuncCall):
            raise TaskError(n, f"'{getattr(n.name, 'name', '?')}' does not give a uniform integer")
        raise TaskError(n, f"{type(n).__name__} is not a uniform integer expression")

    def ubin(self, op, a, b, node):
        if op not in BINARY_OPS:
            raise TaskError(node, f"operator '{op}' is not supported on uniform integers")
        if op in ("/", "%") and b.const == 0:
            raise TaskError(node, "division by zero")
        if a.const is not None and b.const is not None:
            if op in ("<<", ">>") and b.const < 0:
                raise TaskError(node, f"shift by a negative amount ({b.const})")
            return U.k(fold_binary(op, a.const, b.const))
        if op == "+" and a.const == 0:
            return b
        if op in ("+", "-") and b.const == 0:
            return a
        if op == "*" and (a.const == 1 or b.const == 1):
            return b if a.const == 1 else a
        if op == "*" and (a.const == 0 or b.const == 0):
            return U.k(0)
        text = f"({a.text}{op}{b.text})"
        if op in ("+", "-") and (a.const is not None or b.const is not None):
            x, c = (b, a.const) if a.const is not None else (a, b.const)
            if op == "-" and b.const is None:          # c - x: no split
                return U(text)
            return U(text, dyn=x.dyn, add=x.add + (c if op == "+" else -c))
        if op == "*" and (a.const is not None or b.const is not None):
            x, c = (b, a.const) if a.const is not None else (a, b.const)
            return U(text, dyn=f"({x.dyn})*{c}", add=x.add * c)
        return U(text)

    # -- pointers ---------------------------------------------------------------------------------
    def ptr_expr(self, n) -> Ptr:
        if isinstance(n, c_ast.ID):
            return self.lookup_kind(n.name, n, "ptr", "a DRAM, L2BM or L1BM pointer")
        if isinstance(n, c_ast.BinaryOp) and n.op in ("+", "-"):
            p = self.ptr_expr(n.left)
            k = self.uexpr(n.right)
            off = self.ubin("*", k, U.k(ELEMS[p.elem][0]), n)
            return Ptr(p.space, p.elem, p.base, p.size, self.ubin(n.op, p.off, off, n), p.const, p.name)
        if isinstance(n, c_ast.UnaryOp) and n.op == "&" and isinstance(n.expr, c_ast.ArrayRef):
            return self.ptr_expr(c_ast.BinaryOp("+", n.expr.name, n.expr.subscript, n.coord))
        if isinstance(n, c_ast.Cast):
            return self.ptr_expr(n.expr)
        if isinstance(n, c_ast.TernaryOp):
            c = self.const(n.cond, "a condition choosing between pointers")
            return self.ptr_expr(n.iftrue if c else n.iffalse)
        raise TaskError(n, "expected a DRAM, L2BM or L1BM pointer")

    def longs(self, p: Ptr, n_elems, unit_longs, node, what, writes=False):
        """The long-word address of a transfer of n elements at p: checks size, alignment and bounds."""
        if writes and p.const:
            raise TaskError(node, f"{what} writes through '{p.name}', a pointer to const")
        size = n_elems * ELEMS[p.elem][0]
        if size <= 0 or size % (8 * unit_longs):
            raise TaskError(node, f"{what}: {n_elems} x {p.elem} is {size} bytes; this transfer moves "
                                  f"whole units of {unit_longs} long words ({8 * unit_longs} bytes)")
        off = p.off
        if off.const is not None:
            if off.const % 8:
                raise TaskError(node, f"{what}: the address is not a whole long word (byte {off.const} of "
                                      f"'{p.name}')")
            if off.const < 0 or (p.size.const is not None and off.const + size > p.size.const):
                raise TaskError(node, f"{what}: {size} bytes at byte {off.const} are outside '{p.name}' "
                                      f"({p.size.const} bytes)")
        if off.const is None or p.size.const is None:        # decided at run time, before the transfer
            out = f"{off.const + size}>{p.size.text}" if off.const is not None else \
                f"({off.text})<0||({off.text})+{size}>{p.size.text}"
            checks = [(out, f"{size} bytes are outside '{p.name}'")]
            if off.const is None:
                checks.insert(0, (f"({off.text})%8!=0", "the address is not a whole long word"))
            for cond, msg in checks:
                self.fault_if(cond, f"{what}: {msg}")
        return self.ubin("/", self.ubin("+", p.base, off, node), U.k(8), node)

    # -- vectors ----------------------------------------------------------------------------------
    def chosen(self, n):
        """n, or the branch a compile-time condition picks of `c ? a : b` (an unrolled loop's
        counter choosing between arrays: `(t % 2 ? fb : fa)[i]` as `t % 2 ? fb[i] : fa[i]`)."""
        while isinstance(n, c_ast.TernaryOp):
            n = n.iftrue if self.const(n.cond, "a condition choosing between vectors") else n.iffalse
        return n

    def vec_lvalue(self, n) -> V:
        n = self.chosen(n)
        if isinstance(n, c_ast.ID):
            return self.lookup_kind(n.name, n, "vec", "a per-PE vector")
        if isinstance(n, c_ast.ArrayRef) and isinstance(n.name, c_ast.ID):
            var = self.lookup(n.name.name, n.name)
            if var.kind != "vecarr":
                raise TaskError(n, f"'{n.name.name}' is not an array of per-PE vectors")
            return V(var.value[0], self.element(var, self.uexpr(n.subscript), n))
        raise TaskError(n, "expected a per-PE vector")

    def element(self, var, i: U, n) -> Loc:
        """Element i of a private vector array: a static address plus, for a run-time index, the
        block's offset in that LM (checked against the array's length before the block runs)."""
        vt, base = var.value
        stride = 0 if vt.uniform else 1
        if i.const is not None:
            if not 0 <= i.const < var.count:
                raise TaskError(n, f"index {i.const} is outside '{var.name}' ({var.count} elements)")
            return Loc(base.space, base.addr + vt.words * i.const, vt.slots, stride=stride)
        self.fault_if(f"{i.text}<0||{i.text}>={var.count}", f"index outside '{var.name}' ({var.count} elements)")
        if not 0 <= i.add < var.count:
            return Loc(base.space, base.addr, vt.slots, offset=f"{i.text}*{vt.words}", stride=stride)
        return Loc(base.space, base.addr + vt.words * i.add, vt.slots, offset=f"{i.dyn}*{vt.words}", stride=stride)

    def store_vec(self, dst: V, val: V, node):
        if dst.vt != val.vt:
            raise TaskError(node, f"assigning {val.vt.name} to {dst.vt.name}")
        if val.loc == dst.loc or self.retarget(val.loc, dst.loc):
            return
        self.copy(val.loc, dst.loc, node)

    def copy(self, src: Loc, dst: Loc, node):
        w = "ll" if src.slots == 2 and src.stride == 1 else "l"
        src = self.legal(src, dst, node)
        self.emit(f"lpassa {src.operand(w)} {dst.operand(w)}", "alu", [src], [dst])

    def legal(self, src: Loc, dst: Loc, node) -> Loc:
        """src, copied into a temporary if one instruction cannot read it and write dst."""
        return self.to_temp(src, node) if _clash(src, dst) else src

    def operands(self, locs, dst, node):
        """Sources one instruction can read together (and write dst with), copying where needed."""
        out = []
        for x in locs:
            if any(_clash(x, y) for y in out) or (dst is not None and _clash(x, dst)):
                x = self.to_temp(x, node)
            out.append(x)
        return out

    def to_temp(self, x: Loc, node) -> Loc:
        t = self.temp(x.slots, node)
        self.emit(f"lpassa {x.operand('ll' if x.slots == 2 and x.stride == 1 else 'l')} {t.operand()}",
                  "alu", [x], [t])
        return t

    def vec_expr(self, n, want: VecType | None = None) -> V:
        if isinstance(n, c_ast.Constant) and want is not None:
            return self.splat_const(n, want)
        if isinstance(n, c_ast.UnaryOp) and n.op == "-" and want is not None and isinstance(n.expr, c_ast.Constant):
            return self.splat_const(n, want)
        if isinstance(n, (c_ast.ID, c_ast.ArrayRef)):
            if isinstance(n, c_ast.ID):
                var = self.lookup(n.name, n)
                if var.kind == "u" and want is not None:
                    raise TaskError(n, f"'{n.name}' is a uniform integer, not a {want.name}")
            return self.vec_lvalue(n)
        if isinstance(n, c_ast.BinaryOp):
            a = self.vec_expr(n.left, want if not isinstance(n.left, c_ast.Constant) else None) \
                if not isinstance(n.left, c_ast.Constant) else None
            b = self.vec_expr(n.right, a.vt if a else want)
            if a is None:
                a = self.vec_expr(n.left, b.vt)
            return self.vec_binary(n.op, a, b, n)
        if isinstance(n, c_ast.FuncCall):
            v = self.call(n, want)
            if v is None:
                raise TaskError(n, f"'{n.name.name}' gives no value")
            return v
        if isinstance(n, c_ast.TernaryOp):
            return self.vec_expr(self.chosen(n), want)
        if isinstance(n, c_ast.Cast):
            raise TaskError(n, "per-PE vectors have no casts: use mn_* conversions")
        raise TaskError(n, f"{type(n).__name__} is not a per-PE vector expression")

    def splat_const(self, n, vt: VecType) -> V:
        """A literal (or its negation) in every lane of a vt."""
        x = self.literal(n, vt)
        if vt.prec == "f":
            try:
                bits = struct.unpack("<I", struct.pack("<f", x))[0]
            except OverflowError:
                raise TaskError(n, f"{x} is outside the range of float") from None
        elif vt.prec == "i":
            bits = x & 0xFFFFFFFF
        elif vt.prec == "l":
            bits = x & 0xFFFFFFFFFFFFFFFF
        else:
            h = int(f32_to_mnhalf(np.array([x], np.float32))[0])
            bits = h * 0x0001000100010001
        t = self.temp(vt, n)
        if bits == 0:
            self.emit(f"zero {t.operand()}", "alu", [], [t])
        elif vt.prec in ("f", "i"):
            self.emit(f"imm 0x{bits:08x} {t.operand('l')}", "alu", [], [t])
            if vt.slots == 2:
                self.emit(f"imm 0x{bits:08x} {Loc('s', t.addr + 2, 1, stride=2).operand()}", "alu", [], [t])
        else:
            self.emit(f"limm 0x{bits:016x} {t.operand('l')}", "alu", [], [t])
        return V(vt, t)

    @staticmethod
    def literal(n, vt: VecType):
        """The value of the literal n or -literal, read as the front end reads it (constfold): a
        float for a float or half vector, an integer for an integer one."""
        neg = isinstance(n, c_ast.UnaryOp)
        c = n.expr if neg else n
        if c.type == "char":
            v = parse_char(c.value)
        elif c.type.endswith("int"):
            v = parse_int(c.value)[0]
        else:
            v = parse_float(c.value)[0]
        if v is None or (vt.prec in ("i", "l") and isinstance(v, float)):
            raise TaskError(n, f"'{c.value}' is not {'an integer' if vt.prec in ('i', 'l') else 'a number'} "
                               f"(the lanes of {vt.name})")
        if vt.prec in ("f", "h"):
            v = float(v)
        return -v if neg else v

    def vec_binary(self, op, a: V, b: V, node) -> V:
        if a.vt != b.vt:
            raise TaskError(node, f"'{op}' between {a.vt.name} and {b.vt.name}")
        vt = a.vt
        if vt.prec in ("f", "h") and op in ("+", "-", "*"):
            if vt.prec == "h":
                raise TaskError(node, "mnhalf16 arithmetic gives mnfloat16: use mn_fma / mn_mul / mn_add")
            mne = {"+": "vadd", "-": "vadd", "*": "vmul"}[op]
            out = self.temp(vt, node)
            for part in range(vt.slots):
                xa, xb, xo = (self.half(a.loc, part), self.half(b.loc, part), self.half(out, part))
                xa, xb = self.operands([xa, xb], xo, node)
                neg = "-" if op == "-" else ""
                self.emit(f"f{mne} {xa.operand()} {neg}{xb.operand()} {xo.operand()}", "mau", [xa, xb], [xo])
            return V(vt, out)
        if vt.prec in ("i", "l") and op in ("+", "-", "&", "|", "^", "<<", ">>"):
            mne = {"+": "add", "-": "sub", "&": "and", "|": "or", "^": "xor", "<<": "lsl", ">>": "lsr"}[op]
            out = self.temp(vt, node)
            xa, xb = self.operands([a.loc, b.loc], out, node)
            self.emit(f"{vt.prec}{mne} {xa.operand()} {xb.operand()} {out.operand()}", "alu", [xa, xb], [out])
            return V(vt, out)
        raise TaskError(node, f"operator '{op}' is not defined on {vt.name}")

    @staticmethod
    def half(loc: Loc, part):
        """The 4-long-word view of part 0/1 of a value (the first / second long word of each cycle)."""
        if loc.slots == 1:
            return loc
        return Loc(loc.space, loc.addr + 2 * part, 1, loc.offset, 2, loc.regs)

    # -- builtins ---------------------------------------------------------------------------------
    def call(self, n, want):
        name = getattr(n.name, "name", None)
        args = list(n.args.exprs) if n.args else []
        fn = getattr(self, "b_" + (name or ""), None)
        if fn is None or not name.startswith("mn_"):
            raise TaskError(n, f"'{name}' is not a task-kernel builtin (docs/language.md, 'Task kernels')")
        return fn(n, args, want)

    def nargs(self, n, args, *counts):
        if len(args) not in counts:
            raise TaskError(n, f"'{n.name.name}' takes {' or '.join(map(str, counts))} arguments, not {len(args)}")

    def b_mn_wait(self, n, args, want):
        self.nargs(n, args, 1)
        a = args[0]
        name = a.name if isinstance(a, c_ast.ID) else getattr(getattr(a, "name", None), "name", None)
        var = self.lookup(name, a) if name else None
        if var is None or var.kind != "event":
            raise TaskError(n, "mn_wait takes an mn_event")
        ev = var.value
        i = self.event_index(args[0], var)
        self.event_must_be(ev, i, "pending", n, f"waiting on event '{ev.label(i)}', which has no transfer in "
                                                f"flight (waited twice, or never started)")
        self.emit(f"wait i{ev.tags[i]}", "wait")
        self.seq(SeqSet(f"%ev{ev.tags[i]}", "0"))
        ev.state[i] = "idle"

    def event_index(self, n, var):
        if isinstance(n, c_ast.ID):
            if len(var.value.tags) != 1:
                raise TaskError(n, f"'{var.value.name}' is an array of events: index it")
            return 0
        i = self.const(n.subscript, "an event array index (unroll the loop: its trip count must be a "
                                    "constant)")
        if not 0 <= i < len(var.value.tags):
            raise TaskError(n, f"index {i} is outside '{var.value.name}' ({len(var.value.tags)} events)")
        return i

    def async_into(self, ev: Event, i, rhs):
        if not (isinstance(rhs, c_ast.FuncCall) and getattr(rhs.name, "name", "").endswith("_async")):
            raise TaskError(rhs, "an mn_event takes the result of an mn_*_async transfer")
        self.event_must_be(ev, i, "idle", rhs, f"event '{ev.label(i)}' still has a transfer in flight: wait "
                                               f"for it before reusing it")
        name = rhs.name.name[:-len("_async")]
        fn = getattr(self, "b_" + name, None)
        if fn is None or name not in MV_BUILTINS:
            raise TaskError(rhs, f"'{rhs.name.name}' is not an asynchronous transfer (those are "
                                 f"{', '.join(b + '_async' for b in MV_BUILTINS)})")
        fn(rhs, list(rhs.args.exprs) if rhs.args else [], None, tag=ev.tags[i])
        self.seq(SeqSet(f"%ev{ev.tags[i]}", "1"))
        ev.state[i] = "pending"
        ev.started[i] = self.line

    # DRAM <-> L2BM: MV statements
    def mv(self, n, form, dst, src, count, tag, group=None, l2b=None, rop=None, name=""):
        """DRAM <-> L2BM: one MV statement (and, unless asynchronous, its wait)."""
        nl = count * ELEMS[src.elem][0] // 8
        L = self.m.l2b_per_group
        unit = 64 * L if form == "mvd" else 64
        if count * ELEMS[src.elem][0] % (8 * unit):
            raise TaskError(n, f"{name}: {count} x {src.elem} is {count * ELEMS[src.elem][0]} bytes; DRAM <-> L2BM "
                               f"transfers move whole units of {unit} long words ({8 * unit} bytes)")
        per_l2b = count // L if form == "mvd" else count           # what each L2BM sends or receives
        dl = self.longs(dst, per_l2b if dst.space == "lc" else count, 1, n, name, writes=True)
        sl = self.longs(src, per_l2b if src.space == "lc" else count, 1, n, name)
        t = tag if tag is not None else abi.TASK_SYNC_TAG
        where = {"d": "" if group is None else f"@{group}",
                 "lc": "" if l2b is None else f"@{'' if group is None else group}.{l2b}"}
        ops = f"${src.space}0{where[src.space]} ${dst.space}0{where[dst.space]}"
        offs = {src.space: sl.text.replace(" ", ""), dst.space: dl.text.replace(" ", "")}
        self.add_to_block(Op(f"{form}{rop or ''}/n{nl}i{t} {ops}", "mv", line=self.line), offs, new=True)
        if tag is None:
            self.emit(f"wait i{t}", "wait")

    def pair(self, n, args, k, name):
        if len(args) != k:
            raise TaskError(n, f"'{name}' takes {k} arguments, not {len(args)}")
        dst, src = self.ptr_expr(args[0]), self.ptr_expr(args[1])
        if dst.elem != src.elem:
            raise TaskError(n, f"'{name}': destination holds {dst.elem}, source {src.elem}")
        return dst, src, self.const(args[2], f"the size of '{name}' (it is part of the instruction)")

    def spaces(self, n, name, dst, src, allowed):
        key = (src.space, dst.space)
        if key not in allowed:
            have = f"{_SPACE_NAME[src.space]} -> {_SPACE_NAME[dst.space]}"
            ok = ", ".join(f"{_SPACE_NAME[a]} -> {_SPACE_NAME[b]}" for a, b in allowed)
            raise TaskError(n, f"'{name}' cannot move {have} (it moves {ok})")
        return key

    def group_arg(self, n, a, what="group"):
        g = self.const(a, f"the {what} (it is part of the instruction)")
        lim = self.m.groups if what == "group" else self.m.l2b_per_group
        if not 0 <= g < lim:
            raise TaskError(n, f"{what} {g} does not exist (the machine has {lim})")
        return g

    def b_mn_broadcast(self, n, args, want, tag=None):
        if len(args) == 1:                                   # L1BM -> every PE
            return self.pe_load(n, args[0], "l1bmp", "mn_broadcast")
        dst, src, count = self.pair(n, args, 3, "mn_broadcast")
        key = self.spaces(n, "mn_broadcast", dst, src, [("d", "lc"), ("lc", "lb")])
        if key == ("d", "lc"):
            return self.mv(n, "mvb2", dst, src, count, tag, name="mn_broadcast")
        self.l2bm_op(n, "l2bmb", dst, src, count, "mn_broadcast")

    def b_mn_broadcast_board(self, n, args, want, tag=None):
        self.nargs(n, args, 4)
        dst, src, count = self.pair(n, args[:3], 3, "mn_broadcast_board")
        self.spaces(n, "mn_broadcast_board", dst, src, [("d", "lc")])
        self.mv(n, "mvb", dst, src, count, tag, group=self.group_arg(n, args[3]), name="mn_broadcast_board")

    def b_mn_unicast(self, n, args, want, tag=None):
        self.nargs(n, args, 4, 5)
        dst, src, count = self.pair(n, args[:3], 3, "mn_unicast")
        self.spaces(n, "mn_unicast", dst, src, [("d", "lc"), ("lc", "d")])
        g = self.group_arg(n, args[3]) if len(args) == 5 else None
        l2b = self.group_arg(n, args[-1], "L2B")
        self.mv(n, "mvp", dst, src, count, tag, group=g, l2b=l2b, name="mn_unicast")

    def b_mn_distribute(self, n, args, want, tag=None):
        if len(args) == 1:
            return self.pe_load(n, args[0], "l1bmd", "mn_distribute")
        self.nargs(n, args, 3, 4)
        dst, src, count = self.pair(n, args[:3], 3, "mn_distribute")
        key = self.spaces(n, "mn_distribute", dst, src, [("d", "lc"), ("lc", "lb")])
        if key == ("d", "lc"):
            g = self.group_arg(n, args[3]) if len(args) == 4 else None
            return self.mv(n, "mvd", dst, src, count, tag, group=g, name="mn_distribute")
        if len(args) == 4:
            raise TaskError(n, "mn_distribute L2BM -> L1BM takes 3 arguments")
        self.l2bm_op(n, "l2bmd", dst, src, count, "mn_distribute")

    def b_mn_gather(self, n, args, want, tag=None):
        if len(args) == 2:                                   # PE -> L1BM
            return self.pe_store(n, args, "l1bmd", 4 * self.m.pe_per_l1b, "mn_gather")
        self.nargs(n, args, 3, 4)
        dst, src, count = self.pair(n, args[:3], 3, "mn_gather")
        key = self.spaces(n, "mn_gather", dst, src, [("lc", "d"), ("lb", "lc")])
        if key == ("lc", "d"):
            g = self.group_arg(n, args[3]) if len(args) == 4 else None
            return self.mv(n, "mvd", dst, src, count, tag, group=g, name="mn_gather")
        self.l2bm_op(n, "l2bmd", dst, src, count, "mn_gather", up=True)

    def reduce_op(self, n, a, elem):
        k = self.const(a, "the reduce operation (MN_ADD, MN_MAX, MN_MIN, MN_AND, MN_OR)")
        prefix = ELEMS[elem][2]
        names = {"d": ["dfadd", "dmax", "dmin"], "f": ["ffadd", "fmax", "fmin"], "h": ["hfadd", "hmax", "hmin"],
                 "l": ["liadd", None, None, "land", "lor"], "i": ["iiadd", None, None, "iand", "ior"],
                 "s": ["siadd", None, None, "sand", "sor"]}.get(prefix, [])
        if not 0 <= k < 5 or k >= len(names) or names[k] is None:
            raise TaskError(n, f"reduce operation {k} is not defined on {elem}")
        return names[k]

    def b_mn_reduce(self, n, args, want, tag=None):
        if len(args) == 3:                                     # PE -> L1BM, over the MABs
            dst = self.ptr_expr(args[0])
            rop = self.reduce_op(n, args[2], dst.elem)
            return self.pe_store(n, args[:2], "l1bmr" + rop, 4 * self.m.pe_per_mab, "mn_reduce")
        self.nargs(n, args, 4)
        dst, src, count = self.pair(n, args[:3], 3, "mn_reduce")
        rop = self.reduce_op(n, args[3], dst.elem)
        key = self.spaces(n, "mn_reduce", dst, src, [("lc", "d"), ("lb", "lc")])
        if key == ("lc", "d"):
            return self.mv(n, "mvr2", dst, src, count, tag, rop=rop, name="mn_reduce")
        self.l2bm_op(n, "l2bmr" + rop, dst, src, count, "mn_reduce", up=True)

    def b_mn_reduce_board(self, n, args, want, tag=None):
        self.nargs(n, args, 5)
        dst, src, count = self.pair(n, args[:3], 3, "mn_reduce_board")
        self.spaces(n, "mn_reduce_board", dst, src, [("lc", "d")])
        rop = self.reduce_op(n, args[4], dst.elem)
        self.mv(n, "mvr", dst, src, count, tag, group=self.group_arg(n, args[3]), rop=rop, name="mn_reduce_board")

    def l2bm_op(self, n, mne, dst, src, count, name, up=False):
        """L2BM <-> L1BM: one instruction per unit (l2bmd: 32 long words per L1B), unrolled."""
        lc, lb = (dst, src) if up else (src, dst)
        N = self.m.l1b_per_l2b
        dist = mne == "l2bmd"
        per_lc, per_lb = (32 * N, 32) if dist else (64, 64)
        a_lc = self.longs(lc, count, per_lc, n, name, writes=up)
        a_lb = self.longs(lb, count // N if dist else count, per_lb, n, name, writes=not up)
        steps = count * ELEMS[src.elem][0] // 8 // per_lc
        if steps > UNROLL:
            raise TaskError(n, f"'{name}' of {count} x {src.elem} takes {steps} instructions; at most {UNROLL} "
                               f"per call (loop over parts)")
        offs = {"lc": "0" if a_lc.const is not None else a_lc.text.replace(" ", ""),
                "lb": "0" if a_lb.const is not None else a_lb.text.replace(" ", "")}
        c0, b0 = a_lc.const or 0, a_lb.const or 0
        for k in range(steps):
            fc = ("lc", c0 + per_lc * k, c0 + per_lc * (k + 1))
            fb = ("lb", b0 + per_lb * k, b0 + per_lb * (k + 1))
            if up:
                self.emit(f"{mne} $lb{fb[1]} $lc{fc[1]}", "l2bm", [fb], [fc], offsets=offs)
            else:
                self.emit(f"{mne} $lc{fc[1]} $lb{fb[1]}", "l2bm", [fc], [fb], offsets=offs)

    def pe_load(self, n, a, mne, name) -> V:
        """L1BM -> every PE: one instruction; the result's vector type follows the pointer's elements."""
        p = self.ptr_expr(a)
        if p.space != "lb":
            raise TaskError(n, f"'{name}' to the PEs reads L1BM, not {_SPACE_NAME[p.space]}")
        vt = VECS[VEC_OF_ELEM.get(p.elem, "mnlong4")]
        span = {"l1bmp": 4, "l1bmm": 16, "l1bmd": 4 * self.m.pe_per_l1b}[mne]     # long words read
        lw = self.longs(p, span * 8 // ELEMS[p.elem][0], span, n, name)
        t = self.temp(vt, n)
        off = "0" if lw.const is not None else lw.text.replace(" ", "")
        a0 = lw.const or 0
        self.emit(f"{mne} $lb{a0} {t.operand('l')}", "l1bm", [("lb", a0, a0 + span)], [t], offsets={"lb": off})
        return V(vt, t)

    def b_mn_broadcast_mabs(self, n, args, want, tag=None):
        self.nargs(n, args, 1)
        return self.pe_load(n, args[0], "l1bmm", "mn_broadcast_mabs")

    def pe_store(self, n, args, mne, span, name):
        p = self.ptr_expr(args[0])
        if p.space != "lb":
            raise TaskError(n, f"'{name}' from the PEs writes L1BM, not {_SPACE_NAME[p.space]}")
        v = self.vec_expr(args[1])
        if v.vt.slots != 1:
            raise TaskError(n, f"'{name}' moves 4-long-word vectors; take mn_lo / mn_hi of a {v.vt.name}")
        lw = self.longs(p, span * 8 // ELEMS[p.elem][0], span, n, name, writes=True)
        off = "0" if lw.const is not None else lw.text.replace(" ", "")
        a0 = lw.const or 0
        self.emit(f"{mne} {v.loc.operand('l')} $lb{a0}", "l1bm", [v.loc], [("lb", a0, a0 + span)],
                  offsets={"lb": off})

    # per-PE vector builtins
    def b_mn_fma(self, n, args, want, tag=None):
        self.nargs(n, args, 3)
        a, b = self.vec_expr(args[0]), self.vec_expr(args[1])
        c = self.vec_expr(args[2], VECS["mnfloat16"] if a.vt.prec == "h" else a.vt)
        if a.vt.prec != b.vt.prec or a.vt.prec not in ("h", "f") or a.vt.slots != 1 or a.vt.uniform:
            raise TaskError(n, "mn_fma takes (mnhalf16, mnhalf16 or mnhalf4, mnfloat16) or (mnfloat8, mnfloat8 or "
                               "mnfloat2, mnfloat8)")
        out_t = VECS["mnfloat16"] if a.vt.prec == "h" else a.vt
        if c.vt != out_t:
            raise TaskError(n, f"mn_fma of {a.vt.name} adds a {out_t.name}, not a {c.vt.name}")
        out = self.temp(out_t, n)
        xa, xb, xc = self.operands([a.loc, b.loc, c.loc], out, n)
        self.emit(f"{a.vt.prec}vfma {xa.operand('l')} {xb.operand('l')} {xc.operand()} {out.operand()}", "mau",
                  [xa, xb, xc], [out])
        return V(out_t, out)

    def b_mn_mul(self, n, args, want, tag=None):
        return self.half_op(n, args, "hvmul", "mn_mul")

    def b_mn_add(self, n, args, want, tag=None):
        return self.half_op(n, args, "hvadd", "mn_add")

    def half_op(self, n, args, mne, name):
        """mnhalf16 (op) mnhalf16 -> mnfloat16: the MAU's half operations give four floats a cycle."""
        self.nargs(n, args, 2)
        a, b = self.vec_expr(args[0]), self.vec_expr(args[1])
        if a.vt.name != "mnhalf16" or b.vt.prec != "h":
            raise TaskError(n, f"{name} takes two mnhalf16 (or an mnhalf16 and an mnhalf4)")
        out = self.temp(VECS["mnfloat16"], n)
        xa, xb = self.operands([a.loc, b.loc], out, n)
        self.emit(f"{mne} {xa.operand('l')} {xb.operand('l')} {out.operand()}", "mau", [xa, xb], [out])
        return V(VECS["mnfloat16"], out)

    # the matrix unit: one matrix register ($lx) per MAB
    MATRIX = {"mnhalf16": ("h", "mnfloat16"), "mnfloat8": ("g", "mnfloat8")}

    def matrix_prec(self, n, v, name):
        if v.vt.name not in self.MATRIX:
            raise TaskError(n, f"{name} takes an mnhalf16 (16 x 16 half matrix) or an mnfloat8 (8 x 8 fp32)")
        return self.MATRIX[v.vt.name]

    def b_mn_matrix_rows(self, n, args, want, tag=None):
        """mn_matrix_rows(row, v): rows row..row+3 of the MAB's matrix register from v's 4 cycles,
        column 4p + lane (halves; fp32: 2p + lane) from PE p."""
        self.nargs(n, args, 2)
        row = self.const(args[0], "the matrix row")
        v = self.vec_expr(args[1])
        prec, _ = self.matrix_prec(n, v, "mn_matrix_rows")
        size = 16 if prec == "h" else 8
        if row % 4 or not 0 <= row <= size - 4:
            raise TaskError(n, f"mn_matrix_rows: the row is 0, 4, ..{size - 4} (4 rows per write)")
        mat = self.matrix_reg()
        self.emit(f"{prec}mwrite {v.loc.operand('l')} $lx{row}", "mau", [v.loc], [], mask_w=None,
                  mat_w=mat)

    def matrix_reg(self):
        if not hasattr(self, "_matrix"):
            self._matrix = MaskReg()             # a register the scheduler orders writes and reads by
            self.alloc[self._matrix] = ("matrix", 0)
        return self._matrix

    def b_mn_matrix_vector(self, n, args, want, tag=None):
        """A b for each cycle's b spread over the MAB's PEs (the MAU's matrix-vector mode);
        mn_matrix_vector(b, c) adds c."""
        self.nargs(n, args, 1, 2)
        b = self.vec_expr(args[0])
        prec, out_name = self.matrix_prec(n, b, "mn_matrix_vector")
        out_t = VECS[out_name]
        out = self.temp(out_t, n)
        mat = self.matrix_reg()
        if len(args) == 2:
            c = self.vec_expr(args[1], out_t)
            if c.vt != out_t:
                raise TaskError(n, f"mn_matrix_vector of {b.vt.name} adds a {out_t.name}, not a {c.vt.name}")
            xb, xc = self.operands([b.loc, c.loc], out, n)
            self.emit(f"{prec}mfma $lx {xb.operand('l')} {xc.operand()} {out.operand()}", "mau", [xb, xc], [out],
                      mat_r=mat)
        else:
            self.emit(f"{prec}mmul $lx {b.loc.operand('l')} {out.operand()}", "mau", [b.loc], [out], mat_r=mat)
        return V(out_t, out)

    def b_mn_block_float(self, n, args, want, tag=None):
        """The matrix unit's block-float form (bfn): each cycle's values across the MAB share the
        largest exponent (docs/isa.md)."""
        self.nargs(n, args, 1)
        v = self.vec_expr(args[0])
        prec, _ = self.matrix_prec(n, v, "mn_block_float")
        out = self.temp(v.vt, n)
        self.emit(f"{prec}bfn {v.loc.operand('l')} {out.operand('l')}", "alu", [v.loc], [out])
        return V(v.vt, out)

    def b_mn_splat(self, n, args, want, tag=None):
        """Every long word of the result holds copies of its lane h (mnhalf16: 4 halves, h 0..3;
        mnfloat8: 2 floats, h 0..1; lane 0 is the most significant)."""
        self.nargs(n, args, 2)
        v = self.vec_expr(args[0])
        bits = {"mnhalf16": 16, "mnfloat8": 32}.get(v.vt.name)
        if bits is None:
            raise TaskError(n, "mn_splat takes an mnhalf16 or an mnfloat8")
        h = self.const(args[1], "the lane")
        if not 0 <= h < 64 // bits:
            raise TaskError(n, f"mn_splat: the lane of a {v.vt.name} is 0..{64 // bits - 1}")
        k = self.consts
        t, u = self.temp(1, n), self.temp(1, n)
        sh = 64 - bits * (h + 1)
        x = v.loc
        if sh:
            self.emit(f"ulsr {x.operand()} {k(sh, n).operand()} {t.operand()}", "alu", [x, k(sh, n)], [t])
            x = t
        if h:                                   # keep the lane only
            m = k((1 << bits) - 1, n)
            self.emit(f"land {x.operand()} {m.operand()} {t.operand()}", "alu", [x, m], [t])
            x = t
        while bits < 64:                        # double it up: 16 -> 32 -> 64 bits
            self.emit(f"llsl {x.operand()} {k(bits, n).operand()} {u.operand()}", "alu", [x, k(bits, n)], [u])
            self.emit(f"lor {x.operand()} {u.operand()} {t.operand()}", "alu", [x, u], [t])
            x, bits = t, 2 * bits
        return V(v.vt, t)

    def b_mn_swap_lanes(self, n, args, want, tag=None):
        """The two 32-bit lanes of every long word exchanged (mnfloat8, mnint8): 3 ALU steps.  What
        a layout with two cells in a long word needs where the cells' neighbours cross lanes."""
        v = self.two_lanes(n, args, want, "mn_swap_lanes")
        t, u = self.shift32(v, "ulsr", n), self.shift32(v, "llsl", n)
        self.emit(f"lor {t.operand()} {u.operand()} {t.operand()}", "alu", [t, u], [t])
        return V(v.vt, t)

    def b_mn_lanes_up(self, n, args, want, tag=None):
        """Lane 1 of every long word into lane 0, lane 1 zero (lane 0 is the most significant)."""
        v = self.two_lanes(n, args, want, "mn_lanes_up")
        return V(v.vt, self.shift32(v, "llsl", n))

    def b_mn_lanes_down(self, n, args, want, tag=None):
        """Lane 0 of every long word into lane 1, lane 0 zero."""
        v = self.two_lanes(n, args, want, "mn_lanes_down")
        return V(v.vt, self.shift32(v, "ulsr", n))

    def two_lanes(self, n, args, want, name) -> V:
        """The one argument of a lane builtin: an mnfloat8 or mnint8 (two 32-bit lanes a long word)."""
        self.nargs(n, args, 1)
        v = self.vec_expr(args[0], want)
        if v.vt.name not in ("mnfloat8", "mnint8"):
            raise TaskError(n, f"{name} takes an mnfloat8 or an mnint8")
        return v

    def shift32(self, v: V, mne, n) -> Loc:
        """v's long words shifted by 32 bits (llsl: up, ulsr: down) into a temporary: one ALU step."""
        k = self.consts(32, n)
        t = self.temp(1, n)
        self.emit(f"{mne} {v.loc.operand()} {k.operand()} {t.operand()}", "alu", [v.loc, k], [t])
        return t

    def b_mn_split_cycles(self, n, args, want, tag=None):
        """mn_split_cycles(arr, i, stride, v): arr[i + c * stride] = cycle c's long word of v."""
        self.nargs(n, args, 4)
        var = self.lookup(args[0].name, args[0]) if isinstance(args[0], c_ast.ID) else None
        if var is None or var.kind != "vecarr" or not var.value[0].uniform:
            raise TaskError(n, "mn_split_cycles writes into an array of mnhalf4 or mnfloat2")
        vt = var.value[0]
        stride = self.const(args[2], "the stride")
        v = self.vec_expr(args[3])
        if v.vt.slots != 1 or v.vt.uniform or v.vt.prec != vt.prec:
            raise TaskError(n, f"mn_split_cycles into {vt.name} takes a {'mnhalf16' if vt.prec == 'h' else 'mnfloat8'}")
        i = self.uexpr(args[1])
        last = self.ubin("+", i, U.k(3 * stride), n)
        first = self.element(var, i, n)
        self.element(var, last, n)                       # the last element written is inside too
        dst = Loc(first.space, first.addr, 1, first.offset, stride)
        src = self.legal(v.loc, dst, n)
        self.emit(f"lpassa {src.operand('l')} {dst.operand('l')}", "alu", [src], [dst])

    def consts(self, value, node):
        """A register holding a 64-bit constant in every long word (made once per statement)."""
        if value not in self._consts:
            t = self.temp(1, node)
            self.emit(f"limm 0x{value:016x} {t.operand('l')}", "alu", [], [t])
            self._consts[value] = t
        return self._consts[value]

    def b_mn_msl(self, n, args, want, tag=None):
        return self.shift_pes(n, args, "msl")

    def b_mn_msr(self, n, args, want, tag=None):
        return self.shift_pes(n, args, "msr")

    def shift_pes(self, n, args, mne):
        self.nargs(n, args, 1)
        v = self.vec_expr(args[0])
        out = self.temp(v.vt, n)
        for part in range(v.vt.slots):
            x, o = self.half(v.loc, part), self.half(out, part)
            self.emit(f"{mne} {x.operand()} {o.operand()}", "alu", [x], [o])
        return V(v.vt, out)

    def b_mn_lo(self, n, args, want, tag=None):
        return self.view(n, args, 0)

    def b_mn_hi(self, n, args, want, tag=None):
        return self.view(n, args, 1)

    def view(self, n, args, part):
        self.nargs(n, args, 1)
        v = self.vec_expr(args[0])
        if v.vt.name != "mnfloat16":
            raise TaskError(n, "mn_lo / mn_hi take an mnfloat16")
        return V(VECS["mnfloat8"], self.half(v.loc, part))

    def b_mn_max(self, n, args, want, tag=None):
        return self.larger(n, args, want, "max")

    def b_mn_min(self, n, args, want, tag=None):
        return self.larger(n, args, want, "min")

    def larger(self, n, args, want, op):
        """mn_max / mn_min per 32-bit lane of two mnfloat8 or mnint8: one ALU step (fmax, imin ...)."""
        self.nargs(n, args, 2)
        a = self.vec_expr(args[0], want)
        b = self.vec_expr(args[1], a.vt)
        p = {"mnfloat8": "f", "mnint8": "i"}.get(a.vt.name)
        if a.vt != b.vt or p is None:
            raise TaskError(n, f"mn_{op} takes two mnfloat8 or two mnint8, not {a.vt.name} and {b.vt.name}")
        out = self.temp(a.vt, n)
        xa, xb = self.operands([a.loc, b.loc], out, n)
        self.emit(f"{p}{op} {xa.operand()} {xb.operand()} {out.operand()}", "alu", [xa, xb], [out])
        return V(a.vt, out)

    def b_mn_select(self, n, args, want, tag=None):
        """c ? a : b per 32-bit lane, c an mnint8, or x == y / x != y (bits: mnint8 or mnfloat8), or
        x < y, x > y, x <= y, x >= y (mnfloat8 or mnint8: the flag of one max)."""
        self.nargs(n, args, 3)
        c = args[0]
        a = self.vec_expr(args[1], want)
        b = self.vec_expr(args[2], a.vt)
        if a.vt != b.vt:
            raise TaskError(n, f"mn_select between {a.vt.name} and {b.vt.name}")
        mk = MaskReg()                   # mask entry 1: written and read within this statement
        self.alloc[mk] = 1
        if isinstance(c, c_ast.BinaryOp) and c.op in ("==", "!="):
            x, y = self.vec_expr(c.left, VECS["mnint8"]), self.vec_expr(c.right, VECS["mnint8"])
            xa, xb = self.operands([x.loc, y.loc], None, n)
            self.emit("ixor {0} {1} $omr1".format(xa.operand(), xb.operand()), "alu", [xa, xb], [], mask_w=mk)
            first, second = (b, a) if c.op == "==" else (a, b)   # flag: lane zero, i.e. equal
        elif isinstance(c, c_ast.BinaryOp) and c.op in ("<", ">", "<=", ">="):
            x = self.vec_expr(c.left)
            y = self.vec_expr(c.right, x.vt)
            p = {"mnfloat8": "f", "mnint8": "i"}.get(x.vt.name)
            if x.vt != y.vt or p is None:
                raise TaskError(c, f"'{c.op}' compares two mnfloat8 or two mnint8, not {x.vt.name} and {y.vt.name}")
            # the flag of max(u, v) is u >= v: x >= y, or x < y as its negation; y >= x, or x > y
            u, v, flag_is_true = {">=": (x, y, True), "<": (x, y, False), "<=": (y, x, True), ">": (y, x, False)}[c.op]
            ua, va = self.operands([u.loc, v.loc], None, n)
            self.emit(f"{p}max {ua.operand()} {va.operand()} $omr1", "alu", [ua, va], [], mask_w=mk)
            first, second = (b, a) if flag_is_true else (a, b)
        else:
            x = self.vec_expr(c, VECS["mnint8"])
            self.emit(f"ipassa {x.loc.operand()} $omr1", "alu", [x.loc], [], mask_w=mk)
            first, second = a, b                                   # flag: c == 0 -> b
        out = self.temp(a.vt, n)
        w = "ll" if a.vt.slots == 2 else "l"
        s1 = self.legal(first.loc, out, n)
        self.emit(f"lpassa {s1.operand(w)} {out.operand(w)}", "alu", [s1], [out])
        s2 = self.legal(second.loc, out, n)
        self.emit(f"lpassa {s2.operand(w)} {out.operand(w)}/$imr1", "alu", [s2], [out], mask_r=mk)
        return V(a.vt, out)

    def location(self, n, args, fixed, shift=0):
        self.nargs(n, args, 0)
        t = self.temp(1, n)
        self.emit(f"ipassa ${fixed} {t.operand()}", "alu", [], [t])
        if shift:
            k = self.temp(1, n)
            self.emit(f"imm 0x{shift:08x} {k.operand()}", "alu", [], [k])
            self.emit(f"uilsr {t.operand()} {k.operand()} {t.operand()}", "alu", [t, k], [t])
        return V(VECS["mnint8"], t)

    def b_mn_pe_in_mab(self, n, args, want, tag=None):
        return self.location(n, args, "subpeid")

    def b_mn_pe_index(self, n, args, want, tag=None):
        return self.location(n, args, "peid")

    def b_mn_mab_index(self, n, args, want, tag=None):
        return self.location(n, args, "mabid")

    def b_mn_l1b_index(self, n, args, want, tag=None):
        return self.location(n, args, "l1bid")

    def b_mn_l2b_index(self, n, args, want, tag=None):
        return self.location(n, args, "l2bid")

    def b_mn_group_index(self, n, args, want, tag=None):
        L = self.m.l2b_per_group
        if L & (L - 1):
            raise TaskError(n, "mn_group_index needs a power-of-two number of L2Bs per group")
        return self.location(n, args, "l2bid", L.bit_length() - 1)


def _clash(a: Loc, b: Loc) -> bool:
    """The unit-group rule for two operands of one instruction: an LM is read (and written) at one
    region only, and a block has one .call offset per space."""
    if a.space != b.space:
        return False
    return a.offset != b.offset or (a.space in ("m", "n") and (a.addr, a.stride) != (b.addr, b.stride))


MV_BUILTINS = ("mn_broadcast", "mn_broadcast_board", "mn_unicast", "mn_distribute", "mn_gather", "mn_reduce",
               "mn_reduce_board")
_SPACE_NAME = {"d": "DRAM", "lc": "L2BM", "lb": "L1BM"}


def compile_task(module, kernel: str, machine):
    """A task kernel of a CompiledModule -> (assembly, sequencer argument names).  Its source is
    parsed again by the front end's parser; an error is a CompileError at file:line:col with the
    line quoted, as the lowering gives (srcloc.SourceMap)."""
    from .. import _column_mapper
    from ..parse import parse
    text = module.task_text
    sources = module.task_sources or preprocessed_lines(text)    # a module loaded from a binary: no sources
    where = SourceMap(module.filename, sources, _column_mapper(text, sources))
    ast, diag = parse(text, module.filename, sources)
    if diag is not None:
        raise CompileError([diag])
    fdef = next(f for f in task_functions(ast) if f.decl.name == kernel)
    tc = TaskCompiler(fdef, machine, module.kernels[kernel])
    try:
        return tc.compile()
    except TaskError as e:
        node = e.node if getattr(getattr(e.node, "coord", None), "line", 0) else tc.statement or fdef
        raise CompileError([where.diag(node, f"task kernel '{kernel}': {e.msg}")]) from None
