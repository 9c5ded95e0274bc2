"""The ``mncl`` command.

  mncl info        every platform and device with all their properties (clinfo)
  mncl info -l     the short tree of platforms and devices (clinfo -l)
  mncl sweep SPEC.toml [--scheduler ADDRESS] [--workers N] [-o OUT.parquet|csv] [--plot PNG]
                   every point of a sweep as a Dask task, cached by content (docs/scale-out.md)
  mncl profile K.cl -k NAME --global N --arg NAME=SPEC ...
                   build a kernel file, launch one kernel on the emulator device with
                   generated or .npy inputs, write its Chrome trace and HTML report,
                   print the profile's summary (docs/runtime.md, "mncl profile")

Exit status of ``mncl profile``: 0 ran, 1 the kernel failed to build or faulted when
it ran, 2 bad usage (unknown kernel or machine, missing or malformed argument).
"""
from __future__ import annotations

import os

import click

from .constants import device_info, device_type


def _fmt(value) -> str:
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, (list, tuple)):
        return "x".join(str(v) for v in value)
    return str(value)


_BYTES = {device_info.GLOBAL_MEM_SIZE, device_info.MAX_MEM_ALLOC_SIZE, device_info.LOCAL_MEM_SIZE,
          device_info.MAX_CONSTANT_BUFFER_SIZE}


def _human(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n} ({n / size:.4g}{unit})"
    return str(n)


def _type_name(t: int) -> str:
    return " ".join(n for n in ("CPU", "GPU", "ACCELERATOR", "CUSTOM") if t & getattr(device_type, n)) or "?"


_ROWS = [("Device Name", device_info.NAME), ("Device Vendor", device_info.VENDOR),
         ("Device Version", device_info.VERSION), ("Driver Version", device_info.DRIVER_VERSION),
         ("Device OpenCL C Version", device_info.OPENCL_C_VERSION), ("Device Type", device_info.TYPE),
         ("Device Profile", device_info.PROFILE), ("Device Available", device_info.AVAILABLE),
         ("Compiler Available", device_info.COMPILER_AVAILABLE),
         ("Max compute units", device_info.MAX_COMPUTE_UNITS),
         ("Max clock frequency (MHz)", device_info.MAX_CLOCK_FREQUENCY),
         ("Max work item dimensions", device_info.MAX_WORK_ITEM_DIMENSIONS),
         ("Max work item sizes", device_info.MAX_WORK_ITEM_SIZES),
         ("Max work group size", device_info.MAX_WORK_GROUP_SIZE),
         ("Address bits", device_info.ADDRESS_BITS), ("Little-Endian", device_info.ENDIAN_LITTLE),
         ("Global memory size", device_info.GLOBAL_MEM_SIZE),
         ("Max memory allocation", device_info.MAX_MEM_ALLOC_SIZE),
         ("Unified memory for Host and Device", device_info.HOST_UNIFIED_MEMORY),
         ("Alignment of base address (bits)", device_info.MEM_BASE_ADDR_ALIGN),
         ("Local memory size", device_info.LOCAL_MEM_SIZE),
         ("Max constant buffer size", device_info.MAX_CONSTANT_BUFFER_SIZE),
         ("Max constant arguments", device_info.MAX_CONSTANT_ARGS),
         ("Max size of kernel argument", device_info.MAX_PARAMETER_SIZE),
         ("Profiling timer resolution (ns)", device_info.PROFILING_TIMER_RESOLUTION),
         ("Device Extensions", device_info.EXTENSIONS)]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mncl-sdk", prog_name="mncl")
def main():
    """MNCL SDK host runtime tools."""


@main.command()
@click.option("-l", "--list", "short", is_flag=True, help="only the platform/device tree, like clinfo -l")
def info(short):
    """Print the platforms and devices (like clinfo)."""
    from .errors import Error
    from .platform import get_platforms
    try:
        platforms = get_platforms()
    except Error as e:
        raise click.ClickException(str(e)) from None
    from . import platform
    if platform.machine_error:
        click.echo(f"warning: no emulator device: {platform.machine_error}", err=True)
    if short:
        for i, p in enumerate(platforms):
            click.echo(f"Platform #{i}: {p.name}")
            devs = p.get_devices()
            for j, d in enumerate(devs):
                branch = "`--" if j == len(devs) - 1 else "+--"
                click.echo(f" {branch} Device #{j}: {d.name}")
        return
    click.echo(f"Number of platforms{'':<35}{len(platforms)}")
    for p in platforms:
        for label, value in (("Platform Name", p.name), ("Platform Vendor", p.vendor),
                             ("Platform Version", p.version), ("Platform Profile", p.profile),
                             ("Platform Extensions", p.extensions)):
            click.echo(f"  {label:<52}{value}")
    for p in platforms:
        devs = p.get_devices()
        click.echo("")
        click.echo(f"  {'Platform Name':<52}{p.name}")
        click.echo(f"Number of devices{'':<37}{len(devs)}")
        for d in devs:
            for label, param in _ROWS:
                value = d.get_info(param)
                text = (_type_name(value) if param == device_info.TYPE
                        else _human(value) if param in _BYTES else _fmt(value))
                click.echo(f"  {label:<52}{text}")
            click.echo("")


