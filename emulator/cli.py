"""mncl-emu: run an assembly program on the emulator.

  mncl-emu PROG.vsm [-d DUMP] [--machine tiny|mncore2|FILE.toml] [--profile OUT.json]
           [--trace OUT.json] [--wrap] [--pfn] [--arg NAME=VALUE ...]
  mncl-emu --judge TESTCASE.vsm ANSWER.vsm      (an MN-Core Challenge answer, as PFN's judge runs it)

Exit status: 0 ran to the end (judge: ACCEPTED), 1 the program faulted or did not assemble
(judge: a mismatch), 2 bad usage (missing file, unknown machine, bad argument, a testcase
that is not one).
"""
from __future__ import annotations

import sys

import click

from .asm import assemble
from .errors import AsmError, EmuFault, EmulatorError, MachineError
from .executor import Emulator
from .inputs import MAX_ASM_BYTES, InputError, read_input
from .judge import judge as run_judge
from .machine import load_machine
from .progress import progress_for


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("program", type=click.Path(dir_okay=False))
@click.option("-d", "--dump", "dump_path", type=click.Path(dir_okay=False),
              help="write 'd get' output here (default: standard output)")
@click.option("--machine", default="mncore2", show_default=True, help="preset name or machine TOML file")
@click.option("--profile", "profile_path", type=click.Path(dir_okay=False), help="write the profile as JSON")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False),
              help="write Chrome trace events (open in Perfetto)")
@click.option("--wrap", is_flag=True, help="addresses wrap around as on the hardware, instead of faulting")
@click.option("--no-strict", is_flag=True, help="do not fault on hazards and races")
@click.option("--pfn", is_flag=True, help="PFN-compatible: transfers complete at once, hazards are not enforced; "
              "one line at the end says what strict mode would have faulted on")
@click.option("--judge", "testcase", type=click.Path(dir_okay=False), metavar="TESTCASE.vsm",
              help="run PROGRAM as an answer to this contest testcase and print ACCEPTED or the first mismatch")
@click.option("--arg", "args", multiple=True, metavar="NAME=VALUE", help="a sequencer argument (.arg %NAME)")
@click.option("--max-steps", type=int, default=None, help="fault after this many PE steps and sequencer loop iterations")
@click.option("-q", "--quiet", is_flag=True, help="do not print the cycle summary")
@click.version_option(package_name="mncl-sdk", prog_name="mncl-emu")
def main(program, dump_path, machine, profile_path, trace_path, wrap, no_strict, pfn, testcase, args, max_steps,
         quiet):
    """Run PROGRAM (VSM assembly) on an emulated MN-Core 2-style machine."""
    text = _read(program)
    try:
        m = load_machine(machine)
    except MachineError as e:
        raise click.UsageError(str(e)) from None
    if testcase is not None:
        sys.exit(_judge(_read(testcase), text, m, testcase, program))
    values = {}
    for a in args:
        name, eq, v = a.partition("=")
        try:
            values[name.lstrip("%")] = int(v, 0)
        except ValueError:
            raise click.UsageError(f"--arg {a!r}: write NAME=INTEGER") from None
        if not eq:
            raise click.UsageError(f"--arg {a!r}: write NAME=INTEGER")
    emu = Emulator(m, strict=not no_strict, wrap=wrap, max_steps=max_steps, pfn=pfn)
    emu.progress = progress_for(f"{program} on {m.name}")     # on a terminal, for runs past a second
    status = 0
    prof = None
    try:
        prog = assemble(text, source=program)
        prof = emu.run(prog, values)
    except (AsmError, EmuFault) as e:
        click.echo(str(e), err=True)
        status = 1
    except EmulatorError as e:
        raise click.UsageError(str(e)) from None
    finally:
        if emu.progress is not None:
            emu.progress.close()
        out = "\n".join(emu.dump) + ("\n" if emu.dump else "")
        if dump_path:
            _write(dump_path, lambda p: _save(p, out))
        elif out:
            click.echo(out, nl=False)
    if prof is not None:
        if profile_path:
            _write(profile_path, prof.write_json)
        if trace_path:
            _write(trace_path, prof.write_trace)
        if not quiet:
            s = prof.summary()
            stalls = ", ".join(f"{k}: {v:.0f}" for k, v in s["stall_cycles"].items()) or "none"
            click.echo(f"{m.name}: {s['steps']} steps, {s['cycles']:.0f} cycles, "
                       f"{s['time_s'] * 1e6:.3f} us at {m.clock_hz / 1e6:.0f} MHz; stalls: {stalls}", err=True)
    if pfn:
        click.echo(emu.pfn_report(), err=True)
    sys.exit(status)


def _read(path) -> str:
    try:
        return read_input(path, MAX_ASM_BYTES, "an assembly file").decode("utf-8")
    except InputError as e:
        raise click.UsageError(f"cannot read {e}") from None
    except UnicodeDecodeError as e:
        raise click.UsageError(f"{path} is not UTF-8 text (byte {e.start}): an assembly file is text") from None


def _judge(testcase: str, answer: str, m, testcase_name: str, answer_name: str) -> int:
    """Print ACCEPTED (0) or the first mismatch or fault (1)."""
    try:
        v = run_judge(testcase, answer, m, testcase_name, answer_name)
    except (AsmError, EmuFault) as e:
        click.echo(f"REJECTED: {e}")
        return 1
    except EmulatorError as e:
        raise click.UsageError(str(e)) from None
    click.echo(v.message if v.accepted else f"REJECTED: {v.message}")
    click.echo(v.pfn_report, err=True)
    return 0 if v.accepted else 1


def _save(path, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _write(path, writer) -> None:
    try:
        writer(path)
    except OSError as e:
        raise click.UsageError(f"cannot write {path}: {e.strerror}") from None


if __name__ == "__main__":  # pragma: no cover
    main()
