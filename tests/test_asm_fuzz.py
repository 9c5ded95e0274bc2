"""The assembler under fuzzing: bad text gives an AsmError naming its line, and nothing else.

The property: whatever one line holds (a mutated valid line, two lines joined,
a random string), ``assemble`` either accepts the program or raises an
``AsmError`` whose ``line`` is where the line was placed and whose text starts
with ``source:line:``.  Any other exception (IndexError, OverflowError,
RecursionError, MemoryError, a numpy warning, ...), a hang, or a wrong line
number is a bug.  Every tested line sits after a few valid lines, so the line
number is rarely 1.

Lines fed by the property tests: 15,000 seeded mutations + 3,000 seeded random
strings + 2 x 1,500 hypothesis examples = 21,000 (plus the corpus itself).
The bugs these tests found have a regular test each at the end of the file.
"""
from __future__ import annotations

import contextlib
import random
import signal
import sys
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emulator import AsmError, EmuFault, Emulator, assemble, isa

SOURCE = "fuzz.vsm"

# -- the corpus: every table example plus valid lines of every statement kind ------------------

EXAMPLES = [ln for row in isa.TABLE for ln in row.example.splitlines() if ln.strip()]

CORPUS = [
    "lpassa $lm0v $lr0v", "lpassa $lr[0,2,4,6] $lm0", "lpassa $lmt $lr0", "lpassa $llt $lr0v",
    "lpassa $subpeid $omr1", "lpassa $lm0 $lr0/1000", "lpassa $lm0 $lr0/$imr1", "lpassa $peid $nowrite",
    "fvfma $lm0 $ln0 $lr0 $ls0", "fvfma -$lm0 $ln0e $lr0 $ls0", "hvfma $lm0r $ln0 $lr0e $ls0",
    "dvfmau $lm0v $ln0v $lr0v $ls0v", "ladd $aluf $lr0 $lr2", "fvadd $mauf $lr0 $lr2",
    "l1bmp $lb0 $lr0v", "l1bmm4@0 $lr0v $lb0", "l1bmd $lr0v $lb8", "l1bmm $llb0 $llr0v",
    "l2bmb $lc0 $lb0", "l2bmd $lb0 $lc64", "l2bm@1 $lb0 $lc64",
    "mvp/n64i1 $d0 $lc0@.0", "mvp/n64 $lc0@0.1 $d64@0", "mvp/n64i2 $p0 $d128", "mvb/n64i1 $d64@2 $lc0",
    "mvd/n128i1 $lc0 $d0", "mvr2ffadd/n64i3 $lc0 $p0",
    "d set $lm0n0c0b0m0p0 2 l3FF0000000000000l4000000000000000", "d set $lr0 1 3FF0000000000000",
    "d getf $ln0n0c0b0m0 1", "d get $lb0n0c0b0 4", "d getd $lc0n0c1 2", "d geth $ltn0c0b0m0p0 1",
    "d get $omr1 1", "d getd $d0n0 1",
    "nop", "nop/3", "nop; wait i1", "noforward; lpassa $lr0 $lr2", "lpassa $lr0 $lr2; fvadd $lr4 $ls0 $ls2",
    "mask 1", "maskl 2", "maskrs 0", "masklln 31",
    "imm 0x3f800000 $lr0", "immu 7 $ls0", "limm 1.5 $lr0", "limm -1 $lr0", "imm 1e3 $lr0",
    "dmwrite $lr0v $lx0", "hmwrite $lr0v $llx8", "dmread $lx0 $lr0v", "fmmul $ly $ls0v $nowrite",
    ".arg %n, %m", ".set %x = %n * 2 + 1", ".set %y = (%n << 3) >> 1", ".set %q = -7 / 2 % 3",
    ".call body", ".call body m=%i*8", ".call body m=0 n=%n lb=64 d=%n*64",
    ".loop %i = 0, %n", ".loop %i = %n - 1, -1, -1", ".loop 4", ".while any $imr1", ".if any $imr15",
    ".if %n > 2 && %n != 5 || %n == 0", ".endloop", ".else", ".endif", ".endwhile",
    ".block other", ".endblock", "quit", "# a comment", "   ", "lpassa $lm0 $lr0   # trailing comment",
    # the notation of PFN's public programs (issue 19)
    'imm i"2" $lr0', 'imm ui"0xfffffff0" $lr0', 'imm f"8.0" $t', 'imm f"inf" $lr0', 'imm h"1.5" $ls0',
    'imm s"-3" $lr0', 'limm d"2.5" $lr0', 'limm ul"0x10" $lr0', "d get $lm0m0p0 1", "d getf $lm0p0 1",
    "d set $lm0n0c0b0p0 1 3FF0000000000000", "r 0 1a 2 3FF0000000000000C000000000000000",
    "mvp/n64i1e $d0 $lc0@.0", "nop; wait i1e", "l2bmb@3 $lc0 $lb0", "l2bmb@0,2 $lc64 $lb0", "l1bmd+1 $lb0 $lr0v/1000",
    "l1bmd-1 $lb256 $lr0v", "lpassa/$imr1 $lm0 $lr0", "fvadd/1010 $lr0 $ls0 $lr2", "hbfn/9 $lm0v $lr0v",
    "llnot $lr0 $lr2", "ilnot $lr0 $lr2", "sbsl $lr0 $ls0 $lr2", "ibsl $lr0 $ls0 $lr2", "lbsl $lr0 $ls0 $lr2",
    "hilrelud $lr0 $ls0 $lr2", "l2bmr2ffadd $lb0 $lc0", "l1bmrsbor $lr0v $lb0", "l2bmrsbor $lb0 $lc0",
    "l2bmi@0,1 $lb0 $lb64", "mvb4/n256i2 $d0@0 $lc0", "mvr4ffadd/n256i3 $lc0 $d0@1", "fvfma $lr0 $ls0 $alufe $lr2",
    "ipassa $subpeid $lnb", "lpassa $lm0 $lmb", "lpassa $lm0j1 $ln0j2", "hvadd $lr0 $ls0e $llr4",
    "l1bmrdfadd $lr0v $lbi; l1bmm $lbi $lr8v", "d getf $lm0n0c0b0m0p0 1",
]

