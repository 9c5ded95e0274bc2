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


def data_movement(path) -> Path:
    """The task form's data-movement plan (task.cl), as a diagram: the layout of the grid in long
    words, and the path one iteration's rows take through the machine and back."""
    from matplotlib.patches import FancyArrowPatch, Rectangle
    fig, (lay, tree) = plt.subplots(1, 2, figsize=(13, 5.2), gridspec_kw={"width_ratios": [1, 1.5]})
    # left: slot rows, two lanes, bands over the groups
    n2 = 8
    for s in range(n2):
        for x in range(6):
            for lane in (0, 1):
                lay.add_patch(Rectangle((x + 0.5 * lane, s), 0.46, 0.9, color=("#4c72b0", "#dd8452")[lane],
                                        alpha=0.35 + 0.5 * (s // 2 % 2)))
        lay.text(-0.3, s + 0.45, f"slot {s}", ha="right", va="center", fontsize=8)
    for g in range(4):
        lay.text(6.3, 2 * g + 0.9, f"group {g}: DRAM_SPLIT part {g}", va="center", fontsize=8)
    lay.text(3, n2 + 0.4, "a long word = (row s, row s + n/2): lanes 0 | 1;\nx along the row, one long word per x",
             ha="center", fontsize=8)
    lay.set_xlim(-2, 11)
    lay.set_ylim(-0.5, n2 + 1.6)
    lay.axis("off")
    lay.set_title("layout: slot rows, split over the groups")
    # right: the path of one iteration
    boxes = {"DRAM": (0.1, 0.78), "L2BM": (0.1, 0.53), "L1BM": (0.1, 0.28), "PE": (0.1, 0.03)}
    for name, (x, y) in boxes.items():
        tree.add_patch(Rectangle((x, y), 0.32, 0.16, fill=False, lw=1.5))
        tree.text(x + 0.16, y + 0.08, name, ha="center", va="center", fontsize=11, weight="bold")
    notes = [
        (0.78, "mvd, async: population k's rows from EY rows below\n(L2B l takes row l: alternate rows);"
               "\nthe next iteration's start as these move on"),
        (0.53, "pad copy (periodic only): l2bmd down + up;\nl2bmd from row - EX long words: streamed in x"),
        (0.28, "l1bmd: R rows x (n / L1Bs) long words = one vector\nl1bmd back: the 9 new populations"),
        (0.03, "collide (~100 MAU steps); bounce-back: the cell's\nprevious value kept in LM; Newton 1 / rho"),
    ]
    for y, text in notes:
        tree.text(0.47, y + 0.08, text, va="center", fontsize=8.5)
    for (y0, y1), side in [((0.78, 0.69), -0.03), ((0.53, 0.44), -0.03), ((0.28, 0.19), -0.03)]:
        tree.add_patch(FancyArrowPatch((0.2, y0), (0.2, y1), arrowstyle="->", mutation_scale=14))
        tree.add_patch(FancyArrowPatch((0.32, y1), (0.32, y0), arrowstyle="->", mutation_scale=14, color="#c44e52"))
    tree.text(0.1, 1.1, "down: the step's reads (black); up: the writes into the other half (red,\n"
                         "three rotating output rows); halos: mvb over the group bus + mvp, each step",
              fontsize=8.5, va="top")
    tree.set_xlim(0, 1)
    tree.set_ylim(0, 1.14)
    tree.axis("off")
    tree.set_title("one iteration, every L2B / L1B / PE at once")
    return _save(fig, path)
