"""The backend's passes one at a time on hand-built ops trees (VRegs, Ops, SeqLoops ...), the
pipeline list that runs them, verify() between them, and the ISA table refusing a bad op where it
is made (translator/backend/: cleanup, regalloc, schedule, printer, verify, target, ops)."""
import glob
import os

import pytest

from emulator.machine import load_machine
from translator.backend import PIPELINE, compile_kernel
from translator.backend.cleanup import (coalesce_carried, fold_table_reads, hoist_staging, merge_calls, merge_recomputed,
                                        rematerialise_constants, remove_dead, sink_into_branches)
from translator.backend.ops import BadOp, Call, MaskReg, Op, SeqIf, SeqLoop, SeqSet, VReg, WhileAny, flat_ops
from translator.backend.printer import print_program
from translator.backend.regalloc import AllocError, allocate
from translator.backend.schedule import Block, schedule, schedule_tree
from translator.backend.target import GAP, HAZARD_STEPS, MASK_ENTRIES, MNCORE2, Registers
from translator.backend.verify import verify

HERE = os.path.dirname(__file__)


def to_t(r, line=0):
    """An op that makes r live: it is read into the T register (a fixed location, so it stays)."""
    return Op("lpassa {s0} $t", "alu", (), (r,), mem=(("w", "t", 0, 1),), line=line)


# -- the ISA table refuses a bad op where it is made ------------------------------------------------

def test_an_op_with_an_unknown_mnemonic_is_refused_where_it_is_made():
    with pytest.raises(BadOp, match="unknown instruction 'frobnicate'") as e:
        Op("frobnicate {s0} {d0}", "alu", (VReg(),), (VReg(),), line=7)
    assert e.value.line == 7


@pytest.mark.parametrize("text,unit,dsts,srcs,why", [
    ("fvfma {s0} {s1} {s2} {d0}", "alu", 1, 3, "is a mau-calc instruction, not alu"),     # wrong unit
    ("iadd {s0} {s1} {d0}", "alu", 1, 1, "names no operand"),                          # {s1}: no second source
    ("iadd {s0} {s1} $lb0", "alu", 0, 2, "must be a PE destination"),                  # an L1BM destination
    ("l2bmb {s0} $lb0", "l2bm", 0, 1, "must be an L2BM operand"),                       # a register for $lc
    ("iadd {s0} {d0}", "alu", 1, 1, "needs 2 source"),
    ("iadd {s0} {s1} {d0}", "vpu", 1, 2, "unknown unit 'vpu'"),
])
def test_an_op_with_a_bad_operand_kind_or_unit_is_refused(text, unit, dsts, srcs, why):
    with pytest.raises(BadOp, match=why):
        Op(text, unit, tuple(VReg() for _ in range(dsts)), tuple(VReg() for _ in range(srcs)))


def test_good_ops_of_every_unit_are_accepted():
    v, w, x = VReg(), VReg(), VReg()
    for op in (Op("fvfma -{s0} {s1} {s2} {d0}", "mau", (v,), (w, x, x)), Op("l1bmp $llb0 $lln0v", "l1bm"),
               Op("l2bmb $lc0 $lb0", "l2bm"), Op("imm 1 {d0}/0100", "alu", (v,)), Op("wait i3", "wait"),
               Op("nop", "nop"), Op("uimax {s0} {s1} {K0}", "alu", (), (v, w), (MaskReg(),))):
        assert op.text


def test_the_numbers_come_from_the_machine_and_the_isa():
    """Hazard distances are the executor's, registers the machine description's, mask entries the
    assembler's writable ones: a machine TOML with smaller GRFs changes the allocator's room."""
    assert GAP == {"t": 1, **{sp: n + 1 for sp, n in HAZARD_STEPS.items()}}
    assert GAP["r"] == GAP["s"] == 2 and GAP["m"] == GAP["n"] == GAP["lb"] == GAP["lc"] == 3
    assert MASK_ENTRIES == tuple(range(1, 16))
    assert MNCORE2.grf == 64
    small = Registers.of(load_machine("tiny").replace(grf_words=64))        # 8 registers per GRF
    assert small.grf == 8
    vs = [VReg() for _ in range(20)]
    ops = [Op("zero {d0}", "alu", (v,)) for v in vs] + [to_t(v) for v in vs]
    out = allocate(ops, small)
    assert {out[v][0] for v in vs} == {"r", "s", "n"} and all(out[v][1] < 8 for v in vs if out[v][0] in "rs")