# Valid, balanced lines placed before the line under test (so an error there is a bug of the
# prefix, not of the fuzzed line).  "body" is defined so that '.call body' is valid.
PREFIX_POOL = [
    "lpassa $subpeid $lm0", "nop", "nop/2", "mask 1", "mask 0", "d getf $ln0n0c0b0m0 1",
    ".arg %n", ".set %i = 3", "# comment", "", "ladd $lr0 $ls0 $lr2",
    ".loop %k = 0, 2\nnop\n.endloop", ".if any $imr1\nnop\n.else\nnop\n.endif",
]
BODY = ".block body\nlpassa $lm0 $lr0\n.endblock"

SPECIAL = list("$/;@[],.%-#lvtnmrsxybcdpi=*+<>&|!~()_ 0123456789\t\"jufhe") + [
    "\x00", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029", "\ufeff", "é", "ß", "İ", "ſ",
    "\u0661", "\U0001d7d9", "\u00a0", "\u3000", "日", "\U0001f600"]
NUMBERS = ["0", "1", "-1", "7", "15", "16", "31", "32", "63", "64", "65", "255", "4096", "65536",
           "99999999999", "99999999999999999999", "9" * 5000, "0x10", "1e999", "-0", "00", "1_0"]



def mutate(line: str, rnd: random.Random) -> str:
    """One to three random edits of a line."""
    for _ in range(rnd.randint(1, 3)):
        k = rnd.randrange(12)
        pos = rnd.randint(0, len(line))
        toks = line.split()
        if k == 0 and line:                      # delete a character
            pos = rnd.randrange(len(line))
            line = line[:pos] + line[pos + 1:]
        elif k == 1:                             # insert a character
            line = line[:pos] + rnd.choice(SPECIAL) + line[pos:]
        elif k == 2 and line:                    # replace a character
            pos = rnd.randrange(len(line))
            line = line[:pos] + rnd.choice(SPECIAL) + line[pos + 1:]
        elif k == 3:                             # insert a number, often huge
            line = line[:pos] + rnd.choice(NUMBERS) + line[pos:]
        elif k == 4:                             # replace a digit run by a number
            runs = [i for i, c in enumerate(line) if c.isdigit()]
            if runs:
                i = j = rnd.choice(runs)
                while j < len(line) and line[j].isdigit():
                    j += 1
                line = line[:i] + rnd.choice(NUMBERS) + line[j:]
        elif k == 5 and len(toks) > 1:           # swap two tokens
            i, j = rnd.sample(range(len(toks)), 2)
            toks[i], toks[j] = toks[j], toks[i]
            line = " ".join(toks)
        elif k == 6 and toks:                    # duplicate a token
            i = rnd.randrange(len(toks))
            toks.insert(i, toks[i])
            line = " ".join(toks)
        elif k == 7 and toks:                    # drop a token
            del toks[rnd.randrange(len(toks))]
            line = " ".join(toks)
        elif k == 8:                             # join with another line
            line = line + rnd.choice([";", "; ", " ; "]) + rnd.choice(EXAMPLES + CORPUS)
        elif k == 9:                             # truncate
            line = line[:pos]
        elif k == 10:                            # repeat a piece (long lines, deep nesting)
            a = rnd.randint(0, len(line))
            piece = line[a:a + rnd.randint(1, 4)] or "-"
            line = line[:a] + piece * rnd.choice([2, 10, 300, 3000]) + line[a:]
        else:                                    # a random token from another line
            other = rnd.choice(EXAMPLES + CORPUS).split() or ["$lm0"]
            toks.insert(rnd.randint(0, len(toks)), rnd.choice(other))
            line = " ".join(toks)
    return line