# -- mncl profile ------------------------------------------------------------------------------

class _Fail(click.ClickException):
    """A one-line ``Error: ...`` and an exit status (2 usage, 1 the kernel's own failure)."""

    def __init__(self, message, exit_code=2):
        super().__init__(message)
        self.exit_code = exit_code


def _print_summary(prof, info, source, top, gsize, lsize):
    s = prof.summary()
    m = prof.machine
    roof = s["roofline"]
    shape = "task" if info.task else f"global {'x'.join(map(str, gsize))}, local " + \
        ("x".join(map(str, lsize)) if lsize else "chosen by the runtime")
    rows = [
        ("kernel", f"{info.name} on {m.name} ({m.n_pe} PEs, {m.clock_hz / 1e6:g} MHz), {shape}"),
        ("cycles", f"{s['cycles']:,.0f}  ({s['time_s'] * 1e6:,.3f} us emulated)"),
        ("steps", f"{s['steps']:,}  (" + ", ".join(f"{k} {v:,}" for k, v in s["steps_by_group"].items()) + ")"),
        ("stall cycles", f"{sum(s['stall_cycles'].values()):,.0f}" if s["stall_cycles"] else "none"),
    ]
    rows += [("", f"{v:>9,.0f}  {k}") for k, v in sorted(s["stall_cycles"].items(), key=lambda kv: -kv[1])]
    links = {}
    for k, v in s["bytes_by_link"].items():
        link, _, direction = k.rpartition(".")
        links.setdefault(link, []).append(f"{direction} {v:,}")
    rows += [("bytes " + link, ", ".join(d)) for link, d in links.items()]
    rows += [
        ("DRAM", f"{s['dram_bytes']:,} bytes, {s['dram_bandwidth_bytes_per_s'] / 1e9:,.3g} GB/s = "
                 f"{100 * s['dram_bandwidth_fraction_of_peak']:.1f}% of peak"),
        ("FLOPs", f"{s['flops']:,.0f}, {s['flop_rate'] / 1e9:,.3g} GFLOP/s"),
        ("roofline", f"{roof['bound']}-bound, {100 * roof['fraction_of_attainable']:.1f}% of the attainable "
                     f"{roof['attainable_flop_rate'] / 1e9:,.4g} GFLOP/s (fp32 vector); arithmetic intensity "
                     + (f"{s['arithmetic_intensity_flop_per_dram_byte']:.3g} FLOP/byte"
                        if s["arithmetic_intensity_flop_per_dram_byte"] is not None else "- (no DRAM traffic)")),
    ]
    for label, text in rows:
        click.echo(f"{label:<22}{text}")
    lines = source.splitlines()
    by_line = sorted(prof.cycles_by_line.items(), key=lambda kv: -kv[1])[:top]
    if by_line:
        click.echo(f"top {len(by_line)} source lines by cycles:")
        click.echo(f"  {'line':>5} {'cycles':>12} {'share':>6}  source")
        for n, cyc in by_line:
            text = (lines[n - 1].strip() if 0 < n <= len(lines)
                    else "(prologue, waits and transfers before any line)" if n == 0 else "")
            click.echo(f"  {n or '-':>5} {cyc:>12,.0f} {100 * cyc / (s['cycles'] or 1):>5.1f}%  {text}")


@main.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("kernel_file", type=click.Path(exists=True, dir_okay=False))
@click.option("-k", "--kernel", "kernel_name", help="the kernel to launch (default: the file's only kernel)")
@click.option("-g", "--global", "global_size", metavar="N[,N[,N]]", help="global size (not for __task kernels)")
@click.option("-l", "--local", "local_size", metavar="N[,N[,N]]", help="local size (default: the runtime's choice)")
@click.option("-a", "--arg", "arg_specs", multiple=True, metavar="NAME=SPEC",
              help="a kernel argument, by parameter name: a number (2.5, 100, 1,2,3,4 for a vector), a buffer "
                   "rand|zeros|ones|arange[:DTYPE]:COUNT or FILE.npy, local:COUNT, or null")
@click.option("--machine", default=None, metavar="tiny|mncore2|FILE.toml",
              help="the emulated machine (default: $MNCL_MACHINE or mncore2)")
@click.option("-D", "defines", multiple=True, metavar="NAME[=VALUE]", help="a preprocessor macro")
@click.option("-I", "include_dirs", multiple=True, metavar="DIR", help="an include directory")
@click.option("--options", "extra_options", default="", metavar="'OPTS'", help="more build options, e.g. '-O2'")
@click.option("-o", "--out", "out_dir", default=".", show_default=True, type=click.Path(file_okay=False),
              help="where to write KERNEL.trace.json, KERNEL.html and KERNEL.json")