# -- cleanup passes -------------------------------------------------------------------------------

def test_remove_dead_drops_what_nothing_live_reads():
    a, b, c = VReg("a"), VReg("b"), VReg("c")
    keep_a, dead_b = Op("zero {d0}", "alu", (a,)), Op("zero {d0}", "alu", (b,))
    feeds_dead = Op("iadd {s0} {s1} {d0}", "alu", (c,), (b, b))
    out = remove_dead([keep_a, dead_b, SeqLoop("%i", "0", "4", [feeds_dead, to_t(a)])])
    assert [o for o in flat_ops(out)][:1] == [keep_a] and len(list(flat_ops(out))) == 2
    assert remove_dead([dead_b], keep=(b,)) == [dead_b]          # kept: read elsewhere


def test_remove_dead_drops_memory_reads_nothing_reads_but_keeps_writes():
    """An argument-block word read into a register nothing reads (a launch-shape value the kernel
    does not use: 21 of them in every prologue) goes; a read into T or a write to memory stays."""
    a, b = VReg("a"), VReg("b")
    unused = Op("lpassa $ln80 {d0}", "alu", (a,), (), mem=(("r", "n", 80, 82),))
    used = Op("lpassa $ln82 {d0}", "alu", (b,), (), mem=(("r", "n", 82, 84),))
    store = Op("lpassa {s0} $lm0v", "alu", (), (b,), mem=(("w", "m", 0, 16),))
    assert remove_dead([unused, used, store]) == [used, store]


def test_sink_into_branches_moves_an_op_only_a_later_branch_reads():
    x, off = VReg("x"), VReg("off")
    make = Op("iadd {s0} {s1} {d0}", "alu", (off,), (x, x))
    branch = SeqIf("%p > 0", then=[to_t(off)])
    tree = sink_into_branches([Op("zero {d0}", "alu", (x,)), make, branch, to_t(x)])
    assert make not in tree and branch.then[0] is make


def test_sink_into_branches_copies_an_op_into_every_arm_that_reads_it():
    # the row plan's fallback gather and its bounds check both read the index: neither runs on
    # the fast path, so the index is made in each of them, not in every pass of the loop
    x, off = VReg("x"), VReg("off")
    make = Op("iadd {s0} {s1} {d0}", "alu", (off,), (x, x))
    fallback = SeqIf("%rc < 0", then=[to_t(off)], orelse=[Op("zero {d0}", "alu", (VReg(),))])
    check = SeqIf("%n > 3", then=[Op("nop", "nop"), to_t(off)])
    tree = sink_into_branches([Op("zero {d0}", "alu", (x,)), make, fallback, check])
    assert tree == [fallback, check]                     # x's zero goes with the op that reads it
    assert [o.text for o in fallback.then[:2]] == [o.text for o in check.then[:2]] == ["zero {d0}", make.text]
    assert fallback.then[1] is not check.then[1] and len(fallback.orelse) == 1


def test_sink_into_branches_keeps_an_op_whose_source_a_first_reader_rewrites():
    x, off = VReg("x"), VReg("off")
    make = Op("iadd {s0} {s1} {d0}", "alu", (off,), (x, x))
    first = SeqIf("%rc < 0", then=[to_t(off), Op("iinc {s0} {d0}", "alu", (x,), (x,))])
    tree = sink_into_branches([Op("zero {d0}", "alu", (x,)), make, first, SeqIf("%n > 3", then=[to_t(off)])])
    assert tree[1] is make


def table_read(dst):
    return Call([Op("lpassa $lm3968 {d0}", "alu", (dst,), mem=(("r", "m", 3968, 4096),))], {"m": "%k * 2"})