def random_line(rnd: random.Random) -> str:
    n = rnd.choice([0, 1, 2, 5, 10, 30, 80, 200])
    if rnd.random() < 0.5:
        return "".join(rnd.choice(SPECIAL) for _ in range(n))
    return "".join(chr(rnd.choice([rnd.randrange(32, 127), rnd.randrange(0, 0x110000)]))
                   for _ in range(n))


def _one_line(line: str) -> str:
    """The line under test must stay one line of the file."""
    return line.replace("\r", " ").replace("\n", " ")


# -- the property --------------------------------------------------------------------------------

class Hang(Exception):
    pass


@contextlib.contextmanager
def deadline(seconds: float, what: str):
    """Turn a hang into a test failure that names the input (POSIX main thread only)."""
    if not hasattr(signal, "setitimer"):
        yield
        return

    def on_alarm(signum, frame):
        raise Hang(f"assemble took more than {seconds}s on {what!r:.300}")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def check_line(line: str, prefix: list[str]) -> None:
    """Place `line` after `prefix`; only an AsmError naming its line may come out."""
    line = _one_line(line)
    before = "\n".join(prefix).split("\n") if prefix else []
    lineno = len(before) + 1
    text = "\n".join(before + [line])
    try:
        with deadline(5.0, line), warnings.catch_warnings():
            warnings.simplefilter("error")          # a numpy overflow warning is an escape too
            assemble(text, SOURCE)
    except AsmError as e:
        assert e.line == lineno, f"error names line {e.line}, the bad line is {lineno}: {line!r:.300}\n{e}"
        assert f"{SOURCE}:{lineno}:" in str(e), str(e)
    except Hang:
        raise
    except BaseException as e:   # noqa: BLE001 -- the point of the test
        raise AssertionError(f"{type(e).__name__} escaped assemble() on {line!r:.300}: {e!s:.300}") from e


def random_prefix(rnd: random.Random) -> list[str]:
    pre = [BODY] if rnd.random() < 0.8 else []
    pre += rnd.sample(PREFIX_POOL, rnd.randint(0, 4))
    rnd.shuffle(pre)
    return pre


def test_every_table_example_assembles():
    for row in isa.TABLE:
        assemble(row.example, f"{row.name}.vsm")


@pytest.mark.parametrize("line", CORPUS + EXAMPLES, ids=repr)
def test_corpus_line_assembles_after_a_prefix(line):
    prefix = [BODY, "lpassa $subpeid $lm0", "nop"]
    if line.startswith((".endloop", ".endif", ".else", ".endwhile", ".endblock")):
        return                     # closers need their opener: only fuzzed
    try:
        assemble("\n".join(prefix + [line]), SOURCE)
    except AsmError as e:
        # openers (.loop, .if, .block ...) without their closer: reported at their own line
        assert e.line == 6 and "has no" in e.message, str(e)


