"""Run an MN-Core Challenge answer the way PFN's judge does, and say whether it is accepted.

A contest testcase is one .vsm file in three parts:

    <input: 'r' raw DRAM lines, 'd set' lines>
    # ======= YOUR VSM WILL BE INSERTED HERE =======
    <suffix run after the answer (often empty)>
    # ======= Output =======
    d getd $d0n0 1 # expect=[1.5, 2.5] / Float @[0],[1] atol=1e-3 rtol=0

The answer loses its comments (from '#' or '!') and its debug statements ('d get', 'd set'),
as the judge's assembler pass drops them; input, answer, suffix and output then run one after
another on one machine, in PFN mode (transfers complete at once, no hazard enforced: what PFN's
emulator does).  Each expect line's dump gives one long word, read as the line's dtype; a value
is wrong when it is off by more than atol and by more than rtol times the expected value (the
tolerances of the first expect line apply to all, as in the judge).
"""
from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass

import numpy as np

from .asm import assemble
from .checks import pfn_report
from .errors import EmulatorError
from .executor import Emulator
from .numbers import mnhalf_to_f32

HERE = "# ======= YOUR VSM WILL BE INSERTED HERE ======="
OUTPUT = "# ======= Output ======="
_EXPECT = re.compile(r"#\s*\w+=(?P<values>.*?) / (?P<dtype>\w+) @(?P<idx>\S+)"
                     r"(?: atol=(?P<atol>\S+))?(?: rtol=(?P<rtol>\S+))?")
_BITS = {"ULong": 64, "Long": 64, "Double": 64, "UInt": 32, "Int": 32, "Float": 32,
         "UShort": 16, "Short": 16, "Half": 16, "UByte": 8, "Byte": 8, "String": 8}


class JudgeError(EmulatorError):
    """A testcase the judge cannot read (the file and line are named)."""


@dataclass
class Expect:
    line: int                 # line number in the testcase file
    text: str
    values: list
    dtype: str
    indices: str
    atol: float
    rtol: float


@dataclass
class Verdict:
    accepted: bool
    message: str              # 'ACCEPTED ...' or the first mismatch
    pfn_report: str = ""


def split_testcase(text: str, source: str) -> tuple[str, str, str]:
    """(input, suffix, output) of a testcase."""
    if HERE not in text or OUTPUT not in text.split(HERE, 1)[1]:
        raise JudgeError(f"{source}: not a contest testcase: it needs the lines '{HERE}' and, after it, '{OUTPUT}'")
    head, rest = text.split(HERE, 1)
    suffix, output = rest.split(OUTPUT, 1)
    return head, suffix, output


def sanitize_answer(text: str) -> str:
    """The answer as the judge runs it: comments and debug statements blanked (line numbers kept)."""
    out = []
    for line in text.split("\n"):
        line = re.sub(r"[#!].*$", "", line)
        if re.match(r"\s*d\s+(get|set)", line):
            line = ""
        out.append(line)
    return "\n".join(out)


def parse_expects(output: str, first_line: int, source: str) -> list[Expect]:
    exps = []
    for k, raw in enumerate(output.split("\n")):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        at = f"{source}:{first_line + k}"
        m = _EXPECT.search(raw)
        if not raw.lstrip().startswith("d get") or m is None:
            raise JudgeError(f"{at}: an output line is 'd get... # expect=[...] / <dtype> @<indices>': {raw.strip()}")
        dtype = m["dtype"]
        if dtype not in _BITS:
            raise JudgeError(f"{at}: dtype {dtype} is not supported (use one of {', '.join(_BITS)})")
        vals = m["values"].strip()
        try:
            if dtype == "String":
                values = list(ast.literal_eval(vals))
            else:
                values = ast.literal_eval(re.sub(r"(-?)\binf\b", r"\g<1>1e999", vals))
        except (ValueError, SyntaxError):
            raise JudgeError(f"{at}: cannot read the expected values {vals}") from None
        tol = [float(x) if x else 0.0 for x in (m["atol"], m["rtol"])]
        exps.append(Expect(first_line + k, raw.strip(), list(values), dtype, m["idx"], *tol))
    if not exps:
        raise JudgeError(f"{source}: the output part has no expect lines")
    return exps