def test_fold_table_reads_makes_the_table_word_the_operand_of_its_readers():
    # x[k]'s table read and the multiply-add that uses it: one block, no copy in between
    xk, w, p, s = VReg("xk"), VReg("w"), VReg("p"), VReg("s")
    mul = Op("fvmul {s0} {s1} {d0}", "mau", (p,), (w, xk))
    add = Op("fvadd {s0} {s1} {d0}", "mau", (s,), (s, p))
    call = table_read(xk)
    tree = fold_table_reads([call, mul, add, to_t(s)])
    assert tree == [call]
    assert [o.text for o in call.body] == ["fvmul {s0} $lm3968 {d0}", add.text, "lpassa {s0} $t"]
    assert call.body[0].srcs == (w,) and ("r", "m", 3968, 4096) in call.body[0].mem


@pytest.mark.parametrize("after", [
    lambda xk: [Op("lpassa $lm0 {d0}", "alu", (VReg(),), mem=(("r", "m", 0, 2),)), to_t(xk)],  # an LM0 word: the offset would move it
    lambda xk: [Op("fvmul {s0} {s0} {d0}", "mau", (VReg(),), (xk,)), SeqIf("%n > 0", [to_t(xk)])],  # read past the run
])
def test_fold_table_reads_leaves_what_it_cannot_fold(after):
    xk = VReg("xk")
    call = table_read(xk)
    tree = fold_table_reads([call, *after(xk)])
    assert call.body[0].text == "lpassa $lm3968 {d0}" and len(tree) > 1


def row_read(dst, offset="(%n0 % 256) * 2"):
    """A paired row plan's read of its LM1 region (rowplan.load)."""
    return Call([Op("lpassa $ln2048 {d0}", "alu", (dst,), mem=(("r", "n", 2048, 2560),))], {"n": offset})


def test_a_row_read_and_a_table_read_fold_into_one_block():
    """The row's LM1 word (offset n) and x[k]'s LM0 word (offset m) are both operands of the
    multiply: one Call with both offsets, no copies (they were two blocks and two copies)."""
    w, xk, p, s = VReg("w"), VReg("xk"), VReg("p"), VReg("s")
    row, table = row_read(w), table_read(xk)
    tree = fold_table_reads([row, table, Op("fvmul {s0} {s1} {d0}", "mau", (p,), (w, xk)),
                             Op("fvadd {s0} {s1} {d0}", "mau", (s,), (s, p)), to_t(s)])
    assert tree == [row]
    assert set(row.offsets) == {"n", "m"}
    assert [o.text for o in row.body] == ["fvmul $ln2048 $lm3968 {d0}", "fvadd {s0} {s1} {d0}", "lpassa {s0} $t"]


@pytest.mark.parametrize("second", [
    lambda r: row_read(r, "(%n0 % 64) * 2"),                                  # the same space, another offset
    lambda r: Op("lpassa $ln0 {d0}", "alu", (r,), mem=(("r", "n", 0, 2),)),  # LM1, which the offset would move
])
def test_merge_calls_keeps_apart_what_an_offset_would_move(second):
    a, b = VReg("a"), VReg("b")
    first = row_read(a)
    tree = merge_calls([first, second(b), to_t(a), to_t(b)])
    assert tree[0] is first and len(first.body) == 1 and set(first.offsets) == {"n"} and len(tree) > 1


def test_a_table_word_written_before_its_last_reader_is_not_folded():
    xk, p, q = VReg("xk"), VReg("p"), VReg("q")
    table = table_read(xk)
    store = Op("lpassa {s0} $lm3968", "alu", (), (p,), mem=(("w", "m", 3968, 3970),))
    tree = fold_table_reads([table, Op("fvmul {s0} {s0} {d0}", "mau", (p,), (xk,)), store,
                             Op("fvmul {s0} {s0} {d0}", "mau", (q,), (xk,)), to_t(q)])
    assert tree[0].body[0].text == "lpassa $lm3968 {d0}"


