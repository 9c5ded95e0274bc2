"""The LLM-decode sample (samples/llm_decode/): run.py end to end on the tiny machine, and the
plain OpenCL C kernel it compares against.

run.py needs decode.py (TaskMatvec, the task kernel's host side): until that exists the
smoke tests fail with its ImportError.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "llm_decode"


def load(name: str):
    """A module of the sample by file name (the sample's directory on sys.path, as run.py puts it)."""
    if str(SAMPLE) not in sys.path:
        sys.path.insert(0, str(SAMPLE))
    spec = importlib.util.spec_from_file_location(f"llm_decode_{name}", SAMPLE / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("dtype", ["fp32", "half"])
def test_run_tiny(dtype, batch, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    run = load("run")
    png = tmp_path / "roofline.png"
    status = run.main(["--machine", "tiny", "--shape", "tiny", "--dtype", dtype, "--batch", str(batch),
                       "--png", str(png)])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "FAIL" not in out
    size = "{} x {}".format(*run.SHAPES["tiny"])
    assert any(line.startswith("tiny ") and size in line and "skipped" not in line
               for line in out.splitlines()), out
    assert png.is_file() and png.stat().st_size > 1000


@pytest.mark.parametrize("dtype, half_read, rows, cols, batch", [
    ("fp32", "bits", 96, 64, 3),
    ("half", "bits", 96, 64, 3),
    ("half", "vload_half", 32, 48, 2),        # the textbook kernel: a gather on the emulator, tiny shapes only
])
def test_plain_matvec(dtype, half_read, rows, cols, batch):
    import mncl as cl
    plain = load("plain")
    ctx = cl.Context([cl.get_device(machine="tiny")])
    q = cl.CommandQueue(ctx)
    rng = np.random.default_rng(5)
    W = rng.standard_normal((rows, cols), dtype=np.float32)
    W[0, :4] = [0.0, -0.0, 3e-6, -1e-7]          # half subnormals and zeros through the C conversion
    x = rng.standard_normal((batch, cols), dtype=np.float32)
    m = plain.PlainMatvec(ctx, q, rows, cols, batch, dtype, half_read=half_read)
    m.upload(W)
    y, ev = m(x)
    ref = x.astype(np.float64) @ plain.PlainMatvec.device_weights(W, dtype).astype(np.float64).T
    assert y.shape == (batch, rows) and y.dtype == np.float32
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)
    assert ev.stats.cycles > 0 and ev.stats.dram_bytes > 0
