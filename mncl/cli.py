"""The ``mncl`` command.

  mncl info        every platform and device with all their properties (clinfo)
  mncl info -l     the short tree of platforms and devices (clinfo -l)
  mncl profile K.cl -k NAME --global N --arg NAME=SPEC ...
                   build a kernel file, launch one kernel on the emulator device with
                   generated or .npy inputs, write its Chrome trace and HTML report,
                   print the profile's summary (docs/runtime.md, "mncl profile")

Exit status of ``mncl profile``: 0 ran, 1 the kernel failed to build or faulted when
it ran, 2 bad usage (unknown kernel or machine, missing or malformed argument).
"""
from __future__ import annotations

import os
import re

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


_BUFFER_KINDS = ("rand", "zeros", "ones", "arange")


def _count(text, where):
    try:
        n = int(text.replace("_", ""), 0)
    except ValueError:
        raise _Fail(f"{where}: '{text}' is not an element count (an integer such as 1048576)") from None
    if n <= 0:
        raise _Fail(f"{where}: the element count must be positive, not {n}")
    return n


def _sizes(text, option):
    """'1024', '1024,768' or '1024x768' -> a tuple of 1 to 3 positive ints."""
    try:
        dims = tuple(int(p) for p in re.split(r"[,x]", text.strip()))
    except ValueError:
        dims = ()
    if not 1 <= len(dims) <= 3 or min(dims) <= 0:
        raise _Fail(f"{option} '{text}': write 1 to 3 positive sizes such as 1048576 or 1024,1024")
    return dims


def _element_dtype(p, where):
    from .kernel import _param_dtype
    dt = _param_dtype(p)
    if dt is None:
        raise _Fail(f"{where}: its element type {p.type_name} has no numpy equivalent")
    return dt


