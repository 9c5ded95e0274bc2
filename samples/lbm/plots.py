"""Pictures of the LBM sample (matplotlib, Agg backend): written as PNGs to a directory.

speed(f, path):        speed magnitude |u| / u_max with streamlines
vorticity(f, path):    dv/dx - du/dy, a diverging map symmetric about zero
ghia_profiles(f, path): the cavity's centre-line u(y) and v(x) against Ghia, Ghia and Shin (1982)
frames(fs, path):      a column of vorticity frames (the channel's vortex street)
All take populations f (9, ny, nx) float32 and return the path written.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

try:
    from . import checks as C, reference as R
except ImportError:                   # run as a script from samples/lbm/
    import checks as C  # type: ignore
    import reference as R  # type: ignore

DPI = 90


def _fields(f):
    _, ux, uy = R.macroscopic(np.asarray(f, np.float32))
    return ux.astype(np.float64), uy.astype(np.float64)


def _figsize(ny, nx, base=4.6, extra=1.1):
    return (base * nx / ny + extra, base) if nx >= ny else (base + extra, base * ny / nx)


def _save(fig, path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return path


def _mask(a, solid):
    return np.ma.array(a, mask=solid) if solid is not None else a


def speed(f, path, u_max: float, title: str = "", solid=None) -> Path:
    ux, uy = _fields(f)
    ny, nx = ux.shape
    sp = np.hypot(ux, uy) / u_max
    fig, ax = plt.subplots(figsize=_figsize(ny, nx))
    x, y = np.arange(nx) + 0.5, np.arange(ny) + 0.5
    im = ax.imshow(_mask(sp, solid), origin="lower", extent=(0, nx, 0, ny), cmap="viridis")
    uxs, uys = (np.where(solid, 0, ux), np.where(solid, 0, uy)) if solid is not None else (ux, uy)
    ax.streamplot(x, y, uxs, uys, color="w", linewidth=0.6, density=1.2 * max(1, nx / ny) ** 0.5, arrowsize=0.6)
    ax.set_xlim(0, nx)
    ax.set_ylim(0, ny)
    ax.set_title(title or "speed |u| / u_max with streamlines")
    ax.set_xlabel("x (cells)")
    ax.set_ylabel("y (cells)")
    fig.colorbar(im, ax=ax, shrink=0.85, label="|u| / u_max")
    return _save(fig, path)


def _vort_limit(w, solid):
    a = np.abs(w if solid is None else w[~solid])
    return float(np.percentile(a, 99)) or 1e-12


def vorticity(f, path, title: str = "", solid=None) -> Path:
    ux, uy = _fields(f)
    ny, nx = ux.shape
    w = R.vorticity(ux, uy)
    lim = _vort_limit(w, solid)
    fig, ax = plt.subplots(figsize=_figsize(ny, nx))
    im = ax.imshow(_mask(w, solid), origin="lower", extent=(0, nx, 0, ny), cmap="RdBu_r", vmin=-lim, vmax=lim)
    ax.set_title(title or "vorticity dv/dx - du/dy (lattice units)")
    ax.set_xlabel("x (cells)")
    ax.set_ylabel("y (cells)")
    fig.colorbar(im, ax=ax, shrink=0.85, label="vorticity (1 / step)")
    return _save(fig, path)


def ghia_profiles(f, path, u_lid: float, title: str = "") -> Path:
    y, u, x, v = C.centre_lines(np.asarray(f, np.float32), u_lid)
    n = np.asarray(f).shape[1]
    fig, (a, b) = plt.subplots(1, 2, figsize=(9.5, 4.3))
    a.plot(u, y, "-", color="C0", label=f"LBM, N = {n}")
    a.plot(C.GHIA_U, C.GHIA_U_Y, "o", mfc="none", color="k", label="Ghia et al. 1982")
    a.set_xlabel("u / U_lid on x = 0.5")
    a.set_ylabel("y")
    a.axvline(0, color="0.8", lw=0.7)
    a.legend(loc="lower right", fontsize=8)
    b.plot(x, v, "-", color="C3", label=f"LBM, N = {n}")
    b.plot(C.GHIA_V_X, C.GHIA_V, "o", mfc="none", color="k", label="Ghia et al. 1982")
    b.set_xlabel("x")
    b.set_ylabel("v / U_lid on y = 0.5")
    b.axhline(0, color="0.8", lw=0.7)
    b.legend(loc="lower left", fontsize=8)
    fig.suptitle(title or "lid-driven cavity, Re = 100: centre-line velocities")
    fig.tight_layout()
    return _save(fig, path)


def frames(fs: list, steps: list[int], path, solid=None, title: str = "") -> Path:
    """Vorticity of each snapshot, stacked top to bottom, one colour scale (the last frame's)."""
    ws = [R.vorticity(*_fields(f)) for f in fs]
    lim = _vort_limit(ws[-1], solid)
    ny, nx = ws[0].shape
    fig, axes = plt.subplots(len(ws), 1, figsize=(7.5, 0.3 + len(ws) * 7.5 * ny / nx * 1.05), squeeze=False)
    for ax, w, s in zip(axes[:, 0], ws, steps):
        ax.imshow(_mask(w, solid), origin="lower", extent=(0, nx, 0, ny), cmap="RdBu_r", vmin=-lim, vmax=lim)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_ylabel(f"step {s}", fontsize=8)
    fig.suptitle(title or "flow past a cylinder: vorticity", fontsize=10)
    fig.tight_layout()
    return _save(fig, path)
