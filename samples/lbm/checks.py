"""The physics checks of the LBM sample, each returning a Check (value, tolerance, passed, line).

Taylor-Green vortex (taylor_green_error)
    Start: f = feq(rho = 1, u) with the analytic vortex at the cell centres x = i + 0.5, y = j + 0.5
    (reference.taylor_green_fields).  Error: the relative L2 norm of the velocity field,
        e = sqrt( sum_cells |u - u_a|^2 / sum_cells |u_a|^2 ),
        u_a = u0 exp(-2 nu k^2 t) (-cos kx sin ky, sin kx cos ky),  k = 2 pi / n,  t = steps.
    Measured (fp32 numpy reference, nu = 1/6, u0 = 0.04): N = 32, 200 steps: 8.42e-3; N = 64,
    800 steps: 2.13e-3; ratio 3.96.  The issue quotes "about 7.7e-3" and "about 1.9e-3" with a ratio
    between 3.6 and 4.4.  Why this start and this definition: the error is almost purely an
    amplitude error (the L1 norm, the speed's L2 norm and the projected amplitude all give
    8.3e-3..8.4e-3 / 2.08e-3..2.12e-3; fp64 gives the same digits), and of the starts tried, only
    rho = 1 gives second order: starting from the vortex's pressure field
    (rho = 1 - 3 u0^2/4 (cos 2kx + cos 2ky)) gives 7.69e-3 at N = 32 (the issue's first figure)
    but 1.48e-3 at N = 64, a ratio of 5.2, outside 3.6..4.4; the cell-corner start x = i gives
    8.43e-3 / 2.12e-3.  No start and definition tried gives both issue figures; rho = 1 is the one
    that meets the ratio, and it is within 10 % of both.
    Tolerance: at the issue's runs (steps = 200 (n / 32)^2, diffusive scaling) e <= 1.2 x the
    issue's figure scaled by (32 / n)^2 (9.24e-3 at N = 32, 2.31e-3 at N = 64); at other step
    counts a looser bound, 2.5e-2 (32 / n)^2 max(1, steps / (200 (n / 32)^2)), that the acoustic
    transient of the rho = 1 start (1.4e-2 at N = 32, step 50) stays under.
Second order (taylor_green_order): e(N) / e(2N) between 3.6 and 4.4.
Mass (mass_drift): |sum rho(t) - sum rho(0)| / sum rho(0) <= 1e-6 (sums in float64).
Device against reference (agreement): max |u_device - u_reference| <= 1e-4 u_max, both components.
Cavity steady state (steady_state): max |u(t) - u(t - 1000)| over both components and all cells
    < 1e-4 U_lid.
Cavity against Ghia, Ghia and Shin (1982), Re = 100 (ghia): the simulated centre lines (the
    vertical line x = 0.5 for u, the horizontal y = 0.5 for v; for even n the mean of the two cell
    columns / rows either side) at cell centres (j + 0.5) / n, completed by the wall values (u = 0 at
    y = 0, u = U_lid at y = 1, v = 0 at x = 0 and 1, where the half-way bounce-back walls lie),
    interpolated linearly at Ghia's 17 + 17 points, normalised by U_lid:
    max |deviation| <= 0.02, rms <= 0.01.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

try:
    from . import reference as R
except ImportError:                   # run as a script from samples/lbm/
    import reference as R  # type: ignore

# Ghia, Ghia and Shin (1982), Tables I and II, Re = 100 (../shared/reference/ghia1982-cavity.md)
GHIA_U_Y = np.array([1.0000, 0.9766, 0.9688, 0.9609, 0.9531, 0.8516, 0.7344, 0.6172, 0.5000,
                     0.4531, 0.2813, 0.1719, 0.1016, 0.0703, 0.0625, 0.0547, 0.0000])
GHIA_U = np.array([1.00000, 0.84123, 0.78871, 0.73722, 0.68717, 0.23151, 0.00332, -0.13641, -0.20581,
                   -0.21090, -0.15662, -0.10150, -0.06434, -0.04775, -0.04192, -0.03717, 0.00000])
GHIA_V_X = np.array([1.0000, 0.9688, 0.9609, 0.9531, 0.9453, 0.9063, 0.8594, 0.8047, 0.5000,
                     0.2344, 0.2266, 0.1563, 0.0938, 0.0781, 0.0703, 0.0625, 0.0000])
GHIA_V = np.array([0.00000, -0.05906, -0.07391, -0.08864, -0.10313, -0.16914, -0.22445, -0.24533, 0.05454,
                   0.17527, 0.17507, 0.16077, 0.12317, 0.10890, 0.10091, 0.09233, 0.00000])

# the issue's Taylor-Green figures: N = 32, 200 steps, nu = 1/6, u0 = 0.04 -> ~7.7e-3; N = 64, 800 steps -> ~1.9e-3
TG_ISSUE = {32: 7.7e-3, 64: 1.9e-3}
TG_REF_STEPS_32 = 200
TG_RATIO = (3.6, 4.4)
MASS_TOL = 1e-6
AGREE_TOL = 1e-4             # of u_max
STEADY_TOL = 1e-4            # of U_lid, over STEADY_WINDOW steps
STEADY_WINDOW = 1000
GHIA_MAX_TOL = 0.02
GHIA_RMS_TOL = 0.01


@dataclass
class Check:
    """One check's outcome.  value <= tolerance passes unless `low` is set (then low <= value <= tolerance)."""
    name: str
    value: float
    tolerance: float
    passed: bool
    detail: str = ""
    low: float | None = None

    @property
    def line(self) -> str:
        bound = f"in [{self.low:.3g}, {self.tolerance:.3g}]" if self.low is not None else f"<= {self.tolerance:.3g}"
        tail = f"  ({self.detail})" if self.detail else ""
        return f"{'PASS' if self.passed else 'FAIL'}  {self.name}: {self.value:.3e}  {bound}{tail}"

    def __str__(self) -> str:
        return self.line


