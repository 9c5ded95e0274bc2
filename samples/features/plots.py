"""Pictures of the image-feature sample (matplotlib, Agg backend), written as PNGs.

corners(image, pts, path):          the image with the corners drawn
response(R, path):                  a heat map of log10 |R| with a colour bar
difference(image, extra, missing):  device-only and reference-only corners over the image
"""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

DPI = 90


def _save(fig, path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return path


def _figure(image):
    h, w = image.shape
    return plt.subplots(figsize=(6 * w / max(h, w) + 0.4, 6 * h / max(h, w)))


def corners(image, pts, path, title="") -> Path:
    fig, ax = _figure(image)
    ax.imshow(image, cmap="gray", vmin=0, vmax=1)
    pts = np.asarray(pts).reshape(-1, 2)
    ax.plot(pts[:, 1], pts[:, 0], "o", ms=7, mfc="none", mec="#ff3030", mew=1.6)
    ax.set_title(title or f"{len(pts)} Harris corners")
    ax.axis("off")
    return _save(fig, path)


def response(R, path, title="") -> Path:
    fig, ax = _figure(R)
    lr = np.log10(np.maximum(np.abs(R.astype(np.float64)), 1e-12))
    im = ax.imshow(lr, cmap="magma", vmin=max(lr.max() - 8, lr.min()), vmax=lr.max())
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="log10 |R|")
    ax.set_title(title or "Harris response")
    ax.axis("off")
    return _save(fig, path)


def difference(image, extra, missing, path, title="") -> Path:
    fig, ax = _figure(image)
    ax.imshow(image, cmap="gray", vmin=0, vmax=1, alpha=0.6)
    extra, missing = np.asarray(extra).reshape(-1, 2), np.asarray(missing).reshape(-1, 2)
    ax.plot(extra[:, 1], extra[:, 0], "s", ms=9, mfc="none", mec="#1f77b4", mew=2, label=f"device only ({len(extra)})")
    ax.plot(missing[:, 1], missing[:, 0], "x", ms=9, color="#d62728", mew=2, label=f"reference only ({len(missing)})")
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title(title or "corners: device vs scikit-image")
    ax.axis("off")
    return _save(fig, path)