def test_a_read_of_four_folds_cycle_by_cycle():
    """packing.py's four passes read x[k]'s four table entries at once (`lpassa $lm<a>v`) and the
    carried part takes cycle c of them ({s0c<c>}): folded, that is long word a + c, not the read
    of four (which gave every pass the entries of all four)."""
    xk, s = VReg("xk"), VReg("s")
    table = Call([Op("lpassa $lm3968v {d0}", "alu", (xk,), mem=(("r", "m", 3968, 4096),))], {"m": "%pq * 8"})
    adds = [Op(f"fvadd {{s0}} {{s1c{c}}} {{d0}}", "mau", (s,), (s, xk)) for c in range(4)]
    tree = fold_table_reads([table, *adds, to_t(s)])
    assert [o.text for o in tree[0].body[:4]] == [f"fvadd {{s0}} $lm{3968 + 2 * c} {{d0}}" for c in range(4)]


def staging(area=("w", "n", 3072, 3584), sets="%rp"):
    """A staging branch: a panel moved into an LM1 region when the pass enters it."""
    return SeqIf("%n0 % 256 == 0", [Op("l1bmp $llb0 $lln3072v", "l1bm", mem=(area,)), SeqSet(sets, "%n0")],
                 staging=True)


def test_staging_goes_before_the_reads_it_does_not_touch():
    """Row B's panel staged before row A's read: the reads and the arithmetic become one run."""
    a = VReg("a")
    read, stage = row_read(a), staging()
    tree = hoist_staging([read, stage, to_t(a)])
    assert tree == [stage, read, tree[2]]


def test_merge_calls_takes_the_ops_before_a_call_its_offsets_do_not_move():
    """A packed group's l1bmd, then x[k]'s table read (m=) and the arithmetic: one block (the
    l1bmd was a block of its own, which software pipelining cannot overlap with the rest); an op
    before it that touches LM0 stays out."""
    x, xk, p = VReg("x"), VReg("xk"), VReg("p")
    load = Op("l1bmd $lb64 {d0}", "l1bm", (x,), mem=(("r", "lb", 64, 320),))
    lm0 = Op("lpassa $lm0 {d0}", "alu", (VReg(),), mem=(("r", "m", 0, 2),))
    table = table_read(xk)
    tree = merge_calls([lm0, load, table, Op("fvmul {s0} {s1} {d0}", "mau", (p,), (x, xk)), to_t(p)])
    assert tree == [lm0, table] and [o.text for o in table.body][:2] == ["l1bmd $lb64 {d0}", "lpassa $lm3968 {d0}"]


def fetch(lb=320):
    """An x[k] table's block fetch into L1BM (memory.uniform_table): a staging branch."""
    return SeqIf("%n0 % 64 == 0", [Op(f"l2bmb $lc384 $lb{lb}", "l2bm", mem=(("w", "lb", lb, lb + 64),)),
                                   SeqSet("%ut", "%n0")], staging=True)


def test_staging_goes_before_a_transfer_of_another_l1bm_area():
    """A table fetch writing L1BM 320.. moves before a staged load's l1bmd reading 64..320 (L1BM
    addresses were taken as all of it, which kept every staged load's l1bmd a block apart)."""
    read = Op("l1bmd $lb64 {d0}", "l1bm", (VReg(),), mem=(("r", "lb", 64, 320),))
    stage = fetch()
    assert hoist_staging([read, stage])[0] is stage
    assert hoist_staging([read, fetch(lb=256)])[0] is read                      # overlapping areas
    moved = Call([Op("l1bmp $lb0 {d0}", "l1bm", (VReg(),), mem=(("r", "lb", 0, 68),))], {"lb": "%u & 63"})
    assert hoist_staging([moved, fetch()])[0] is moved                          # an offset: any address


def test_a_masked_write_follows_the_write_before_it_at_once():
    """A masked write keeps the lanes it does not write in place: it names its destination as a
    source (liveness) but reads nothing, so it may follow the write before it in the next step;
    a masked copy that reads its destination through a field still waits for the value."""
    alloc = {VReg("a"): ("r", 0), VReg("b"): ("r", 8)}
    a, b = alloc
    full = Op("imm 1 {d0}", "alu", (a,))
    masked = Op("imm 2 {d0}/0100", "alu", (a,), (a,), partial=True)
    assert schedule([full, masked], alloc)[:2] == [[full], [masked]]
    moved = Op("l1bmp $lb0 {d0}", "l1bm", (a,))                   # (no forwarding path from it)
    reads = Op("lpassa {s0} {d0}/0100", "alu", (b,), (a, b), partial=True)
    assert schedule([moved, reads], alloc)[:3] == [[moved], [], [reads]]   # a readable 2 steps on


