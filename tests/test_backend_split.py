"""The backend's instruction selection split by concern over one emitter (issue 21): no import
cycles inside translator/backend, all of the emitter's state made in its __init__, and each
concern run alone on hand-built IR or values."""
import ast
import pathlib
import subprocess
import sys

import pytest

from emulator.machine import load_machine
from translator.backend import Layout
from translator.backend.codegen import Codegen
from translator.backend.irread import read_function
from translator.backend.mathlib import lower_math
from translator.backend.ops import IfAnyLane, MV, Op, SeqLoop, WhileAny, flat_ops
from translator.backend.values import Val
from translator.module import ParamInfo

BACKEND = pathlib.Path(__file__).resolve().parents[1] / "translator" / "backend"


# ------------------------------------------------------------------ the import graph
def import_graph(folder: pathlib.Path, deferred=True) -> dict:
    """module -> the modules of the same package it imports: at module level, and with deferred
    also inside functions (such an import only puts a cycle off until the function runs)."""
    names = {p.stem for p in folder.glob("*.py")}
    graph = {}
    for p in folder.glob("*.py"):
        deps = set()
        tree = ast.parse(p.read_text())
        for node in ast.walk(tree) if deferred else tree.body:
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module is None:
                    deps |= {a.name for a in node.names if a.name in names}
                elif node.module.split(".")[0] in names:
                    deps.add(node.module.split(".")[0])
        graph[p.stem] = deps - {p.stem}
    return graph


def find_cycle(graph: dict):
    """A list of modules forming an import cycle (first repeated at the end), or None."""
    state, path = {}, []

    def visit(n):
        state[n] = "open"
        path.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == "open":
                return path[path.index(m):] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        state[n] = "done"
        path.pop()
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


# irread.parse_const reads an aggregate constant's bytes with constdata, which parses LLVM's
# constant syntax with irread's helpers: the one deferred import known to close a cycle
DEFERRED_CYCLES = {("irread", "constdata")}


def test_no_import_cycles_in_backend():
    graph = import_graph(BACKEND, deferred=False)
    assert {"emitter", "values", "control", "isel_int", "isel_float", "calls", "memory"} <= set(graph)
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle in translator/backend: " + " -> ".join(cycle)
    graph = import_graph(BACKEND)
    for a, b in DEFERRED_CYCLES:
        graph[a].discard(b)
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle through a function-level import in translator/backend: " + " -> ".join(cycle)


@pytest.mark.slow
@pytest.mark.parametrize("module", ["emitter", "values", "workitems", "control", "isel_int", "isel_float", "calls",
                                    "memory", "resident", "scatter", "bounds", "nans", "mathlib", "codegen"])
def test_each_backend_module_imports_first(module):
    """Each module imports in a fresh interpreter on its own (no import order it depends on; slow:
    an interpreter each, test_no_import_cycles_in_backend checks the same graph statically)."""
    r = subprocess.run([sys.executable, "-c", f"import translator.backend.{module}"], capture_output=True, text=True,
                       cwd=BACKEND.parents[1])
    assert r.returncode == 0, r.stderr


# ------------------------------------------------------------------ hand-built IR
def ir(body: str, params: str = "") -> str:
    return f"define void @t__wi(ptr %args, ptr %wg, ptr %ids{params}) {{\n{body}\n}}\n"


# the first parameter's pointer, the second's value (an int), and get_global_id(0) as i64
PROLOGUE = """entry:
  %a = load ptr, ptr %args, align 8
  %p1 = getelementptr i8, ptr %args, i64 8
  %np = load ptr, ptr %p1, align 8
  %n = load i32, ptr %np, align 4
  %gp = getelementptr i8, ptr %ids, i64 24
  %g = load i64, ptr %gp, align 8"""
PARAMS = (ParamInfo("a", "global", "int", "int32", 4, False), ParamInfo("n", "scalar", "int", "int32", 4, False))


