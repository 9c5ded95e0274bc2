"""The machine as the backend's ops, allocator, scheduler and verifier see it, read from the ISA
table (emulator/isa.py), the assembler's operand rules (emulator/asm.py), the executor's hazard
distances and the machine description (emulator/machine.py) instead of being written again here.

* ``instruction_error``: an op's assembly text against the ISA table (mnemonic, operand kinds,
  the backend unit matching the row's unit group); ``step_error`` a step's against the unit-group
  rules; ``row`` the table row of a template.
* ``GAP``: steps from a write to the first read that sees it, per location space.
* ``MASK_ENTRIES``: the mask entries an instruction may write (and so hold a value).
* ``Registers``: what the register allocator may use on one machine.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from emulator import isa
from emulator.asm import build_step, parse_expr
from emulator.errors import AsmError
from emulator.isa import HAZARD_STEPS
from emulator.machine import load_machine

# the backend's units (Op.unit) -> the ISA unit groups an op of that unit may belong to
UNIT_GROUPS = {"alu": (isa.ALU,), "mau": isa.MAU_GROUPS, "l1bm": (isa.L1BM, isa.L1BM_TURN), "l2bm": (isa.L2BM,),
               "mv": (isa.MV,), "wait": (isa.WAIT,), "nop": (isa.NOP, isa.NOFORWARD)}

# the forwarding path that holds the previous step's result of an op of each unit / ISA unit group
# (the scheduler reads it instead of the register: schedule.py)
FORWARD = {g: isa.FORWARD_PATH[g] for g in (isa.ALU, isa.MAU_CALC)}    # (the unit "alu" is the group)
FORWARD["mau"] = FORWARD[isa.MAU_CALC]

# A read HAZARD_STEPS[space] or fewer steps after the write is a hazard, so the read goes one step
# later; the T register, which the executor does not check, is read in the next step.
GAP = {"t": 1, **{sp: steps + 1 for sp, steps in HAZARD_STEPS.items()}}

IMM = isa.BY_NAME["imm"]        # imm / limm: may not issue in a step that touches LM0 (the unit-group rule)
MAX_OPERANDS = 1 + max(len(d.srcs) for d in isa.TABLE)   # an instruction's sources and destination: 4 (fma)
WORDS_PER_REGISTER = 8          # one value: 4 long words ($lr<8k>v), 8 32-bit words of a GRF or LM


class _Where:
    """The assembler's parse context, for parsing one expression outside a program."""
    source, line, text = "<op>", 0, ""

    @staticmethod
    def error(msg: str) -> AsmError:
        return AsmError(msg)


def parse(text: str):
    """The emulator's decoded expression (isa.Expr) of one assembly expression, or AsmError."""
    return parse_expr(text, _Where())


MASK_ENTRIES = tuple(isa.FLAG_MASKS)        # 1..15: 0 and 16..31 are fixed patterns


@functools.lru_cache(maxsize=1 << 14)
def row(text: str) -> isa.InstrDef | None:
    """The ISA table row of an op's template (its first word is the opcode)."""
    opcode = text.split(None, 1)[0] if text.strip() else ""
    if "/" in opcode and not opcode.startswith("mv"):
        opcode = opcode.split("/", 1)[0]
    return isa.match_opcode(opcode)[0]


@functools.lru_cache(maxsize=1 << 16)
def instruction_error(text: str, unit: str) -> str | None:
    """Why `text`, one assembly expression an op of `unit` issues (its fields filled), is not an
    instruction of the ISA table in that unit, or None."""
    if unit not in UNIT_GROUPS:
        return f"unknown unit '{unit}' (one of {', '.join(UNIT_GROUPS)})"
    d = row(text)
    if d is None:
        return f"unknown instruction '{text.split()[0] if text.strip() else text}' (emulator/isa.py has no such row)"
    if d.group not in UNIT_GROUPS[unit]:
        return f"'{d.name}' is a {d.group} instruction, not {unit}"
    try:
        parse(text)
    except AsmError as e:
        return e.message
    return None


@functools.lru_cache(maxsize=1 << 16)
def step_error(texts: tuple) -> str | None:
    """Why expressions issued together in one step break the unit-group rules (the assembler's
    build_step: one expression per unit group, LM0 and LM1 at one region each, no imm with LM0), or None."""
    try:
        build_step([parse(t) for t in texts], _Where(), {})
    except AsmError as e:
        return e.message
    return None


@dataclass(frozen=True)
class Registers:
    """What the register allocator may use: `grf` four-long-word registers in each of GRF0 and GRF1,
    LM1 in 8-word slots of its `lm_words` above the first `lm1_from` words (the argument block)
    and below `lm1_to` (what row plans' regions leave; all of it when 0), and the writable mask
    entries."""
    grf: int
    lm_words: int
    lm1_from: int = 0
    masks: tuple = MASK_ENTRIES
    lm1_to: int = 0

    @classmethod
    def of(cls, machine, lm1_from: int = 0, lm1_to: int = 0) -> "Registers":
        return cls(machine.grf_words // WORDS_PER_REGISTER, machine.lm_words, lm1_from, lm1_to=lm1_to)

    @property
    def lm1_top(self) -> int:
        return self.lm1_to or self.lm_words


MNCORE2 = Registers.of(load_machine("mncore2"))     # for ops trees built by hand (tests)