N_MUTATED, N_RANDOM, N_HYPOTHESIS = 15_000, 3_000, 1_500


def test_mutated_lines_seeded():
    rnd = random.Random(20240601)
    seeds = EXAMPLES + CORPUS
    for _ in range(N_MUTATED):
        check_line(mutate(rnd.choice(seeds), rnd), random_prefix(rnd))


def test_random_strings_seeded():
    rnd = random.Random(7)
    for _ in range(N_RANDOM):
        check_line(random_line(rnd), random_prefix(rnd))


@settings(max_examples=N_HYPOTHESIS, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.sampled_from(EXAMPLES + CORPUS), rseed=st.integers(0, 2**32 - 1))
def test_mutated_lines_hypothesis(seed, rseed):
    rnd = random.Random(rseed)
    check_line(mutate(seed, rnd), random_prefix(rnd))


@settings(max_examples=N_HYPOTHESIS, deadline=None, suppress_health_check=list(HealthCheck))
@given(line=st.text(st.one_of(st.sampled_from(SPECIAL), st.characters()), max_size=120),
       rseed=st.integers(0, 2**16))
def test_random_text_hypothesis(line, rseed):
    check_line(line, random_prefix(random.Random(rseed)))


# -- regressions: one test per bug the fuzzer found -----------------------------------------------

def asm_error(text: str) -> AsmError:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AsmError) as ei:
            assemble(text, SOURCE)
    return ei.value


@pytest.mark.parametrize("text, line", [
    ("nop\n\x0c\nbadop", 3),                      # form feed: splitlines() made it two lines
    ("nop # a \u2028 comment\nbadop", 2),          # U+2028 in a comment split the comment
    ("nop\x85\nnop\x1c\nbadop", 3),
    ("nop\r\nbadop", 2), ("nop\rbadop", 2),         # CRLF and CR still end lines, as open() sees them
])
def test_line_numbers_count_only_real_line_ends(text, line):
    e = asm_error(text)
    assert e.line == line and f"{SOURCE}:{line}:" in str(e) and "badop" in e.message


@pytest.mark.parametrize("text, what", ids=lambda v: str(v)[:40], argvalues=[
    ("lpassa $lm99999999999999999999 $lr0", "address"),                  # was OverflowError (int64)
    ("lpassa $lr[0,2,4,99999999999999999999] $lm0", "address"),          # was OverflowError
    ("lpassa $lr0v111111111111111111111111111111 $lm0", "address increment"),
    ("lpassa $lm" + "1" * 5000 + " $lr0", "address"),                   # was ValueError (4300 digits)
    ("l1bmm@" + "1" * 5000 + " $lr0v $lb0", "selector"),
    ("mvp/n64i" + "1" * 5000 + " $d0 $lc0@.0", "tag"),
    ("nop; wait i" + "1" * 5000, "tag"),
    ("d getf $ln0n" + "1" * 5000 + "c0b0m0 1", "index"),
    ("dmwrite $lr0v $lx" + "9" * 5000, "row"),
])
def test_huge_numbers_in_operands_are_asm_errors_with_the_limit(text, what):
    e = asm_error("nop\n" + text)
    assert e.line == 2 and f"{what} " in e.message and "too large (at most 4294967295)" in e.message, e.message


@pytest.mark.parametrize("text", ids=lambda v: v[:40], argvalues=[
    ".while any $imr" + "1" * 5000,                     # was ValueError (4300 digits)
    "lpassa $subpeid $lm0/$imr" + "1" * 5000,           # was ValueError
    "lpassa $subpeid $omr" + "1" * 5000,                # was ValueError
])
def test_huge_mask_entries_are_asm_errors(text):
    e = asm_error("nop\n" + text)
    assert e.line == 2 and "mask entry" in e.message and "too large (at most 31)" in e.message, e.message


def test_addresses_up_to_the_limit_still_assemble():
    assemble("lpassa $lm4294967294 $lr0\nmvp/n64i1 $d4294967295 $lc0@.0\nlpassa $lm000000000000000000002 $lr0\n"
             "mvb/n64i1 $d0@0 $lc" + "0" * 5000)    # 5000 zeros are address 0 (int() refuses > 4300 digits)