def codegen(body: str, one_d=True) -> Codegen:
    lay = Layout.of(load_machine("tiny")).for_mode("1d" if one_d else "nd")
    return Codegen(read_function(ir(body), "t__wi"), lay, PARAMS, one_d, chunk_longs=min(lay.stripe, 512))


def mnemonics(items) -> list:
    return [o.text.split()[0] for o in flat_ops(items) if isinstance(o, Op)]


def test_emitter_state_is_made_in_its_init():
    """Translating a kernel with loops, stores and gathers adds no attribute to the emitter or to
    any concern (they hold only the emitter): every piece of state is made in Emitter.__init__."""
    cg = codegen(PROLOGUE + """
  %x = getelementptr i32, ptr %a, i64 %g
  %v = load i32, ptr %x, align 4
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]
  %s = phi i32 [ %v, %entry ], [ %s1, %loop ]
  %s1 = mul i32 %s, 3
  %i1 = add i32 %i, 1
  %c = icmp slt i32 %s1, %n
  br i1 %c, label %loop, label %done
done:
  %j = sext i32 %s1 to i64
  %y = getelementptr i32, ptr %a, i64 %j
  store i32 %i1, ptr %y, align 4
  ret void""")
    em = cg.em
    before = set(vars(em))
    parts = [em.codegen, em.values, em.workitems, em.control, em.ints, em.floats, em.calls, em.memory,
             em.resident_buffers, em.scatter, em.bounds, em.nans]
    cg.translate()
    assert set(vars(em)) == before
    assert all(set(vars(p)) == {"em"} for p in parts[1:])
    assert set(vars(cg)) == {"em"}


def test_values_constants_are_made_once_in_the_prologue():
    em = codegen(PROLOGUE + "\n  ret void").em
    a, b = em.c32(7), em.c32(7)
    assert a is b and em.items == []
    assert [o.text for o in em.prologue] == ["limm 0x0000000700000007 {d0}"]


def test_isel_int_multiplies_by_a_power_of_two_with_a_shift():
    em = codegen(PROLOGUE + "\n  ret void").em
    x = Val("i32", (em.new("x"),), rng=(0, 100))
    y = em.ints.mul_const(x, 8, False, None)
    assert mnemonics(em.items) == ["ilsl"] and y.regs[0] is em.items[-1].dsts[0]


def test_isel_float_fp64_multiply_is_two_mau_steps():
    em = codegen(PROLOGUE + "\n  ret void").em
    a, b = (Val("f64", (em.new(), em.new())) for _ in range(2))
    em.floats.float_arith("fmul", True, a, b)
    assert mnemonics(em.items) == ["dvmulu", "dvfmad"] * 2
    assert all(o.unit == "mau" for o in em.items)


def test_nans_settles_a_lazy_sum_under_an_any_lane_test():
    """A lazy float (a MAU chain result) leaving the chain is fixed only when some lane is +-0 or
    +-inf: the fix-up ops sit in an IfAnyLane."""
    em = codegen(PROLOGUE + "\n  ret void").em
    a, b = Val("f32", (em.new(),)), Val("f32", (em.new(),))
    s = Val("f32", (em.mau("fvadd", a.regs[0], b.regs[0]),), lazy=("add", a, b))
    em.nans.settle(s)
    assert isinstance(em.items[-1], IfAnyLane) and em.items[-1].then
    assert em.nans.settle(s) is s and isinstance(em.items[-1], IfAnyLane)     # once


def test_mathlib_takes_the_emitter():
    em = codegen(PROLOGUE + "\n  ret void").em
    x = Val("f64", (em.new(), em.new()))
    v = lower_math(em, "exp", "double", [x])
    assert v.kind == "f64" and len(v.regs) == 2
    assert {"dvfmau", "dvfmad"} <= set(mnemonics(em.items))
    assert lower_math(em, "no_such_function", "double", [x]) is None