def _payload(dump_line: str) -> int:
    """The long word a dump line shows (its hex fields, concatenated)."""
    m = re.search(r"v:0x([0-9A-Fa-f]+)", dump_line)
    if m:
        return int(m[1], 16)
    m = re.search(r":\([^)]*\) \(([^)]*)\)", dump_line)
    fields = [f.strip()[2:] for f in m[1].split(",")]
    width = 64 // len(fields)
    v = 0
    for f in fields:
        v = (v << width) | int(f, 16)
    return v


def decode(word: int, dtype: str) -> list:
    """A long word as the judge reads it: lanes most significant first, floats normalised (an exponent
    of 0 is zero, an all-ones exponent infinity), MN-Core half widened to float."""
    bits = _BITS[dtype]
    parts = [(word >> (64 - bits * (i + 1))) & ((1 << bits) - 1) for i in range(64 // bits)]
    if dtype == "String":
        return [chr(p) for p in parts]
    if dtype.startswith("U"):
        return parts
    if dtype in ("Long", "Int", "Short", "Byte"):
        return [p - (1 << bits) if p >> (bits - 1) else p for p in parts]
    if dtype == "Half":
        return [float(x) for x in mnhalf_to_f32(np.array(parts, dtype=np.uint16))]
    exp_bits, man_bits = (11, 52) if dtype == "Double" else (8, 23)
    out = []
    for p in parts:
        e = (p >> man_bits) & ((1 << exp_bits) - 1)
        if e == 0 or e == (1 << exp_bits) - 1:
            p &= ~((1 << man_bits) - 1)
        arr = np.array([p], dtype=np.uint64 if bits == 64 else np.uint32)
        out.append(float(arr.view(np.float64 if bits == 64 else np.float32)[0]))
    return out


def _wrong(actual, expected, atol: float, rtol: float) -> bool:
    if isinstance(expected, str):
        return actual != expected
    diff = abs(actual - expected)
    if math.isnan(diff):                 # inf against inf of the same sign
        return actual != expected
    return diff > atol and diff > rtol * abs(expected)


def judge(testcase: str, answer: str, machine="mncore2", testcase_name="testcase.vsm",
          answer_name="answer.vsm") -> Verdict:
    """Run the answer against the testcase; EmuFault / AsmError propagate (they name the file and line)."""
    head, suffix, output = split_testcase(testcase, testcase_name)
    out_line = testcase[:testcase.index(OUTPUT)].count("\n") + 2
    expects = parse_expects(output, out_line - 1, testcase_name)
    emu = Emulator(machine, pfn=True)
    parts = [(head, testcase_name, 0), (sanitize_answer(answer), answer_name, 0),
             (sanitize_answer(suffix), testcase_name, head.count("\n")), (output, testcase_name, out_line - 2)]
    breaches, first = 0, None
    profile = None
    for text, name, skip in parts:
        prog = assemble("\n" * skip + text, source=name)     # blank lines keep the file's line numbers
        emu.dump.clear()
        prof = emu.run(prog)
        if name == answer_name:
            profile = prof
        breaches += emu.breaches
        first = first or emu.first_breach
    report = pfn_report(breaches, first)
    atol, rtol = expects[0].atol, expects[0].rtol
    dumps = emu.dump
    if len(dumps) != len(expects):
        raise JudgeError(f"{testcase_name}: each expect line must dump one long word of one PE "
                         f"({len(emu.dump)} dump lines for {len(expects)} expect lines)")
    for exp, line in zip(expects, dumps):
        got = decode(_payload(line), exp.dtype)[:len(exp.values)]
        for i, (a, x) in enumerate(zip(got, exp.values)):
            if _wrong(a, x, atol, rtol):
                idx = exp.indices.split("],[")[i].strip("[]") if "],[" in exp.indices else exp.indices.strip("[]")
                return Verdict(False, f"MISMATCH at {testcase_name}:{exp.line} [{idx}] ({exp.dtype}): "
                                      f"actual={a!r} expected={x!r}\n    {exp.text}", report)
    n = sum(len(e.values) for e in expects)
    cycles = profile.summary()["cycles"] if profile is not None else 0
    return Verdict(True, f"ACCEPTED: {n} value(s) match; the answer ran {cycles:.0f} cycles", report)