def _check(name, value, tol, detail="", low=None) -> Check:
    ok = bool(np.isfinite(value)) and value <= tol and (low is None or value >= low)
    return Check(name, float(value), float(tol), ok, detail, low)


# -- Taylor-Green -------------------------------------------------------------------------------------

def tg_reference_steps(n: int) -> int:
    """The issue's run length at n: 200 steps at N = 32, diffusively scaled (800 at 64)."""
    return round(TG_REF_STEPS_32 * (n / 32) ** 2)


def taylor_green_l2(f: np.ndarray, p: "R.Params", steps: int) -> float:
    """Relative L2 error of the velocity field against the analytic vortex at t = steps."""
    _, ux, uy = R.macroscopic(f)
    _, ax, ay = R.taylor_green_fields(p.n, p.u0, t=steps, nu=p.nu)
    ux, uy = ux.astype(np.float64), uy.astype(np.float64)
    return math.sqrt(float(((ux - ax) ** 2 + (uy - ay) ** 2).sum() / (ax ** 2 + ay ** 2).sum()))


def taylor_green_tolerance(n: int, steps: int) -> tuple[float, str]:
    ref = tg_reference_steps(n)
    scale = (32 / n) ** 2
    if steps == ref:
        issue = TG_ISSUE.get(n, TG_ISSUE[32] * scale)
        return 1.2 * issue, f"issue: about {issue:.2g} at N = {n}, {steps} steps; tolerance 1.2x"
    return 2.5e-2 * scale * max(1.0, steps / ref), f"not the issue's run ({ref} steps at N = {n}): loose bound"


def taylor_green_error(f: np.ndarray, p: "R.Params", steps: int) -> Check:
    e = taylor_green_l2(f, p, steps)
    tol, why = taylor_green_tolerance(p.n, steps)
    return _check(f"taylor-green L2 error of u (N = {p.n}, {steps} steps)", e, tol, why)


def taylor_green_order(e_coarse: float, e_fine: float, n: int) -> Check:
    r = e_coarse / e_fine if e_fine > 0 else float("inf")
    return _check(f"taylor-green second order: e(N = {n}) / e(N = {2 * n})", r, TG_RATIO[1],
                  f"{e_coarse:.3e} / {e_fine:.3e}", low=TG_RATIO[0])


