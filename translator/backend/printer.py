"""Printing: the scheduled tree (schedule.py's Blocks of steps under the control nodes) and the
allocation -> .vsm assembly text: the blocks of PE steps, then the sequencer program calling them.
"""
from __future__ import annotations

from .ops import Call, IfAnyLane, MV, SeqFault, SeqIf, SeqLoop, SeqSet, WhileAny, render
from .schedule import Block


def print_program(tree: list, args: list, alloc) -> str:
    """The scheduled control tree (schedule.schedule_tree) -> the program's assembly text: its
    blocks, then the sequencer program that calls them."""
    out = [".arg " + " ".join(f"%{a}" for a in args)] if args else []
    blocks = []
    names = {}
    counter = [0]

    def block(steps):
        name = f"b{counter[0]}"
        counter[0] += 1
        lines = [f".block {name}"]
        for st in steps:
            if not st:
                lines.append("    nop")
            elif len(st) == 1 and st[0].unit == "wait":
                lines.append(f"    {st[0].text}")
            else:
                txt = "; ".join(render(o, alloc) for o in st)
                ln = next((o.line for o in st if o.line), 0)
                lines.append(f"    {txt}" + (f"    # line {ln}" if ln else ""))
        lines.append(".endblock")
        blocks.append("\n".join(lines))
        return name

    def walk(items, ind):
        for it in items:
            if isinstance(it, Block):
                out.append(f"{ind}.call {block(it.steps)}")
            elif isinstance(it, MV):
                name = f"mv{counter[0]}"
                counter[0] += 1
                blocks.append(f".block {name}\n    {it.text}\n.endblock")
                lc = "" if it.lc_offset is None else f" lc={str(it.lc_offset).replace(' ', '')}"
                out.append(f"{ind}.call {name} d={it.d_offset}{lc}")
            elif isinstance(it, WhileAny):
                out.append(f"{ind}.while any $imr{alloc[it.mask]}")
                walk(it.body, ind + "    ")
                out.append(f"{ind}.endwhile")
            elif isinstance(it, SeqLoop):
                step = "" if str(it.step) == "1" else f", {it.step}"
                out.append(f"{ind}.loop {it.reg} = {it.start}, {it.stop}{step}")
                walk(it.body, ind + "    ")
                out.append(f"{ind}.endloop")
            elif isinstance(it, IfAnyLane):
                out.append(f"{ind}.if any $imr{alloc[it.mask]}")
                walk(it.then, ind + "    ")
                out.append(f"{ind}.endif")
            elif isinstance(it, SeqIf):
                out.append(f"{ind}.if {it.cond}")
                walk(it.then, ind + "    ")
                if it.orelse:
                    out.append(f"{ind}.else")
                    walk(it.orelse, ind + "    ")
                out.append(f"{ind}.endif")
            elif isinstance(it, SeqSet):
                out.append(f"{ind}.set {it.reg} = {it.expr}")
            elif isinstance(it, SeqFault):
                out.append(f'{ind}.fault "{it.message}"')
            elif isinstance(it, Call):
                key = id(it.body)
                if key not in names:
                    names[key] = block(it.body[0].steps)
                offs = " ".join(f"{k}={str(v).replace(' ', '')}" for k, v in it.offsets.items())
                out.append(f"{ind}.call {names[key]} {offs}")
    walk(tree, "")
    return "\n".join(blocks + out) + "\n"