@pytest.mark.parametrize("stage", [
    staging(area=("w", "n", 2048, 2100)),         # it writes the region the read reads
    staging(sets="%n0"),                          # it sets the register the read's offset uses
])
def test_staging_stays_after_a_read_it_touches(stage):
    a = VReg("a")
    read = row_read(a)
    assert hoist_staging([read, stage])[0] is read


def test_coalesce_carried_lets_the_op_write_the_carried_register():
    i, new, one = VReg("i"), VReg("new"), VReg("one")
    step = Op("iadd {s0} {s1} {d0}", "alu", (new,), (i, one))
    copy = Op("lpassa {s0} {d0}", "alu", (i,), (new,), carry=True)
    loop = SeqLoop("%k", "0", "8", [step, copy])
    coalesce_carried([Op("limm 0x1 {d0}", "alu", (one,)), Op("zero {d0}", "alu", (i,)), loop, to_t(i)])
    assert loop.body == [step] and step.dsts == (i,)


def test_merge_recomputed_reads_the_first_result():
    x, a, b = VReg("x"), VReg("a"), VReg("b")
    first, again = Op("iinc {s0} {d0}", "alu", (a,), (x,)), Op("iinc {s0} {d0}", "alu", (b,), (x,))
    reader = to_t(b)
    tree = merge_recomputed([Op("zero {d0}", "alu", (x,)), first, to_t(a), again, reader])
    assert again not in tree and reader.srcs == (a,)


def test_rematerialise_constants_makes_the_least_read_ones_where_read():
    c1, c2, x = VReg("c1"), VReg("c2"), VReg("x")
    body = [Op("iadd {s0} {s1} {d0}", "alu", (x,), (c1, c2), line=5), to_t(x), to_t(c2)]
    tree = rematerialise_constants([Op("limm 0x1 {d0}", "alu", (c1,)), Op("limm 0x2 {d0}", "alu", (c2,)),
                                    SeqLoop("%k", "0", "2", body)], keep=1)
    assert [o.text for o in tree if isinstance(o, Op)] == ["limm 0x2 {d0}"]      # c2 is read twice
    made = body[0]
    assert made.text == "limm 0x1 {d0}" and made.line == 5 and body[1].srcs[0] is made.dsts[0]


# -- register allocation, scheduling, printing -------------------------------------------------------

def test_allocate_gives_values_live_at_once_different_places_and_masks_entries():
    a, b, k = VReg("a"), VReg("b"), MaskReg()
    ops = [Op("zero {d0}", "alu", (a,)), Op("zero {d0}", "alu", (b,)),
           Op("uimax {s0} {s1} {K0}", "alu", (), (a, b), (k,)), Op("lpassa {s0} {d0}/{k0}", "alu", (b,), (a,),
                                                                  msrc=(k,), partial=True), to_t(b)]
    out = allocate(ops)
    assert out[a] != out[b] and out[a][0] in "rs" and out[k] in MASK_ENTRIES
    with pytest.raises(AllocError, match="live mask entries"):
        masks = [MaskReg() for _ in range(len(MASK_ENTRIES) + 1)]
        allocate([Op("uimax {s0} {s1} {K0}", "alu", (), (a, a), (m,)) for m in masks] +
                 [Op("lpassa {s0} {d0}/{k0}", "alu", (b,), (a,), msrc=(m,)) for m in masks])


def test_allocate_spills_above_the_argument_block_and_fixes_what_the_unit_rule_refuses():
    regs = Registers(grf=5, lm_words=4096, lm1_from=128)
    vs = [VReg() for _ in range(16)]
    ops = [Op("zero {d0}", "alu", (v,)) for v in vs] + \
        [Op("iadd {s0} {s1} {d0}", "alu", (vs[0],), (vs[k], vs[k + 1])) for k in range(0, 15)] + [to_t(vs[0])]
    out = allocate(ops, regs)
    spilled = [out[v] for v in vs if out[v][0] == "n"]
    assert spilled and all(8 * k >= 128 for _, k in spilled)
    verify(ops, out, regs, after="register allocation")        # two LM1 sources in one op were reloaded