# -- conservation and agreement -------------------------------------------------------------------------

def mass(f: np.ndarray) -> float:
    return float(f.astype(np.float64).sum())


def mass_drift(f0: np.ndarray, f: np.ndarray) -> Check:
    m0, m1 = mass(f0), mass(f)
    return _check("mass drift |M(t) - M(0)| / M(0)", abs(m1 - m0) / m0, MASS_TOL, f"M(0) = {m0:.6f}")


def agreement(f_dev: np.ndarray, f_ref: np.ndarray, u_max: float, what: str = "device") -> Check:
    """max |u_dev - u_ref| (both components) / u_max against the numpy fp32 reference."""
    _, ux, uy = R.macroscopic(np.asarray(f_dev, np.float32))
    _, rx, ry = R.macroscopic(np.asarray(f_ref, np.float32))
    d = max(float(np.abs(ux - rx).max()), float(np.abs(uy - ry).max())) / u_max
    fd = float(np.abs(np.asarray(f_dev, np.float64) - f_ref).max())
    return _check(f"{what} vs numpy reference: max |du| / u_max", d, AGREE_TOL, f"max |df| = {fd:.2e}")


# -- cavity -------------------------------------------------------------------------------------------

def velocity_change(f_a: np.ndarray, f_b: np.ndarray) -> float:
    _, ax, ay = R.macroscopic(f_a)
    _, bx, by = R.macroscopic(f_b)
    return max(float(np.abs(ax - bx).max()), float(np.abs(ay - by).max()))


def steady_state(f_before: np.ndarray, f_after: np.ndarray, u_lid: float, window: int = STEADY_WINDOW) -> Check:
    d = velocity_change(f_before, f_after) / u_lid
    return _check(f"steady state: max |u(t) - u(t - {window})| / U_lid", d, STEADY_TOL)


def centre_lines(f: np.ndarray, u_lid: float):
    """(y, u / U_lid) along x = 0.5 and (x, v / U_lid) along y = 0.5, at the cell centres plus the walls."""
    _, ux, uy = R.macroscopic(f)
    n = ux.shape[0]
    c = n // 2
    if n % 2:
        u_col, v_row = ux[:, c], uy[c, :]
    else:
        u_col = 0.5 * (ux[:, c - 1].astype(np.float64) + ux[:, c])
        v_row = 0.5 * (uy[c - 1, :].astype(np.float64) + uy[c, :])
    pos = np.concatenate([[0.0], (np.arange(n) + 0.5) / n, [1.0]])
    u = np.concatenate([[0.0], u_col / u_lid, [1.0]])
    v = np.concatenate([[0.0], v_row / u_lid, [0.0]])
    return pos, u, pos, v


def ghia_deviations(f: np.ndarray, u_lid: float) -> np.ndarray:
    """Simulated minus published at Ghia's 17 u points then 17 v points, in units of U_lid."""
    y, u, x, v = centre_lines(f, u_lid)
    du = np.interp(GHIA_U_Y, y, u) - GHIA_U
    dv = np.interp(GHIA_V_X, x, v) - GHIA_V
    return np.concatenate([du, dv])


def ghia(f: np.ndarray, u_lid: float) -> list[Check]:
    d = ghia_deviations(f, u_lid)
    worst = int(np.argmax(np.abs(d)))
    where = (f"u at y = {GHIA_U_Y[worst]:.4f}" if worst < 17 else f"v at x = {GHIA_V_X[worst - 17]:.4f}")
    return [_check("cavity vs Ghia et al. 1982 (Re 100), 17 + 17 points: max |dev| / U_lid",
                   float(np.abs(d).max()), GHIA_MAX_TOL, f"worst: {where}"),
            _check("cavity vs Ghia et al. 1982 (Re 100): rms dev / U_lid",
                   float(np.sqrt(np.mean(d * d))), GHIA_RMS_TOL)]
