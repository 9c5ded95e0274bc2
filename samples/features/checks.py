"""The image-feature sample's checks (issue 25): a device run against the reference.

Each check is a ``Check`` with its value, tolerance and a PASS/FAIL line, as samples/lbm/checks.py's.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import reference as ref

R_MAX_TOL = 1e-5          # |R - R_ref| <= 1e-5 max |R_ref| everywhere
R_L2_TOL = 1e-6           # ||R - R_ref|| / ||R_ref||
TIE_TOL = 1e-5            # a corner may differ only where two candidates tie within 1e-5 max |R_ref|


@dataclass
class Check:
    name: str
    value: float
    tolerance: float
    passed: bool
    detail: str = ""

    @property
    def line(self) -> str:
        tail = f"  ({self.detail})" if self.detail else ""
        return f"{'PASS' if self.passed else 'FAIL'}  {self.name}: {self.value:.3e}  <= {self.tolerance:.3g}{tail}"


def response(R: np.ndarray, R_ref: np.ndarray) -> list:
    scale = float(np.abs(R_ref).max()) or 1.0
    err = float(np.abs(R.astype(np.float64) - R_ref).max()) / scale
    l2 = float(np.linalg.norm(R.astype(np.float64) - R_ref) / (np.linalg.norm(R_ref.astype(np.float64)) or 1.0))
    return [Check("response: max |R - R_ref| / max |R_ref|", err, R_MAX_TOL, err <= R_MAX_TOL),
            Check("response: relative L2 error", l2, R_L2_TOL, l2 <= R_L2_TOL)]


def corner_difference(found: np.ndarray, want: np.ndarray) -> tuple:
    """(found only, reference only) as (n, 2) arrays of [row, col]."""
    a = {tuple(p) for p in np.asarray(found).reshape(-1, 2)}
    b = {tuple(p) for p in np.asarray(want).reshape(-1, 2)}
    return np.array(sorted(a - b)).reshape(-1, 2), np.array(sorted(b - a)).reshape(-1, 2)


def corners(found: np.ndarray, want: np.ndarray, R_ref: np.ndarray) -> tuple:
    """The corner sets' check, and one line per differing corner: a difference passes only where
    a device-only and a reference-only corner lie within min_distance of each other and their
    reference responses tie within TIE_TOL max |R_ref| (corner_peaks then keeps either)."""
    extra, missing = corner_difference(found, want)
    scale = float(np.abs(R_ref).max()) or 1.0
    lines, unexplained = [], 0
    for p in extra:
        near = [q for q in missing if np.abs(q - p).max() <= ref.MIN_DISTANCE]
        gap = min((abs(float(R_ref[tuple(p)]) - float(R_ref[tuple(q)])) / scale for q in near), default=np.inf)
        ok = gap <= TIE_TOL
        unexplained += not ok
        lines.append(f"device only {tuple(int(v) for v in p)}: " +
                     (f"ties a reference corner within {gap:.2e} max |R|" if ok else "no tying reference corner"))
    for q in missing:
        near = [p for p in extra if np.abs(q - p).max() <= ref.MIN_DISTANCE]
        if not near:
            unexplained += 1
            lines.append(f"reference only {tuple(int(v) for v in q)}: the device has no corner near it")
    n = len(extra) + len(missing)
    check = Check(f"corners: {len(found)} found, {len(want)} in the reference; differences not explained by a tie",
                  float(unexplained), 0.0, unexplained == 0, f"{n} differing" if n else "the same set")
    return check, lines