@click.option("--top", default=5, show_default=True, type=click.IntRange(0), help="source lines to list")
@click.option("--seed", default=0, show_default=True, type=int, help="seed of the rand buffers")
def profile(kernel_file, kernel_name, global_size, local_size, arg_specs, machine, defines, include_dirs,
            extra_options, out_dir, top, seed):
    """Build KERNEL_FILE, launch one kernel on the emulator device, write its profile.

    \b
    mncl profile saxpy.cl -k saxpy --global 1048576 --local 64 \\
        --arg x=rand:1048576 --arg y=zeros:1048576 --arg a=2.5 --arg n=1048576

    Argument types come from the kernel's signature: buffers are COUNT elements of the
    parameter's element type; numbers are converted to the parameter's type exactly or
    rejected.  Writes the Chrome trace (open in Perfetto), the HTML report and the
    summary as JSON; prints cycles, steps by unit, stalls, bytes per link, the roofline
    position and the costliest C lines.
    """
    from emulator.inputs import InputError, read_input
    from translator.limits import MAX_SOURCE_BYTES
    from .launch import LaunchError, launch
    try:
        source = read_input(kernel_file, MAX_SOURCE_BYTES, "a kernel source").decode("utf-8")
    except InputError as e:
        raise _Fail(f"cannot read {e}") from None
    except UnicodeDecodeError as e:
        raise _Fail(f"cannot read {kernel_file}: not UTF-8 text (byte {e.start}): a kernel source is text") from None
    try:
        run = launch(source, kernel_file, kernel_name, global_size, local_size, arg_specs, machine, defines,
                     include_dirs, extra_options, seed)
    except LaunchError as e:
        raise _Fail(e.message, e.exit_code) from None
    prof, info, kernel_name = run.stats, run.info, run.info.name
    gsize, lsize = run.global_size, run.local_size
    from .profile_report import write_reports
    try:
        html_path = write_reports(out_dir, kernel_name, prof, source, name=kernel_name)
        json_path = os.path.join(out_dir, f"{kernel_name}.json")
        prof.write_json(json_path)
    except OSError as e:
        raise _Fail(f"cannot write the reports into {out_dir}: {e.strerror or e}") from None
    _print_summary(prof, info, source, top, gsize, lsize)
    trace_path = os.path.join(out_dir, f"{kernel_name}.trace.json")
    click.echo(f"wrote {trace_path} (Perfetto), {html_path}, {json_path}")


# -- mncl sweep --------------------------------------------------------------------------------

@main.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("spec_file", type=click.Path(exists=True, dir_okay=False), metavar="SPEC.toml")
@click.option("--scheduler", metavar="ADDRESS", help="an existing Dask scheduler (default: a local cluster)")
@click.option("--workers", type=click.IntRange(0), default=None,
              help="worker processes of the local cluster (default: the cores; 0: run here, without Dask)")
@click.option("-o", "--out", "out_path", metavar="OUT.parquet|OUT.csv", help="write the result table")
@click.option("--plot", "plot_path", metavar="PNG", help="draw the roofline with every point, and a metric "
              "against the first axis that varies")
@click.option("--metric", default="cycles", show_default=True, help="the metric --plot draws against the axis")
@click.option("--no-cache", is_flag=True, help="run every point again (results are cached by content)")
def sweep(spec_file, scheduler, workers, out_path, plot_path, metric, no_cache):
    """Run every point of SPEC.toml (runs x axes) as a Dask task; print and write the table.

    \b
    mncl sweep examples/sweep.toml -o sweep.csv --plot sweep.png

    docs/scale-out.md describes the spec.  Exit status: 0 every point ran and passed its check,
    1 some point failed (each row says why), 2 a bad spec or option.
    """
    import sys

    from . import sweep as sw
    if out_path and not out_path.endswith((".parquet", ".csv")):
        raise _Fail(f"-o {out_path}: write a .parquet or .csv file")
    try:
        spec = sw.load_spec(spec_file)
        total = len(sw.expand(spec))
    except sw.SpecError as e:
        raise _Fail(str(e)) from None
    bar = None
    if sys.stderr.isatty():
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
        bar = Progress("{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), transient=True)
        task = bar.add_task(spec["sweep"]["name"], total=total)
        bar.start()
    try:
        result = sw.sweep(spec, scheduler=scheduler, workers=workers, cache=not no_cache,
                          progress=(lambda done, n: bar.update(task, completed=done)) if bar else None,
                          announce=lambda link: click.echo(f"Dask dashboard: {link}", err=True))
    except sw.SpecError as e:
        raise _Fail(str(e)) from None
    except OSError as e:                    # a scheduler address that does not answer
        raise _Fail(f"--scheduler {scheduler}: {e}") from None
    finally:
        if bar is not None:
            bar.stop()
    df = result.frame()
    shown = [c for c in ["run", *result.axes, "cycles", "time_s", "dram_bw_fraction", "roofline_fraction",
                         "passed", "wall_s", "error"] if c in df]
    click.echo(df[shown].to_string(index=False))
    failed = df[df["status"] != "ok"]
    click.echo(f"{len(df)} points: {result.computed} emulated, {result.cached} from the cache, "
               f"{len(failed)} failed")
    if out_path:
        sw.write(result, out_path)
        click.echo(f"wrote {out_path}")
    if plot_path:
        sw.plot(result, plot_path, metric=metric)
        click.echo(f"wrote {plot_path}")
    sys.exit(1 if len(failed) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
