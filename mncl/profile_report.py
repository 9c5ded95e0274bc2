"""Profile reports for emulator-device launches: a Chrome trace and an HTML summary.

``MNCL_PROFILE=<directory>`` makes the emulator device write, for every kernel
launch, ``<kernel>-<n>.trace.json`` (open it in Perfetto or chrome://tracing) and
``<kernel>-<n>.html``: the cycle count and time, steps by unit, stalls by cause,
bytes per link, the roofline position, and cycles per C source line next to the
source text.
"""
from __future__ import annotations

import html
import itertools
import json
from pathlib import Path

_counter = itertools.count(1)


def write_reports(directory: str, kernel: str, profile, source: str | None = None, name: str | None = None) -> Path:
    """Write ``<name>.trace.json`` and ``<name>.html`` (name: ``<kernel>-<n>``, numbered per process,
    unless given); return the HTML file's path."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    stem = out / (name or f"{kernel}-{next(_counter)}")
    Path(f"{stem}.trace.json").write_text(json.dumps(profile.chrome_trace()))
    Path(f"{stem}.html").write_text(render_html(kernel, profile, source))
    return Path(f"{stem}.html")


def _table(title, rows, head=("", "")):
    body = "".join(f"<tr><td>{html.escape(str(k))}</td><td class=n>{_fmt(v)}</td></tr>" for k, v in rows)
    return (f"<h2>{html.escape(title)}</h2><table><tr><th>{head[0]}</th><th>{head[1]}</th></tr>"
            f"{body}</table>")


def _fmt(v):
    if isinstance(v, float):
        return f"{v:,.4g}" if abs(v) < 1e4 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return html.escape(str(v))


def render_html(kernel: str, profile, source: str | None = None) -> str:
    s = profile.summary()
    total = s["cycles"] or 1.0
    lines = (source or "").splitlines()
    by_line = profile.cycles_by_line
    src_rows = []
    for n, cyc in sorted(by_line.items(), key=lambda kv: -kv[1]):
        text = lines[n - 1].strip() if 0 < n <= len(lines) else ("(prologue, waits and transfers before any line)"
                                                                 if n == 0 else "")
        src_rows.append(f"<tr><td class=n>{n or ''}</td><td class=n>{cyc:,.0f}</td>"
                        f"<td class=n>{100 * cyc / total:.1f}%</td><td><code>{html.escape(text)}</code></td></tr>")
    roof = s["roofline"]
    parts = [
        f"<h1>{html.escape(kernel)} on {html.escape(s['machine'])}</h1>",
        f"<p>{s['cycles']:,.0f} cycles ({s['time_s'] * 1e6:,.2f} us emulated), {s['steps']:,} steps; "
        f"DRAM {s['dram_bytes']:,} bytes at {100 * s['dram_bandwidth_fraction_of_peak']:.1f}% of the modelled "
        f"bandwidth; {roof['bound']}-bound, {100 * roof['fraction_of_attainable']:.1f}% of the attainable "
        f"fp32 rate.</p>",
        "<h2>Cycles by C source line</h2><table><tr><th>line</th><th>cycles</th><th>share</th><th>source</th></tr>"
        + "".join(src_rows) + "</table>",
        _table("Steps by unit", s["steps_by_group"].items(), ("unit", "steps")),
        _table("Stalls by cause", s["stall_cycles"].items(), ("cause", "cycles")),
        _table("Bytes by link", s["bytes_by_link"].items(), ("link.direction", "bytes")),
        _table("Roofline", roof.items(), ("", "")),
    ]
    style = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:1em}"
             "td,th{border:1px solid #ccc;padding:2px 8px}td.n{text-align:right}code{white-space:pre}")
    return f"<!doctype html><meta charset=utf-8><title>{html.escape(kernel)}</title><style>{style}</style>" \
           + "".join(parts)