def test_a_value_named_in_a_call_with_an_lm1_offset_is_not_spilled_to_lm1():
    """merge_calls puts ops of any kind in a Call with `n=` (a paired row's LM1 word): a value of
    theirs spilled to LM1 would have its address moved by the offset too (private_big read its
    T-indirect addresses from there and faulted)."""
    regs = Registers(grf=5, lm_words=4096, lm1_from=128)
    vs = [VReg() for _ in range(16)]
    ops = [Op("zero {d0}", "alu", (v,)) for v in vs] + \
        [Op("iadd {s0} {s1} {d0}", "alu", (vs[0],), (vs[k], vs[k + 1])) for k in range(0, 15)]
    tree = [Call(ops, {"n": "%k * 2"}), to_t(vs[0])]
    out = allocate(tree, regs, lm0=(2048, 4096))
    assert not [v for v in vs if out[v][0] == "n"] and [v for v in vs if out[v][0] == "m"]


def test_schedule_keeps_the_hazard_distance_and_pads_the_end():
    """A value read in another form than its write (here cycle 0's long word in every cycle, of a
    per-cycle write) is not on the forwarding path: the read waits for the register."""
    a, b = VReg("a"), VReg("b")
    ops = [Op("zero {d0}", "alu", (a,)), Op("iinc {u0} {d0}", "alu", (b,), (a,))]
    alloc = {a: ("r", 0), b: ("r", 1)}
    steps = schedule(ops, alloc)
    assert [[o.text for o in s] for s in steps] == [["zero {d0}"], [], ["iinc {u0} {d0}"], []]


def test_schedule_forwards_the_previous_steps_results():
    """An op reading, in the next step, the ALU result and the MAU result of one step takes both
    from their forwarding paths (and its other sources renumbered); the verifier accepts it."""
    a, b, c, d = VReg("a"), VReg("b"), VReg("c"), VReg("d")
    ops = [Op("zero {d0}", "alu", (a,)), Op("fvadd {s0} {s0} {d0}", "mau", (b,), (c,)),
           Op("fvfma {s0} {s1} {s2} {d0}", "mau", (d,), (c, a, b))]
    alloc = {a: ("r", 0), b: ("r", 1), c: ("r", 2), d: ("r", 3)}
    steps = schedule(ops, alloc)
    assert [[o.text for o in s] for s in steps] == [
        ["zero {d0}", "fvadd {s0} {s0} {d0}"], ["fvfma {s0} $aluf $mauf {d0}"], []]
    assert steps[1][0].srcs == (c,)
    verify([Block(steps)], alloc, MNCORE2)


def test_schedule_tree_drops_end_pads_no_block_reads_early():
    """A block's closing nop waits for its last write to settle.  Where no block of the program
    reads that register in its first step, the nop goes (the block is open); where one does, it
    stays; a memory some call offsets counts as read wherever it is."""
    a, b, c = VReg("a"), VReg("b"), VReg("c")
    alloc = {a: ("r", 0), b: ("r", 1), c: ("r", 2)}
    first = [Op("zero {d0}", "alu", (a,))]
    reads_b = [Op("iinc {s0} {d0}", "alu", (c,), (b,))]
    out = schedule_tree([SeqLoop("%k", "0", "2", first + [SeqSet("%j", "%k")] + reads_b)], alloc)
    blocks = [it for it in out[0].body if isinstance(it, Block)]
    assert [len(bl.steps) for bl in blocks] == [1, 1] and blocks[0].open and blocks[1].open
    reads_a = [Op("iinc {s0} {d0}", "alu", (c,), (a,))]
    out = schedule_tree([SeqLoop("%k", "0", "2", first + [SeqSet("%j", "%k")] + reads_a)], alloc)
    blocks = [it for it in out[0].body if isinstance(it, Block)]
    assert [len(bl.steps) for bl in blocks] == [2, 1] and not blocks[0].open
    lm = {a: ("m", 0), b: ("r", 1), c: ("r", 2)}
    far = [Op("iinc {s0} {d0}", "alu", (c,), (b,), mem=(("r", "m", 64, 72),))]
    out = schedule_tree([Call(first, {"m": "%k"}), SeqSet("%j", "1")] + far, lm)
    assert len(out[0].body[0].steps) == 3          # (LM0 is offset by a call: read wherever)
    out = schedule_tree([Call(first, {"lb": "%k"}), SeqSet("%j", "1")] + far, lm)
    assert len(out[0].body[0].steps) == 1          # (words 0..7 and 64..71 of LM0: apart)