def test_nop_repeat_count_is_bounded():
    # nop/99999999999 used to build 10**11 steps: a hang, then a MemoryError
    with deadline(5.0, "nop/99999999999"):
        e = asm_error("nop\nnop/99999999999")
    assert e.line == 2 and "at most 65536" in e.message
    assert "at most 65536" in asm_error("nop/65537").message
    assert "k >= 1" in asm_error("nop/0").message
    prog = assemble("nop/65536")
    assert prog.n_statements() == 65536


@pytest.mark.parametrize("expr", ids=lambda v: v[:20], argvalues=[
    "-" * 1000 + "1",                # RecursionError in the rewrite
    "not " * 10000 + "1",            # MemoryError from Python's parser
    "1+" * 100000 + "1",             # RecursionError during ast construction
    "1 if 1 else " * 2000 + "1",     # RecursionError
    "~" * 5000 + "1",
])
def test_deeply_nested_scalar_expressions_are_asm_errors(expr):
    # the assembler finds too deep a nesting by its RecursionError at the interpreter's default
    # limit; translator.compile_opencl raises the process-wide limit to 12000, so after any
    # OpenCL build in the same process (tests/public runs first) these would assemble
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        e = asm_error(f"nop\n.set %x = {expr}")
    finally:
        sys.setrecursionlimit(old)
    assert e.line == 2 and "too deeply nested" in e.message


@pytest.mark.parametrize("expr, count", [("1 << 99999999999999", "99999999999999"), ("%n >> -1", "-1"),
                                         ("1 << 64", "64"), ("%n << -(3)", "-3")])
def test_constant_shift_counts_outside_0_63_are_asm_errors(expr, count):
    # '1 << 99999999999999' assembled, then hung (and ran out of memory) at run time
    e = asm_error(f".arg %n\n.set %x = {expr}")
    assert e.line == 2 and f"shift count {count} is outside 0..63" in e.message


def test_power_is_rejected_not_evaluated():
    with deadline(5.0, "%n ** 99999"):
        e = asm_error(".arg %n\n.set %x = %n ** 99999")
    assert e.line == 2 and "C operators" in e.message


@pytest.mark.parametrize("n", [10**12, -1, 64])
def test_register_shift_counts_outside_0_63_fault_at_run_time(n):
    # n = 10**12 was a MemoryError after a long hang, n = -1 a bare ValueError
    prog = assemble(".arg %n\n.set %x = 1 << %n\n.set %y = %x >> 1", "s.vsm")
    with deadline(5.0, f"1 << {n}"), pytest.raises(EmuFault) as ei:
        Emulator("tiny").run(prog, {"n": n})
    assert ei.value.line == 2 and f"shift count {n}" in ei.value.message and "s.vsm:2:" in str(ei.value)


def test_register_shifts_in_range_still_work():
    emu = Emulator("tiny")
    prog = assemble(".arg %n\n.set %x = (1 << %n) >> 2\n.if %x != 4\n.set %y = 1 / 0\n.endif")
    emu.run(prog, {"n": 4})


@pytest.mark.parametrize("text, fmt", [("imm 1e40 $lr0", "fp32"), ("limm 1e999 $lr0", "fp64"),
                                       ("imm 3.4028236e38 $lr0", "fp32")])
def test_float_immediates_that_overflow_are_asm_errors(text, fmt):
    # imm 1e40 gave numpy's 'overflow encountered in cast' and inf; limm 1e999 was silently inf
    e = asm_error("nop\n" + text)
    assert e.line == 2 and f"does not fit in {fmt}" in e.message


def test_largest_float_immediates_still_assemble():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prog = assemble("imm 3.4028235e38 $lr0\nlimm 1.7976931348623157e308 $lr0\nimm 1e-50 $lr0")
    imms = [st.exprs[0].imm for b in prog.blocks.values() for st in b.stmts]
    assert imms[0] == 0x7F7FFFFF7F7FFFFF and imms[1] == 0x7FEFFFFFFFFFFFFF and imms[2] == 0