def _buffer_array(p, spec, where, rng):
    """A host array for a __global/__constant parameter: KIND[:DTYPE]:COUNT or FILE.npy."""
    import numpy as np
    want = _element_dtype(p, where)                   # a vector element: (component dtype, (n,))
    comp, shape = (want.base, want.shape) if want.subdtype else (want, ())
    if spec.endswith(".npy"):
        try:
            arr = np.load(spec, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise _Fail(f"{where}: cannot read {spec}: {e}") from None
        if arr.dtype.itemsize != comp.itemsize or arr.nbytes % want.itemsize:
            raise _Fail(f"{where}: {spec} holds {arr.size} x {arr.dtype} but the parameter points to "
                        f"{p.type_name} ({comp.itemsize}-byte components); convert it with astype")
        return np.ascontiguousarray(arr)
    kind, *rest = spec.split(":")
    if kind not in _BUFFER_KINDS or len(rest) not in (1, 2):
        raise _Fail(f"{where}: '{spec}' is not a buffer; write {'|'.join(_BUFFER_KINDS)}[:DTYPE]:COUNT "
                    f"(e.g. rand:1048576) or FILE.npy")
    dt = comp
    if len(rest) == 2:
        try:
            dt = np.dtype(rest[0])
        except TypeError:
            raise _Fail(f"{where}: '{rest[0]}' is not a numpy dtype") from None
        if dt.itemsize != comp.itemsize:
            raise _Fail(f"{where}: {dt} has {dt.itemsize}-byte elements but the parameter points to "
                        f"{p.type_name} ({comp.itemsize} bytes)")
    arr = np.zeros((_count(rest[-1], where), *shape), dt)
    if kind != "zeros" and dt.kind not in "biuf":
        raise _Fail(f"{where}: '{kind}' needs a numeric element type, not {p.type_name}; use zeros or a .npy file")
    if kind == "ones":
        arr[...] = 1
    elif kind == "arange":
        arr.reshape(-1)[:] = np.arange(arr.size)
    elif kind == "rand":
        arr[...] = rng.random(arr.shape) if dt.kind == "f" else rng.integers(0, 2 if dt.kind == "b" else 100,
                                                                               arr.shape)
    return arr


def _scalar_value(p, spec, where):
    """A by-value argument: a number, or comma-separated components for a vector; set_arg converts
    it to the parameter's type exactly or rejects it."""
    def number(t):
        v = t.strip().replace("_", "")
        if not v.lower().lstrip("+-").startswith("0x"):
            v = re.sub(r"(?i)(?<=[0-9.])(f|u|l|ul|lu|ull)$", "", v)     # C suffixes: 2.5f, 10u
        for conv in (lambda v: int(v, 0), float):
            try:
                return conv(v)
            except ValueError:
                pass
        raise _Fail(f"{where}: '{t}' is not a number")
    parts = spec.split(",")
    if len(parts) > 1:
        return [number(t) for t in parts]
    if p.dtype.startswith("["):
        raise _Fail(f"{where}: a struct argument cannot be given on the command line")
    return number(spec)


def _kernel_args(ctx, info, arg_specs, seed):
    """The launch's arguments from --arg NAME=SPEC, one per parameter, and the buffers' host arrays."""
    import numpy as np
    from . import Buffer, LocalMemory, mem_flags
    given = {}
    for a in arg_specs:
        name, eq, spec = a.partition("=")
        if not eq or not name or not spec:
            raise _Fail(f"--arg '{a}': write NAME=SPEC (e.g. x=rand:1048576, a=2.5)")
        if name in given:
            raise _Fail(f"--arg {name} is given twice")
        given[name] = spec
    names = [p.name for p in info.params]
    unknown = [n for n in given if n not in names]
    if unknown:
        raise _Fail(f"kernel '{info.name}' has no parameter '{unknown[0]}' (its parameters: {', '.join(names)})")
    missing = [n for n in names if n not in given]
    if missing:
        raise _Fail(f"kernel '{info.name}' needs --arg for {', '.join(missing)} "
                    f"({len(given)} of {len(names)} parameters given)")
    rng = np.random.default_rng(seed)
    args, hosts = [], {}
    for i, p in enumerate(info.params):
        spec, where = given[p.name], f"--arg {p.name} ({p.kind} {p.type_name}, parameter {i})"
        if p.kind in ("global", "constant"):
            if spec.lower() == "null":
                args.append(None)
                continue
            hosts[p.name] = _buffer_array(p, spec, where, rng)
            args.append(Buffer(ctx, mem_flags.READ_WRITE | mem_flags.COPY_HOST_PTR, hostbuf=hosts[p.name]))
        elif p.kind == "local":
            kind, _, n = spec.rpartition(":")
            if kind not in ("", "local"):
                raise _Fail(f"{where}: write local:COUNT (COUNT elements of {p.type_name})")
            args.append(LocalMemory(_count(n, where) * p.size))
        else:
            args.append(_scalar_value(p, spec, where))
    return args


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
    import shlex

    from . import CommandQueue, Context, Error, Program, command_queue_properties, enqueue_task
    from .constants import program_build_info
    from .context import select_device
    from emulator.inputs import InputError, read_input
    from translator.limits import MAX_SOURCE_BYTES
    try:
        source = read_input(kernel_file, MAX_SOURCE_BYTES, "a kernel source").decode("utf-8")
    except InputError as e:
        raise _Fail(f"cannot read {e}") from None
    except UnicodeDecodeError as e:
        raise _Fail(f"cannot read {kernel_file}: not UTF-8 text (byte {e.start}): a kernel source is text") from None
    machine = machine or os.environ.get("MNCL_MACHINE") or "mncore2"
    try:
        dev = select_device("emulator", machine)
    except Error as e:
        raise _Fail(f"--machine {machine}: {e.what.partition(': ')[2] or e.what}") from None
    options = [f"-D{d}" for d in defines] + [f"-I{d}" for d in include_dirs]
    try:
        extra = shlex.split(extra_options)
    except ValueError as e:            # an unbalanced quote
        raise _Fail(f"build options {extra_options!r}: {e}") from None
    options += [f"-I{os.path.dirname(os.path.abspath(kernel_file))}"] + extra
    ctx = Context([dev])
    prg = Program(ctx, source)
    try:
        prg.build(options=options)
    except Error:
        log = prg.get_build_info(dev, program_build_info.LOG).strip()
        log = re.sub(r"(?m)^kernel\.cl:", f"{kernel_file}:", log)      # the runtime names every source kernel.cl
        raise _Fail(f"{kernel_file} did not build (options: {' '.join(options)}):\n{log}", 1) from None
    kernels = {k.function_name: k for k in prg.all_kernels()}
    if kernel_name is None:
        if len(kernels) != 1:
            raise _Fail(f"{kernel_file} has {len(kernels)} kernels ({', '.join(kernels) or 'none'}); choose one with -k")
        kernel_name = next(iter(kernels))
    if kernel_name not in kernels:
        raise _Fail(f"{kernel_file} has no kernel '{kernel_name}' (it has: {', '.join(kernels) or 'none'})")
    knl = kernels[kernel_name]
    info = knl._info
    gsize = lsize = None
    if info.task:
        if global_size or local_size:
            raise _Fail(f"kernel '{kernel_name}' is a __task kernel: it runs once on the whole machine; "
                        f"drop --global/--local")
    else:
        if not global_size:
            raise _Fail(f"kernel '{kernel_name}' needs --global (e.g. --global 1048576)")
        gsize = _sizes(global_size, "--global")
        lsize = _sizes(local_size, "--local") if local_size else None
    q = CommandQueue(ctx, properties=command_queue_properties.PROFILING_ENABLE)
    try:
        args = _kernel_args(ctx, info, arg_specs, seed)
        knl.set_args(*args)
    except Error as e:
        raise _Fail(f"{e.what}") from None
    try:
        ev = enqueue_task(q, knl) if info.task else knl(q, gsize, lsize, *args)
        ev.wait()
    except Error as e:
        raise _Fail(f"{e.code_name}: {e.what}", 2 if e.code_name.startswith("INVALID") else 1) from None
    prof = ev.stats
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


if __name__ == "__main__":  # pragma: no cover
    main()
