"""The ``mncl`` command: ``mncl info`` lists platforms and devices like ``clinfo -l`` / ``clinfo``.

  mncl info        every platform and device with all their properties (clinfo)
  mncl info -l     the short tree of platforms and devices (clinfo -l)
"""
from __future__ import annotations

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