def test_schedule_tree_turns_runs_into_blocks_and_shares_a_call_body():
    a = VReg("a")
    body = [Op("zero {d0}", "alu", (a,)), to_t(a)]
    tree = [Op("zero {d0}", "alu", (a,)), SeqLoop("%k", "0", "2", [Call(body, {"m": "%k"}), Call(body, {"m": "0"})])]
    out = schedule_tree(tree, {a: ("r", 0)})
    assert isinstance(out[0], Block) and isinstance(out[1], SeqLoop) and out[1] is not tree[1]
    c1, c2 = out[1].body
    assert c1.body is c2.body and isinstance(c1.body[0], Block) and tree[1].body[0].body is body


def test_print_program_writes_blocks_then_the_sequencer_program():
    a, k = VReg("a"), MaskReg()
    zero, test = Op("zero {d0}", "alu", (a,), line=3), Op("lnot {s0} {K0}", "alu", (), (a,), (k,), line=4)
    alloc = {a: ("s", 2), k: 5}
    text = print_program([Block([[zero], [], [test]]), WhileAny(k, [Block([[Op("nop", "nop")]])])], ["argblk"], alloc)
    assert text == (".block b0\n    zero $ls16v    # line 3\n    nop\n    lnot $ls16v $omr5    # line 4\n.endblock\n"
                    ".block b1\n    nop\n.endblock\n.arg %argblk\n.call b0\n.while any $imr5\n    .call b1\n"
                    ".endwhile\n")


# -- verify() ---------------------------------------------------------------------------------------

def test_verify_names_the_c_line_of_an_op_a_pass_broke():
    a = VReg("a")
    op = Op("zero {d0}", "alu", (a,), line=12)
    verify([op, to_t(a)])
    op.text = "frobnicate {d0}"               # a pass rewriting an op's text without the table
    with pytest.raises(BadOp, match=r"verify after packing: 'frobnicate \{d0\}' \(alu, line 12\)") as e:
        verify([SeqLoop("%k", "0", "2", [op])], after="packing")
    assert e.value.line == 12
    op.text, op.srcs = "zero {d0}", (MaskReg(),)
    with pytest.raises(BadOp, match="must be VRegs"):
        verify([op])


def test_verify_checks_locations_steps_and_hazards():
    a, b = VReg("a"), VReg("b")
    make, read = Op("zero {d0}", "alu", (a,), line=1), Op("iinc {s0} {d0}", "alu", (b,), (a,), line=2)
    with pytest.raises(BadOp, match="which the machine does not have"):
        verify([make, read], {a: ("r", 64), b: ("r", 0)}, MNCORE2)
    alloc = {a: ("r", 0), b: ("r", 1)}
    verify([Block([[make], [], [read], []])], alloc, MNCORE2)
    with pytest.raises(BadOp, match=r"1 step\(s\) after its write; the machine needs 2") as e:
        verify([Block([[make], [read], [], []])], alloc, MNCORE2)
    assert e.value.line == 2
    with pytest.raises(BadOp, match="ends before the write"):
        verify([Block([[make], [], [read]])], alloc, MNCORE2)
    with pytest.raises(BadOp, match="two alu expressions in one step"):
        verify([Block([[make, Op("zero {d0}", "alu", (b,))], [], []])], alloc, MNCORE2)
    spill = {a: ("n", 20), b: ("n", 21)}           # LM1 read and written at different regions
    with pytest.raises(BadOp, match="LM1"):
        verify([Block([[Op("iinc {s0} {d0}", "alu", (b,), (a,))], [], [], []])], spill, MNCORE2)


# -- the pipeline --------------------------------------------------------------------------------------

