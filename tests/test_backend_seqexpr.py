"""The backend's sequencer expressions as typed trees (translator/backend/seqexpr.py): parsing
gives the text back byte for byte, a tree's value is what the emulator's sequencer computes
(emulator/program.py compile_scalar, written independently), and the passes that used to edit
the text (versioning, packing, prefetch) give the same programs on hand-built trees."""
import glob
import random
import types

import pytest

import translator
from translator.module import CompileError
from emulator.machine import load_machine
from emulator.program import compile_scalar
from translator.backend import compile_kernel, ops
from translator.backend import seqexpr as S
from translator.backend.printer import print_program
from translator.backend.schedule import schedule_tree
from translator.backend.ops import MV, Call, Op, SeqIf, SeqLoop, SeqSet, VReg
from translator.backend.packing import pack_loops, subst
from translator.backend.prefetch import prefetch_waves
from translator.backend.versioning import version_loops

# the forms the backend builds (taken from the corpus' programs)
FORMS = [
    "0", "-1", "%nwx", "(%rows3*4+%lsx)", "%n1 == %rows3 - 1", "not (%n1 == %rows3 - 1)",
    "(%wx & 1) == 0", "%wx + 1 < %nwx", "%pq1 % 4 == 0", "%pq1+3 < ((((%p3) - (0) if (%p3) - (0) > 1 else 1)) - 1) / 4",
    "not (4 * (%offx + %wx * 512) + 0 + (0) >= 0 and 4 * (%offx + (%gx if %gx < (%wx + 1) * 512 else "
    "(%wx + 1) * 512) - 1) + 0 + (0) + 4 <= %nb0) or not (%n0 >= 0)",
    "(((%b0+%wx*2048+((((0)+((0)+((((0+(4*(%pq1+3)+0))*%p4))*4)))>>2)>>1))*((%b0+%wx*2048)>0))-536870400)",
    "((((((0) + ((0) + (((0 + (4*%pq1))) * 4)))) >> 8) << 6) >> 6) & 1", "%items > 1", "0x40 + %b1",
    "%a < %b <= %c", "not %a or %b and not %c", "(%v0_j<0||%v0_j>=1)", "%a&&%b||%c and %d", "(%a&%b)&&(%c|%d)", "-%a * ~%b - +%c // 3 % 5 ^ %d | %e", "%x if %y else %z if %w else 2",
]


def regs_of(text):
    return sorted(S.parse(text).regs())


def agree(text, rng, rounds=20):
    """The tree's value equals compile_scalar's on random registers (errors alike)."""
    e, ref = S.parse(text), compile_scalar(text)
    names = regs_of(text)
    for _ in range(rounds):
        regs = {n: rng.choice([rng.randint(-5, 5), rng.randint(-2**20, 2**20)]) for n in names}
        try:
            want = ref.eval(regs)
        except Exception as x:
            want = type(x)
        try:
            got = S.evaluate(e, regs)
        except Exception as x:
            got = type(x)
        if isinstance(want, type) or isinstance(got, type):
            assert isinstance(want, type) and isinstance(got, type), (text, regs, want, got)
        else:
            assert got == want, (text, regs)


@pytest.mark.parametrize("text", FORMS)
def test_round_trip_and_value(text):
    e = S.parse(text)
    assert str(e) == text
    assert S.parse(str(e)) == e
    agree(text, random.Random(text))


def test_errors_name_the_text():
    for bad in ("%a +", "(%a", "%a %% 2", "x + 1", " %a", "%a ", "%a if %b"):
        with pytest.raises(S.SeqSyntaxError, match="sequencer expression"):
            S.parse(bad)


def test_free_registers_and_substitution():
    e = S.parse("(%rows3*4+%lsx) + %rows30")
    assert e.regs() == {"rows3", "lsx", "rows30"}
    # a register is replaced whole (not %rows30 for %rows3), and the value comes parenthesised
    assert str(S.at(e, "rows3", "%q - 1")) == "((%q - 1)*4+%lsx) + %rows30"
    assert str(S.at(e, S.Reg("lsx"), 0)) == "(%rows3*4+(0)) + %rows30"
    assert S.at(e, "nothere", 5) is e
    assert str(e.substitute({"rows3": S.num(-2)})) == "(-2*4+%lsx) + %rows30"


