"""The LBM sample's plain form as a point of ``mncl sweep`` (kind = "python"; docs/scale-out.md).

    [[run]]
    name = "lbm"
    kind = "python"
    entry = "samples.lbm.sweep_point:point"     # with the checkout on the workers' Python path
    [axes]
    case = ["taylor-green", "cavity"]
    n = [32, 64]
    steps = [4]

Runs ``steps`` steps of ``case`` on an n x n grid on the point's emulator device, checks the result
against the numpy reference (within 1e-5 of the largest speed), and returns the launches' summed
profile figures and MLUPS.
"""
from __future__ import annotations

import numpy as np

from . import plain
from . import reference as R


def point(params: dict, device) -> dict:
    p = R.Params.for_case(params.get("case", "taylor-green"), int(params.get("n", 64)))
    steps = int(params.get("steps", 4))
    f0 = R.init(p)
    res = plain.run(p, f0, steps, device=device)
    ref = R.run(f0.copy(), p, steps)
    ux, uy = R.macroscopic(res.f)[1:]
    rx, ry = R.macroscopic(ref)[1:]
    u_max = max(float(np.abs(rx).max()), float(np.abs(ry).max()), 1e-12)
    err = max(float(np.abs(ux - rx).max()), float(np.abs(uy - ry).max())) / u_max
    stats = [e.stats for e in res.events]
    time_s = sum(s.time_s for s in stats)
    return {"cycles": sum(s.cycles for s in stats), "time_s": time_s,
            "dram_bytes": sum(s.dram_bytes for s in stats), "steps": sum(s.steps for s in stats),
            "mlups": p.n * p.n * steps / time_s / 1e6 if time_s else None,
            "max_error": err, "passed": err < 1e-5}
