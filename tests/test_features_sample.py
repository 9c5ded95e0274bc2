"""samples/features: Harris corners against scikit-image (issue 25).

The reference is skimage's corner_harris + corner_peaks; reference.py's scipy-only spelling and
its mask-to-list step are checked equal to them here, on all five bundled images.  The plain
OpenCL C form runs on the CPU device (whole images) and on `tiny` (a 64 x 64 crop with corners)
in the fast suite, on mncore2 at full size in the slow one.  Skipped without scikit-image.
"""
from __future__ import annotations

import numpy as np
import pytest

skimage = pytest.importorskip("skimage")

from samples.features import checks as C            # noqa: E402
from samples.features import reference as ref       # noqa: E402


@pytest.mark.parametrize("name", ref.BUILTINS)
def test_the_reference_stages_are_skimages(name):
    image = ref.builtin(name)
    assert image.dtype == np.float32 and 0 <= image.min() and image.max() <= 1
    R = ref.response(image)
    assert np.array_equal(R, ref.response_scipy(image))          # bit for bit
    assert np.array_equal(ref.corners_from_mask(R, ref.peak_mask(R)), ref.corners(R))
    assert len(ref.corners(R)) > 10


def test_a_tie_is_resolved_as_corner_peaks_resolves_it():
    """Two equal maxima closer than min_distance: corner_peaks keeps the first in row-major order."""
    R = np.zeros((40, 40), np.float32)
    R[20, 20] = R[22, 23] = 1.0
    R[5 + 2, 30] = 0.5
    assert np.array_equal(ref.corners_from_mask(R, ref.peak_mask(R)), ref.corners(R))
    assert [tuple(p) for p in ref.corners(R)] == [(20, 20), (7, 30)]


def test_the_corner_check_allows_ties_only():
    R = np.zeros((40, 40), np.float32)
    R[20, 20], R[22, 23], R[10, 10] = 1.0, 1.0, 0.8
    same, lines = C.corners(np.array([[20, 20]]), np.array([[20, 20]]), R)
    assert same.passed and not lines
    tie, lines = C.corners(np.array([[22, 23]]), np.array([[20, 20]]), R)
    assert tie.passed and "ties a reference corner" in lines[0]
    other, lines = C.corners(np.array([[10, 10]]), np.array([[20, 20]]), R)
    assert not other.passed and len(lines) == 2


def check(res, image):
    R = ref.response(image)
    for c in C.response(res.R, R):
        assert c.passed, c.line
    corner_check, lines = C.corners(res.corners, ref.corners(R), R)
    assert corner_check.passed, (corner_check.line, lines)
    assert np.array_equal(res.mask, ref.peak_mask(R)) or lines
    return R


@pytest.mark.parametrize("name", ["camera", "coins", "text"])
def test_plain_cpu(name):
    from samples.features import plain
    image = ref.builtin(name)
    res = plain.run(image, "cpu")
    check(res, image)
    assert len(res.corners) > 10


def test_plain_tiny():
    """A 64 x 64 crop of coins with 19 corners, all eight launches on the emulator."""
    from samples.features import plain
    image = np.ascontiguousarray(ref.builtin("coins")[16:80, 304:368])
    res = plain.run(image, "emulator", "tiny")
    check(res, image)
    assert len(res.corners) == 19 and all(ev.stats.cycles > 0 for ev in res.events)


def tiny_frames():
    """Four 64 x 128 crops (one per L1B of tiny) with corners in them."""
    spots = [("coins", 16, 240), ("camera", 144, 200), ("astronaut", 352, 100), ("text", 16, 200)]
    return np.stack([ref.builtin(n)[r:r + 64, c:c + 128] for n, r, c in spots])


def test_fused_tiny():
    """The fused task kernel: a frame per L1B, every stage on chip, the same corners as skimage."""
    from samples.features import fused
    frames = tiny_frames()
    res = fused.run(frames, "tiny")
    assert len(res.events) == 1
    total = 0
    for f, image in enumerate(frames):
        R = check(type("R", (), {"R": res.R[f], "corners": res.corners[f], "mask": res.mask[f]}), image)
        assert np.array_equal(res.mask[f], ref.peak_mask(R))
        total += len(res.corners[f])
    assert total > 20


def test_fused_layout_round_trips():
    from emulator.machine import load_machine
    from samples.features import fused
    for name in ("tiny", "mncore2"):
        m = load_machine(name)
        nf, w = fused.geometry(m)[:2]
        x = np.random.default_rng(0).random((nf, 12, w), dtype=np.float32)
        assert np.array_equal(fused.unpack(fused.pack(x, m), m, 12), x)


def test_fused_rejects_frames_it_does_not_take():
    from samples.features import fused
    with pytest.raises(ValueError, match="frames must be 64 x 128 on tiny"):
        fused.FusedHarris(64, "tiny").run(np.zeros((2, 64, 100), np.float32))
    with pytest.raises(ValueError, match="at most 4 frames a launch"):
        fused.FusedHarris(64, "tiny").run(np.zeros((5, 64, 128), np.float32))
    with pytest.raises(ValueError, match="11 to 512 rows"):
        fused.FusedHarris(8, "tiny")


def test_run_cli_checks_and_draws(tmp_path, capsys):
    from samples.features import run
    assert run.main(["--builtin", "text", "--device", "cpu", "--png", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "PASS  corners" in out and "FAIL" not in out
    for kind in ("corners", "response", "difference"):
        assert (tmp_path / f"text-{kind}.png").is_file()
    assert run.main(["--builtin", "text", "--crop", "8", "--device", "cpu"]) == 2
    assert run.main(["--builtin", "text", "--form", "task", "--machine", "tiny"]) == 2    # 448 wide, not 128
    assert run.main(["--builtin", "coins", "--crop", "128", "--form", "task", "--machine", "tiny"]) == 0


@pytest.mark.slow
def test_fused_mncore2():
    """64 frames of 512 x 512 in one launch: camera, astronaut and brick, 21 or 22 times each."""
    from samples.features import fused
    names = ["camera", "astronaut", "brick"]
    frames = np.stack([ref.builtin(names[f % 3]) for f in range(64)])
    res = fused.run(frames, "mncore2")
    for f in range(3):
        check(type("R", (), {"R": res.R[f], "corners": res.corners[f], "mask": res.mask[f]}), frames[f])
    for f in range(3, 64):
        assert np.array_equal(res.R[f], res.R[f % 3]) and np.array_equal(res.mask[f], res.mask[f % 3])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["camera", "astronaut", "coins", "text"])
def test_plain_mncore2(name):
    from samples.features import plain
    image = ref.builtin(name)
    res = plain.run(image, "emulator", "mncore2")
    check(res, image)