def test_builders_space_and_parenthesise():
    a, b = S.Reg("a"), S.Reg("b")
    assert str(S.binary("*", S.binary("+", a, 1), b)) == "(%a + 1) * %b"
    assert str(S.binary("-", a, S.binary("-", b, 1), gap="")) == "%a-(%b - 1)"
    assert str(S.compare(S.binary("&", a, 1), "==", 0)) == "%a & 1 == 0"    # & binds tighter (Python)
    assert str(S.any_of([S.negation("%a < 1"), S.negation(S.all_of(["%a > 0", "%b > 0"]))])) \
        == "not (%a < 1) or not (%a > 0 and %b > 0)"
    assert str(S.all_of([S.any_of([a, b]), a])) == "(%a or %b) and %a"
    for e in (S.binary("*", S.binary("+", a, 1), b), S.all_of([S.any_of([a, b]), a])):
        assert S.parse(str(e)) == e             # what it prints is what it means


def test_nodes_convert_strings():
    loop = SeqLoop("%n0", "0", "%p1", [])
    assert loop.reg == S.Reg("n0") and loop.start == S.Num(0) and loop.step == S.Num(1)
    assert SeqIf("%a > 1", unless=("%a > 1",)).unless == (S.parse("%a > 1"),)
    assert Call([], {"m": "%x*2"}).offsets["m"] == S.parse("%x*2")
    assert MV("mvd/n16i1 $d0 $lc0", "%b0+%wx*16").d_offset.regs() == {"b0", "wx"}
    with pytest.raises(ValueError, match="not a sequencer register"):
        SeqSet("%a + 1", "0")


# -- the passes on hand-built trees -------------------------------------------------------------

def checked_loop(cond):
    """A counted loop over %n0 < %p1 whose one access is bounds-checked with `cond` (codegen's
    shape: the fallback's per-lane check under `.if not (cond)`, the condition in `unless`)."""
    x, y, k = VReg("x"), VReg("y"), VReg("k")
    check = Op("iadd {s0} {s1} {d0}", "alu", (k,), (x, y))      # only the fallback needs it
    fault = Op("l1bmd {s0} $lb8", "l1bm", (), (k,), mem=(("w", "m", 0, 1),))
    work = Op("iadd {s0} {s0} {d0}", "alu", (y,), (y,))
    guard = SeqIf(f"not ({cond})", [check, fault], [], unless=(cond,))
    return SeqLoop("%n0", "0", "%p1", [guard, work, Op("l1bmd {s0} $lb0", "l1bm", (), (y,), mem=(("w", "m", 8, 9),))]), guard


def test_versioning_clears_an_affine_check_at_both_ends():
    cond = "4 * %n0 + %b0 >= 0 and 4 * %n0 + %b0 + 4 <= %nb0"
    loop, guard = checked_loop(cond)
    out = version_loops([loop])
    assert len(out) == 1 and isinstance(out[0], SeqIf)
    top = out[0]
    ends = ("4 * (0) + %b0 >= 0 and 4 * (0) + %b0 + 4 <= %nb0",
            "4 * ((%p1) - 1) + %b0 >= 0 and 4 * ((%p1) - 1) + %b0 + 4 <= %nb0")
    assert str(top.cond) == f"not ({ends[0]}) or not ({ends[1]})"
    assert tuple(map(str, top.unless)) == ends
    assert top.then == [loop]                       # the checked loop, as it was
    fast, = top.orelse
    assert isinstance(fast, SeqLoop) and not any(isinstance(x, SeqIf) for x in fast.body)
    assert [o.text for o in fast.body] == ["iadd {s0} {s0} {d0}", "l1bmd {s0} $lb0"]
    # the end conditions hold iff every pass is in bounds (checked on the sequencer's own parser)
    rng = random.Random(1)
    every = compile_scalar(cond)
    clear = compile_scalar(" and ".join(f"({e})" for e in ends))
    for _ in range(200):
        r = {"b0": rng.randint(-12, 12), "nb0": rng.randint(0, 40), "p1": rng.randint(1, 9)}
        brute = all(every.eval({**r, "n0": n}) for n in range(r["p1"]))
        assert bool(clear.eval(r)) == brute, r


@pytest.mark.parametrize("cond", ["(%n0 << 2) + %b0 >= 0", "%n0 * %n0 <= %nb0", "%n0 == 3", "%n0 + %s <= %nb0"])
def test_versioning_leaves_what_it_cannot_clear(cond):
    loop, guard = checked_loop(cond)
    body = loop.body + [SeqSet("%s", "%s + 1")]      # %s: assigned in the loop
    loop.body[:] = body
    assert version_loops([loop]) == [loop]