def test_control_if_converts_a_diamond():
    """Both arms of an if run under their predicates and the phi is a select: no branch in the
    wave body, and the merged value is stored."""
    cg = codegen(PROLOGUE + """
  %c = icmp slt i32 %n, 5
  br i1 %c, label %then, label %else
then:
  %t = add i32 %n, 1
  br label %join
else:
  %e = mul i32 %n, 3
  br label %join
join:
  %m = phi i32 [ %t, %then ], [ %e, %else ]
  %x = getelementptr i32, ptr %a, i64 %g
  store i32 %m, ptr %x, align 4
  ret void""")
    cg.translate()
    body = cg.em.items
    assert not any(isinstance(o, (WhileAny, SeqLoop)) for o in flat_ops(body))
    ops = mnemonics(body) + mnemonics(cg.em.prologue)
    assert "iadd" in ops and "lpassa" in ops


def test_control_runs_a_data_dependent_loop_while_any_lane_is_in_it():
    cg = codegen(PROLOGUE + """
  %x = getelementptr i32, ptr %a, i64 %g
  %v = load i32, ptr %x, align 4
  br label %loop
loop:
  %s = phi i32 [ %v, %entry ], [ %s1, %loop ]
  %s1 = mul i32 %s, 3
  %c = icmp slt i32 %s1, %n
  br i1 %c, label %loop, label %done
done:
  store i32 %s1, ptr %x, align 4
  ret void""")
    cg.translate()
    assert any(isinstance(o, WhileAny) for o in _walk(cg.em.items))


def test_control_runs_a_counted_loop_on_the_sequencer():
    """A loop whose trip count is a kernel argument (%p1 on the sequencer) runs as a sequencer loop."""
    cg = codegen(PROLOGUE + """
  %x = getelementptr i32, ptr %a, i64 %g
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]
  %i1 = add i32 %i, 1
  %c = icmp slt i32 %i1, %n
  br i1 %c, label %loop, label %done
done:
  store i32 %i1, ptr %x, align 4
  ret void""")
    cg.translate()
    loops = [o for o in _walk(cg.em.items) if isinstance(o, SeqLoop)]
    assert loops and "%p1" in str(loops[0].stop)
    assert not any(isinstance(o, WhileAny) for o in _walk(cg.em.items))


def _walk(items):
    """Every item of a control tree, loops and their bodies included."""
    for o in items:
        yield o
        for attr in ("body", "then", "orelse"):
            sub = getattr(o, attr, None)
            if isinstance(sub, list):
                yield from _walk(sub)


def buffer_moves(body: str, one_d: bool) -> list:
    """The transfers of buffer 0 (DRAM address %b0 + ..., or %sn0 + ...: the launch-start copy its
    loads read when they all come before its stores, Memory.snapshot) a kernel's translation makes."""
    cg = codegen(PROLOGUE + body, one_d)
    cg.translate()
    return [o.text.split("/")[0] for o in _walk(cg.em.items + cg.em.prologue)
            if isinstance(o, MV) and str(o.d_offset).startswith(("%b0", "%sn0"))]


def test_memory_contiguous_in_1d_gather_in_nd():
    """a[gid] in a 1-D launch moves the wave's share (mvd in, mvd out); the same access in an N-D
    launch, and a[a[gid]] in any, is a gather of the buffer broadcast (mvb), and a store of the
    N-D kind a scatter summed into DRAM (mvriiadd)."""
    share = """
  %x = getelementptr i32, ptr %a, i64 %g
  %v = load i32, ptr %x, align 4
  %w = add i32 %v, 1
  store i32 %w, ptr %x, align 4
  ret void"""
    assert buffer_moves(share, True) == ["mvd", "mvd"]
    nd = buffer_moves(share, False)
    assert "mvb" in nd and "mvriiadd" in nd and "mvd" not in nd
    gather = """
  %x = getelementptr i32, ptr %a, i64 %g
  %v = load i32, ptr %x, align 4
  %j = sext i32 %v to i64
  %y = getelementptr i32, ptr %a, i64 %j
  %u = load i32, ptr %y, align 4
  store i32 %u, ptr %x, align 4
  ret void"""
    assert sorted(buffer_moves(gather, True)) == ["mvb", "mvd", "mvd"]