def test_the_pipeline_is_one_list_in_order():
    names = [name for name, _, _ in PIPELINE]
    assert names[:3] == ["read IR", "if-conversion", "instruction selection"]
    assert names[-3:] == ["register allocation", "scheduling", "printing"]
    assert names.index("versioning") < names.index("packing") < names.index("prefetch") < 11
    for _, module, _ in PIPELINE:
        assert os.path.exists(os.path.join(HERE, "..", "translator", "backend", module + ".py"))


def _compile(path, kernel=None, mode="1d"):
    import translator
    mod = translator.compile_opencl(open(path).read(), spmd=True)
    m = load_machine("tiny")
    return {k: compile_kernel(mod, k, m, mode).asm for k in ([kernel] if kernel else mod.kernels)}


@pytest.mark.parametrize("name", ["saxpy_tail", "reduce_sum_local", "branches_nested", "math_float"])
def test_verification_on_passes_and_changes_nothing(name, monkeypatch):
    path = os.path.join(HERE, "kernels", f"{name}.cl")
    if not os.path.exists(path):
        pytest.skip(f"{name}.cl is not in the corpus")
    plain = _compile(path)
    monkeypatch.setenv("MNCL_VERIFY_BACKEND", "1")
    assert _compile(path) == plain


@pytest.mark.slow
def test_verification_passes_on_the_whole_corpus(monkeypatch):
    import translator
    monkeypatch.setenv("MNCL_VERIFY_BACKEND", "1")
    m = load_machine("tiny")
    for path in sorted(glob.glob(os.path.join(HERE, "kernels", "*.cl"))):
        try:
            mod = translator.compile_opencl(open(path).read(), spmd=True)
        except Exception:
            continue                    # kernels needing build options (the corpus tests give them)
        for k in mod.kernels:
            for mode in ("1d", "nd"):
                compile_kernel(mod, k, m, mode)


def test_if_conversion_runs_in_the_pipeline():
    """Stores to out[i] in both arms of an if/else become one store after the join (diamonds.py,
    which rewrites the function in place and returns how many pairs it merged)."""
    import translator
    src = """__kernel void k(__global const float *in, __global float *out, int N, float c, float w)
{
    int i = get_global_id(0);
    int r = i / N;
    int col = i - r * N;
    if (r > 0 && r < N - 1 && col > 0 && col < N - 1)
        out[i] = c * in[i] + w * (in[i - 1] + in[i + 1] + in[i - N] + in[i + N]);
    else
        out[i] = in[i];
}
"""
    asm = compile_kernel(translator.compile_opencl(src, spmd=True), "k", load_machine("tiny"), "1d").asm
    assert asm.count("$d0\n") == 2 + 2      # one store (in both copies of the wave body) and two bounds reports


def test_a_bad_op_is_a_compile_error_at_its_c_line(monkeypatch):
    """A pass that leaves an op the ISA does not have: with verification on, compile_kernel stops
    after that pass with a diagnostic at the op's C line, not an assembler error later."""
    import translator
    import translator.backend as backend
    from translator.module import CompileError
    src = "__kernel void k(__global float *x) {\n  int i = get_global_id(0);\n  x[i] = x[i] * 2.0f;\n}\n"
    mod = translator.compile_opencl(src, spmd=True)

    def breaks_an_op(b):
        op = next(o for o in flat_ops(b.tree) if o.line == 3 and o.unit == "mau")
        op.text = op.text.replace("vmul", "vmulx")
    pipeline = list(backend.PIPELINE)
    pipeline.insert([p[0] for p in pipeline].index("packing"), ("a broken pass", "cleanup", breaks_an_op))
    monkeypatch.setattr(backend, "PIPELINE", tuple(pipeline))
    monkeypatch.setattr(backend, "ALLOCATED", backend.ALLOCATED + 1)
    monkeypatch.setenv("MNCL_VERIFY_BACKEND", "1")
    with pytest.raises(CompileError) as e:
        compile_kernel(mod, "k", load_machine("tiny"), "1d")
    d = e.value.diagnostics[0]
    assert d.line == 3 and "verify after a broken pass" in d.message and "vmulx" in d.message