def test_packing_substitutes_in_every_expression():
    op = Op("nop", "nop")
    tree = [MV("mvd/n16i1 $d0 $lc0", "%b0+%n0*16"), SeqIf("%n0 & 1", [SeqSet("%t", "%n0 + %n00")]),
            Call([op], {"m": "%n0 * 2"}), SeqLoop("%n1", "%n0", "%n0 + 4", [op])]
    out = subst(tree, S.Reg("n0"), S.binary("*", 4, S.Reg("pq1"), gap=""))
    assert [str(out[0].d_offset), str(out[1].cond), str(out[1].then[0].expr), str(out[2].offsets["m"]),
            str(out[3].start), str(out[3].stop)] == \
        ["%b0+(4*%pq1)*16", "(4*%pq1) & 1", "(4*%pq1) + %n00", "(4*%pq1) * 2", "(4*%pq1)", "(4*%pq1) + 4"]
    assert str(tree[0].d_offset) == "%b0+%n0*16" and out[2].body[0] is op      # the input is untouched


def packed_sum(extra=()):
    """pack_loops on a counted loop that loads x[n] (and the `extra` body items) and sums it."""
    lay = types.SimpleNamespace(narrow=8, l2bmd_steps=1, stripe=512, l2b=4, pe_l1b=16, l1b=4)
    x, acc = VReg("x"), VReg("acc")
    mv = MV("mvd/n128i7 $d0 $lc0", "%b0+%n0*64", chain=(7, 0, 0))
    body = [mv, Op("wait i7", "wait"), Op("l2bmd $lc0 $lb0", "l2bm"), Op("l1bmd $lb0 {d0}", "l1bm", (x,)),
            Op("fvadd {s0} {s1} {d0}", "mau", (acc,), (acc, x)), *extra]
    tree = [Op("zero {d0}", "alu", (acc,)), SeqLoop("%n0", "0", "%p1", body),
            Op("l1bmd {s0} $lb0", "l1bm", (), (acc,), mem=(("w", "m", 0, 1),))]
    free = iter(range(1000, 9000, 128))
    return pack_loops(tree, lay, lambda n: next(free))


def test_packing_runs_four_passes_at_once():
    """A counted loop that loads x[n] and accumulates it: the packed loop's groups, its prefetch
    of the groups ahead and the tail loop, with the counter substituted in every expression.
    Software pipelined: group q's block ends with group q + 1's L2BM -> L1BM moves (waiting
    for their MVs first), so group q + 4's MVs may go to group q's areas at its start."""
    out = packed_sum()
    groups = "((%p1) - 1) / 4"
    ahead = [x for x in out if isinstance(x, SeqIf)]
    assert [str(x.cond) for x in ahead] == [f"{g} < {groups}" for g in range(4)] + [f"0 < {groups}"]
    assert [str(m.d_offset) for m in ahead[1].then] == [f"%b0+(4*(1)+{c})*64" for c in range(4)]
    assert [o.text for o in ahead[4].then] == ["wait i241"] + [f"l2bmd $lc{a} $lb{16 * c}" for c, a in
                                                               enumerate(m.text.split("$lc")[1] for m in ahead[0].then)]
    packed, tail = [x for x in out if isinstance(x, SeqLoop)]
    assert (str(packed.reg), str(packed.start), str(packed.stop)) == ("%pq1", "0", groups)
    assert (str(tail.reg), str(tail.start), str(tail.stop)) == ("%n0", f"4 * ({groups})", "%p1")
    turn = packed.body[0]
    assert str(turn.cond) == "%pq1 % 4 == 0"
    prefetch, work = turn.then
    assert str(prefetch.cond) == f"%pq1+4 < {groups}"
    assert [str(m.d_offset) for m in prefetch.then] == [f"%b0+(4*(%pq1+4)+{c})*64" for c in range(4)]
    assert str(work.cond) == f"%pq1+1 < {groups}"
    texts = [o.text for o in work.then]
    assert texts[0] == "wait i242" and texts[1] == "l1bmd $lb0 {d0}" and texts[-4:] == [
        f"l2bmd $lc{a} $lb{16 * c}" for c, a in enumerate(m.text.split("$lc")[1] for m in ahead[1].then)]
    assert [o.text for o in work.orelse if o.unit in ("wait", "l2bm")] == []      # the last group: no moves


def test_packing_without_pipelining_where_loads_share_an_l1bm_area():
    """Two staged loads through one L1BM area (codegen reuses it for loads one after another):
    moving both ahead would overwrite the first, so each group waits for and moves its own, and
    group q + 3's MVs go out at its start."""
    y = VReg("y")
    mv = MV("mvd/n128i8 $d0 $lc128", "%b1+%n0*64", chain=(8, 128, 0))
    out = packed_sum([mv, Op("wait i8", "wait"), Op("l2bmd $lc128 $lb0", "l2bm"), Op("l1bmd $lb0 {d0}", "l1bm", (y,))])
    groups = "((%p1) - 1) / 4"
    assert [str(x.cond) for x in out if isinstance(x, SeqIf)] == [f"{g} < {groups}" for g in range(3)]
    packed, = [x for x in out if isinstance(x, SeqLoop) and str(x.reg) == "%pq1"]
    prefetch, *work = packed.body[0].then
    assert str(prefetch.cond) == f"%pq1+3 < {groups}"
    assert [o.text for o in work if o.unit == "wait"] == ["wait i241", "wait i245"]


