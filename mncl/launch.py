"""A kernel launch described as text, as ``mncl profile`` takes it on its command line and
``mncl sweep`` in its spec: NAME=SPEC arguments (a number, a generated buffer
``rand|zeros|ones|arange[:DTYPE]:COUNT``, a ``.npy`` file, ``local:COUNT``, ``null``), global
and local sizes as ``1024,768``; argument types come from the kernel's signature."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

import numpy as np


class LaunchError(Exception):
    """What is wrong with a launch description, in one line, and the exit status a command gives
    it (2: the description is wrong; 1: the kernel's own failure, a build error or a fault)."""

    def __init__(self, message, exit_code=2):
        super().__init__(message)
        self.message, self.exit_code = message, exit_code


_BUFFER_KINDS = ("rand", "zeros", "ones", "arange")


def count(text, where):
    try:
        n = int(text.replace("_", ""), 0)
    except ValueError:
        raise LaunchError(f"{where}: '{text}' is not an element count (an integer such as 1048576)") from None
    if n <= 0:
        raise LaunchError(f"{where}: the element count must be positive, not {n}")
    return n


def sizes(text, option):
    """'1024', '1024,768' or '1024x768' -> a tuple of 1 to 3 positive ints."""
    try:
        dims = tuple(int(p) for p in re.split(r"[,x]", text.strip()))
    except ValueError:
        dims = ()
    if not 1 <= len(dims) <= 3 or min(dims) <= 0:
        raise LaunchError(f"{option} '{text}': write 1 to 3 positive sizes such as 1048576 or 1024,1024")
    return dims


def _element_dtype(p, where):
    from .kernel import _param_dtype
    dt = _param_dtype(p)
    if dt is None:
        raise LaunchError(f"{where}: its element type {p.type_name} has no numpy equivalent")
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
            raise LaunchError(f"{where}: cannot read {spec}: {e}") from None
        if arr.dtype.itemsize != comp.itemsize or arr.nbytes % want.itemsize:
            raise LaunchError(f"{where}: {spec} holds {arr.size} x {arr.dtype} but the parameter points to "
                        f"{p.type_name} ({comp.itemsize}-byte components); convert it with astype")
        return np.ascontiguousarray(arr)
    kind, *rest = spec.split(":")
    if kind not in _BUFFER_KINDS or len(rest) not in (1, 2):
        raise LaunchError(f"{where}: '{spec}' is not a buffer; write {'|'.join(_BUFFER_KINDS)}[:DTYPE]:COUNT "
                    f"(e.g. rand:1048576) or FILE.npy")
    dt = comp
    if len(rest) == 2:
        try:
            dt = np.dtype(rest[0])
        except TypeError:
            raise LaunchError(f"{where}: '{rest[0]}' is not a numpy dtype") from None
        if dt.itemsize != comp.itemsize:
            raise LaunchError(f"{where}: {dt} has {dt.itemsize}-byte elements but the parameter points to "
                        f"{p.type_name} ({comp.itemsize} bytes)")
    arr = np.zeros((count(rest[-1], where), *shape), dt)
    if kind != "zeros" and dt.kind not in "biuf":
        raise LaunchError(f"{where}: '{kind}' needs a numeric element type, not {p.type_name}; use zeros or a .npy file")
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
        raise LaunchError(f"{where}: '{t}' is not a number")
    parts = spec.split(",")
    if len(parts) > 1:
        return [number(t) for t in parts]
    if p.dtype.startswith("["):
        raise LaunchError(f"{where}: a struct argument cannot be given on the command line")
    return number(spec)


def kernel_args(ctx, info, arg_specs, seed):
    """The launch's arguments from --arg NAME=SPEC, one per parameter, and the buffers' host arrays
    by parameter name."""
    import numpy as np
    from . import Buffer, LocalMemory, mem_flags
    given = {}
    for a in arg_specs:
        name, eq, spec = a.partition("=")
        if not eq or not name or not spec:
            raise LaunchError(f"--arg '{a}': write NAME=SPEC (e.g. x=rand:1048576, a=2.5)")
        if name in given:
            raise LaunchError(f"--arg {name} is given twice")
        given[name] = spec
    names = [p.name for p in info.params]
    unknown = [n for n in given if n not in names]
    if unknown:
        raise LaunchError(f"kernel '{info.name}' has no parameter '{unknown[0]}' (its parameters: {', '.join(names)})")
    missing = [n for n in names if n not in given]
    if missing:
        raise LaunchError(f"kernel '{info.name}' needs --arg for {', '.join(missing)} "
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
                raise LaunchError(f"{where}: write local:COUNT (COUNT elements of {p.type_name})")
            args.append(LocalMemory(count(n, where) * p.size))
        else:
            args.append(_scalar_value(p, spec, where))
    return args, hosts


@dataclass
class Launch:
    """A built kernel launched once: its profile (None on the CPU device), its event, the kernel's
    description, its buffer arguments as read back after the run (by parameter name) and the
    launch's sizes (None for a task kernel)."""
    stats: object
    event: object
    info: object
    arrays: dict
    global_size: tuple | None
    local_size: tuple | None


def launch(source, kernel_file, kernel_name=None, global_size=None, local_size=None, arg_specs=(),
           machine=None, defines=(), include_dirs=(), extra_options="", seed=0, device=None) -> Launch:
    """Build ``source`` (read from ``kernel_file``) and launch one kernel with generated inputs:
    what ``mncl profile`` runs, and ``mncl sweep``'s OpenCL points.  ``device``: a Device (the
    emulator device of ``machine``, default $MNCL_MACHINE or mncore2, when None).  Sizes are
    text as on the command line ('1024,768'); ``arg_specs`` NAME=SPEC strings.  Raises
    LaunchError."""
    import shlex

    from . import CommandQueue, Context, Error, Program, command_queue_properties, enqueue_copy, enqueue_task
    from .constants import program_build_info
    from .context import select_device
    dev = device
    if dev is None:
        machine = machine or os.environ.get("MNCL_MACHINE") or "mncore2"
        try:
            dev = select_device("emulator", machine)
        except Error as e:
            raise LaunchError(f"--machine {machine}: {e.what.partition(': ')[2] or e.what}") from None
    options = [f"-D{d}" for d in defines] + [f"-I{d}" for d in include_dirs]
    try:
        extra = shlex.split(extra_options)
    except ValueError as e:            # an unbalanced quote
        raise LaunchError(f"build options {extra_options!r}: {e}") from None
    options += [f"-I{os.path.dirname(os.path.abspath(kernel_file))}"] + extra
    ctx = Context([dev])
    prg = Program(ctx, source)
    try:
        prg.build(options=options)
    except Error:
        log = prg.get_build_info(dev, program_build_info.LOG).strip()
        log = re.sub(r"(?m)^kernel\.cl:", f"{kernel_file}:", log)      # the runtime names every source kernel.cl
        raise LaunchError(f"{kernel_file} did not build (options: {' '.join(options)}):\n{log}", 1) from None
    kernels = {k.function_name: k for k in prg.all_kernels()}
    if kernel_name is None:
        if len(kernels) != 1:
            raise LaunchError(f"{kernel_file} has {len(kernels)} kernels ({', '.join(kernels) or 'none'}); choose one with -k")
        kernel_name = next(iter(kernels))
    if kernel_name not in kernels:
        raise LaunchError(f"{kernel_file} has no kernel '{kernel_name}' (it has: {', '.join(kernels) or 'none'})")
    knl = kernels[kernel_name]
    info = knl._info
    gsize = lsize = None
    if info.task:
        if global_size or local_size:
            raise LaunchError(f"kernel '{kernel_name}' is a __task kernel: it runs once on the whole machine; "
                        f"drop --global/--local")
    else:
        if not global_size:
            raise LaunchError(f"kernel '{kernel_name}' needs --global (e.g. --global 1048576)")
        gsize = sizes(global_size, "--global")
        lsize = sizes(local_size, "--local") if local_size else None
    q = CommandQueue(ctx, properties=command_queue_properties.PROFILING_ENABLE)
    try:
        args, inputs = kernel_args(ctx, info, arg_specs, seed)
        knl.set_args(*args)
    except Error as e:
        raise LaunchError(f"{e.what}") from None
    try:
        ev = enqueue_task(q, knl) if info.task else knl(q, gsize, lsize, *args)
        ev.wait()
    except Error as e:
        raise LaunchError(f"{e.code_name}: {e.what}", 2 if e.code_name.startswith("INVALID") else 1) from None
    arrays = {}
    for p, a in zip(info.params, args):
        if p.name in inputs:
            arrays[p.name] = np.empty_like(inputs[p.name])
            enqueue_copy(q, arrays[p.name], a)
    return Launch(ev.stats, ev, info, arrays, gsize, lsize)
