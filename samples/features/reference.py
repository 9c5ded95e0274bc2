"""The image-feature sample's reference: Harris corners as scikit-image finds them.

    image = builtin("camera")                 # float32 grey in [0, 1]
    R = response(image)                       # skimage.feature.corner_harris(image, k=0.05, sigma=1)
    pts = corners(R)                          # skimage.feature.corner_peaks(R, min_distance=5, threshold_rel=0.02)

The pipeline the device forms implement, stage by stage (``response_scipy`` spells it out with
scipy.ndimage and is bit-identical to skimage's, which tests/test_features_sample.py checks):
Sobel derivatives (zero padding) -> the products Ir^2, Ir Ic, Ic^2 -> a Gaussian, sigma 1,
9 taps, zero padding -> R = det - k trace^2.  Then the peaks: R equal to the maximum of its
(2 md + 1)^2 window (the window clipped to the image: skimage's 'nearest' padding repeats an
edge pixel that is in the window anyway), R above max(min R, threshold_rel max R), at least md
pixels from the border (``peak_mask``); ``corners_from_mask`` lists such a mask as
corner_peaks does (by decreasing R, row-major among equals, then dropping any peak within md
(Chebyshev) of one kept before it: only ties of R can be that close).
"""
from __future__ import annotations

import numpy as np
from scipy import ndimage as ndi
from scipy import spatial

K = 0.05
SIGMA = 1.0
MIN_DISTANCE = 5
THRESHOLD_REL = 0.02
BUILTINS = ("camera", "astronaut", "coins", "text", "brick")


def builtin(name: str) -> np.ndarray:
    """One of scikit-image's bundled test images as float32 grey in [0, 1]."""
    from skimage import color, data, util
    if name not in BUILTINS:
        raise ValueError(f"unknown built-in image {name!r}; known: {', '.join(BUILTINS)}")
    im = getattr(data, name)()
    if im.ndim == 3:
        im = color.rgb2gray(im[..., :3])
    return util.img_as_float32(im)


def load(path) -> np.ndarray:
    """An image file as float32 grey in [0, 1] (colour converted as skimage.color.rgb2gray does)."""
    from skimage import color, io, util
    im = io.imread(path)
    if im.ndim == 3:
        im = color.rgb2gray(color.rgba2rgb(im) if im.shape[-1] == 4 else im[..., :3])
    elif im.ndim != 2:
        raise ValueError(f"{path}: a {im.ndim}-D image; want a grey or colour picture")
    return util.img_as_float32(im)


def response(image: np.ndarray, k: float = K, sigma: float = SIGMA) -> np.ndarray:
    """skimage.feature.corner_harris, float32."""
    from skimage.feature import corner_harris
    return corner_harris(np.asarray(image, np.float32), method="k", k=k, sigma=sigma)


def response_scipy(image: np.ndarray, k: float = K, sigma: float = SIGMA) -> np.ndarray:
    """The same with scipy.ndimage only, stage by stage (bit-identical to skimage's)."""
    image = np.asarray(image, np.float32)
    ir, ic = (ndi.sobel(image, axis=a, mode="constant", cval=0) for a in (0, 1))
    arr, arc, acc = (ndi.gaussian_filter(a * b, sigma, mode="constant", cval=0, truncate=4.0)
                     for a, b in ((ir, ir), (ir, ic), (ic, ic)))
    det = arr * acc - arc ** 2
    trace = arr + acc
    return det - k * trace ** 2


def threshold(R: np.ndarray, threshold_rel: float = THRESHOLD_REL) -> float:
    """skimage's peak threshold: max(min R, threshold_rel max R), in R's precision."""
    return max(R.min(), threshold_rel * R.max())


def peak_mask(R: np.ndarray, min_distance: int = MIN_DISTANCE, threshold_rel: float = THRESHOLD_REL) -> np.ndarray:
    """The pixels peak_local_max keeps before its spacing pass (see the module's docstring)."""
    size = 2 * min_distance + 1
    mask = (R == ndi.maximum_filter(R, size=size, mode="nearest")) & (R > threshold(R, threshold_rel))
    b = min_distance
    mask[:b] = mask[-b:] = False
    mask[:, :b] = mask[:, -b:] = False
    return mask


def corners_from_mask(R: np.ndarray, mask: np.ndarray, min_distance: int = MIN_DISTANCE) -> np.ndarray:
    """A peak mask as corner_peaks lists it: (n, 2) [row, col], by decreasing R (row-major among
    equals), a peak within min_distance (Chebyshev) of an earlier one dropped."""
    coords = np.transpose(np.nonzero(mask))
    coords = coords[np.argsort(-R[mask], kind="stable")]
    if len(coords) < 2:
        return coords
    tree = spatial.cKDTree(coords)
    rejected = set()
    for i, p in enumerate(coords):
        if i not in rejected:
            near = tree.query_ball_point(p, r=min_distance, p=np.inf)
            rejected.update(j for j in near if j > i)
    return np.delete(coords, sorted(rejected), axis=0)


def corners(R: np.ndarray, min_distance: int = MIN_DISTANCE, threshold_rel: float = THRESHOLD_REL) -> np.ndarray:
    """skimage.feature.corner_peaks(R, min_distance, threshold_rel): (n, 2) [row, col]."""
    from skimage.feature import corner_peaks
    return corner_peaks(R, min_distance=min_distance, threshold_rel=threshold_rel)