def test_prefetch_issues_the_next_wave():
    lay = types.SimpleNamespace(stripe=256, l2b=4)
    v = VReg("v")
    mv = MV("mvd/n256i3 $d0 $lc0", "%b0+%wx*256", chain=(3, 0, 0))
    body = [mv, Op("wait i3", "wait"), Op("l2bmd $lc0 $lb0", "l2bm", mem=(("r", "lc", 0, 64),)),
            Op("l1bmd $lb0 {d0}", "l1bm", (v,)), Op("l1bmd {s0} $lb0", "l1bm", (), (v,), mem=(("w", "m", 0, 1),))]
    tree = [SeqLoop("%wx", "0", "%nwx", body)]
    free = iter(range(1000, 2000, 64))
    out = prefetch_waves(tree, [mv], lay, lambda n: next(free))
    start, loop = out
    assert str(start.cond) == "0 < %nwx" and str(start.then[0].d_offset) == "%b0+(0)*256"
    turn, = loop.body
    assert str(turn.cond) == "(%wx & 1) == 0"
    ahead = [x for x in turn.then if isinstance(x, SeqIf)][0]
    assert str(ahead.cond) == "%wx + 1 < %nwx"
    assert str(ahead.then[0].d_offset) == "%b0+(%wx+1)*256" and ahead.then[0].text == "mvd/n256i253 $d0 $lc1000"


def test_printing_takes_the_trees():
    tree = [SeqLoop("%n0", "0", "%p1", [SeqSet("%t", "%n0 + 1")], "2"),
            Call([Op("nop", "nop")], {"m": "%t * 2"})]
    text = print_program(schedule_tree(tree, {"_peak": 0}), ["p1"], {"_peak": 0})
    assert ".loop %n0 = 0, %p1, 2" in text and ".set %t = %n0 + 1" in text and "m=%t*2" in text


# -- the corpus ---------------------------------------------------------------------------------

def corpus_expressions(monkeypatch, files, machine, modes):
    """Every string the backend gives a control node while compiling `files`."""
    seen, real = set(), ops.seq

    def record(x):
        if isinstance(x, str):
            seen.add(x)
        return real(x)
    monkeypatch.setattr(ops, "seq", record)
    m = load_machine(machine)
    for f in files:
        mod = translator.compile_opencl(open(f).read(), spmd=True)
        for k in mod.kernels:
            for mode in modes:
                try:
                    compile_kernel(mod, k, m, mode)
                except CompileError as e:   # a kernel the corpus has for its diagnostic
                    assert "internal compiler error" not in str(e)
    return seen


def check_all(seen):
    rng = random.Random(0)
    for text in sorted(seen):
        assert str(S.parse(text)) == text
        agree(text, rng, rounds=3)


def test_some_kernels_expressions(monkeypatch, tmp_path):
    # a task kernel (translator/task.py writes its own expressions), built for one shape
    task = tmp_path / "matvec_task.cl"
    task.write_text("#define ROWS 128\n#define COLS 256\n#define BATCH 1\n#define HALF 0\n"
                    + open("samples/llm_decode/matvec_task.cl").read())
    seen = corpus_expressions(monkeypatch, ["tests/kernels/saxpy_tail.cl", "tests/kernels/abs_min.cl"],
                              "tiny", ("1d", "nd"))
    seen |= corpus_expressions(monkeypatch, [str(task)], "tiny", ("1d",))
    assert len(seen) > 20 and any("||" in x for x in seen)
    check_all(seen)


@pytest.mark.slow
def test_corpus_expressions(monkeypatch):
    files = sorted(glob.glob("tests/kernels/*.cl"))
    ok = []
    for f in files:             # the front end refuses a few on purpose
        try:
            translator.compile_opencl(open(f).read(), spmd=True)
            ok.append(f)
        except Exception:
            pass
    seen = corpus_expressions(monkeypatch, ok, "tiny", ("1d", "nd"))
    seen |= corpus_expressions(monkeypatch, ["tests/public/bicg.cl"], "mncore2", ("1d-n8",))
    check_all(seen)
