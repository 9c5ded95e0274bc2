"""samples/lbm: the plain OpenCL C form and the task form against the numpy reference
(samples/lbm/reference.py).

Issue 24: a numpy reference first, the devices against it (within 1e-4 u_max in velocity;
with the same density sum the plain form agrees bit for bit, the task form within rounding:
it divides by Newton's method and fuses multiply-adds).  Fast tests: the CPU device and the
`tiny` emulator, Taylor-Green and the cavity on small grids; slow: mncore2.
"""
from __future__ import annotations

import numpy as np
import pytest

from samples.lbm import plain, task
from samples.lbm import reference as R


def velocity(f):
    _, ux, uy = R.macroscopic(f)
    return ux, uy


def initial(params):
    n = params.n
    if params.case == "taylor-green":
        k = 2 * np.pi / n
        yy, xx = np.mgrid[0:n, 0:n].astype(np.float64)
        ux = -params.u0 * np.cos(k * xx) * np.sin(k * yy)
        uy = params.u0 * np.sin(k * xx) * np.cos(k * yy)
        rho = 1 - 3 * params.u0 ** 2 / 4 * (np.cos(2 * k * xx) + np.cos(2 * k * yy))
        return R.equilibrium(rho.astype(np.float32), ux.astype(np.float32), uy.astype(np.float32))
    one = np.ones((n, n), np.float32)
    return R.equilibrium(one, 0 * one, 0 * one)


def check(params, steps, device, machine=None, form=plain, resident=False):
    f0 = initial(params)
    if form is task:
        res = task.run(params, f0, steps, machine=machine, resident=resident)
    else:
        res = plain.run(params, f0, steps, device=device, machine=machine)
    ref = R.run(f0, R.Params(params.case, params.n, params.nu, u0=params.u0, u_lid=params.u_lid), steps)
    assert res.f.shape == (9, params.n, params.n) and res.f.dtype == np.float32
    assert np.isfinite(res.f).all()
    umax = params.u0 if params.case == "taylor-green" else params.u_lid
    (ux, uy), (rx, ry) = velocity(res.f), velocity(ref)
    err = max(np.abs(ux - rx).max(), np.abs(uy - ry).max())
    assert err <= 1e-4 * umax, f"velocity differs from numpy by {err:.3g} (> 1e-4 u_max = {1e-4 * umax:.3g})"
    np.testing.assert_allclose(res.f, ref, rtol=0, atol=1e-6)
    assert np.abs(ref).max() > 0 and (params.case != "cavity" or np.abs(rx).max() > 0.01)   # the flow moved
    return res


CASES = [
    pytest.param(plain.Params("taylor-green", 16, 1 / 6, 0.04), 30, id="taylor-green-16"),
    pytest.param(plain.Params("taylor-green", 32, 0.05, 0.04), 20, id="taylor-green-32"),
    pytest.param(plain.Params("cavity", 16, 0.02, 0.04, 0.1), 50, id="cavity-16"),
]


@pytest.mark.parametrize("params,steps", CASES)
def test_plain_cpu(params, steps):
    check(params, steps, "cpu")


@pytest.mark.parametrize("params,steps", CASES)
def test_plain_tiny(params, steps):
    res = check(params, steps, "emulator", "tiny")
    assert all(ev.stats.cycles > 0 for ev in res.events)


def test_plain_channel_tiny_runs_and_keeps_mass_bounded():
    """The channel (pictures only): finite, the obstacle's cells at rest, flow to the right."""
    n = 16
    params = plain.Params("channel", n, 0.05, 0.04, 0.05)
    res = plain.run(params, initial(plain.Params("cavity", n, 0.05)), 20, device="emulator", machine="tiny")
    assert np.isfinite(res.f).all()
    ux, uy = velocity(res.f)
    solid = plain.default_solid(n)
    assert np.allclose(ux[solid], 0) and np.allclose(uy[solid], 0)
    assert ux[:, : n // 8].mean() > 0.01


def test_plain_rejects_bad_input():
    with pytest.raises(ValueError, match="case"):
        plain.run(plain.Params("poiseuille", 16, 0.1), np.zeros((9, 16, 16), np.float32), 1, device="cpu")
    with pytest.raises(ValueError, match="f0 must be"):
        plain.run(plain.Params("cavity", 16, 0.1), np.zeros((9, 8, 8), np.float32), 1, device="cpu")


@pytest.mark.slow
@pytest.mark.parametrize("case", ["taylor-green", "cavity"])
def test_plain_mncore2(case):
    params = plain.Params(case, 64, 0.05, 0.04, 0.1)
    res = check(params, 10, "emulator", "mncore2")
    assert all(ev.stats.cycles > 0 for ev in res.events)


def test_a_fast_build_that_does_not_compile_is_said():
    """On mncore2 the step's full-wave row-major build needs more L2BM than the machine has (its
    18 buffers' staging areas): a launch of more than half a wave (136 x 136; a smaller one takes
    the narrowest wave that holds it first) runs a narrower wave's rows build, and says once that
    the faster one did not compile (the runtime used to fall back to the gathering nd build, silently)."""
    import warnings
    from translator.backend.abi import SlowerBuildWarning
    params = plain.Params(case="cavity", n=136, nu=0.05, u0=0.04, u_lid=0.1)
    f0 = initial(params)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        plain.run(params, f0, 1, device="emulator", machine="mncore2")
    said = [str(r.message) for r in rec if issubclass(r.category, SlowerBuildWarning)]
    assert said and "'rows' build does not compile" in said[0] and "lbm_step" in said[0], said


# -- the task form ---------------------------------------------------------------------------------

TASK_CASES = [
    pytest.param(plain.Params("taylor-green", 64, 1 / 6, 0.04), 6, id="taylor-green-64"),
    pytest.param(plain.Params("cavity", 64, 0.02, 0.04, 0.1), 30, id="cavity-64"),
    pytest.param(plain.Params("cavity", 128, 0.05, 0.04, 0.1), 3, id="cavity-128"),
]


@pytest.mark.parametrize("resident", [False, True], ids=["streaming", "resident"])
@pytest.mark.parametrize("params,steps", TASK_CASES)
def test_task_tiny(params, steps, resident):
    """Every step in one launch; on tiny, one group: the halos are the lane-swapped rows."""
    res = check(params, steps, "emulator", "tiny", form=task, resident=resident)
    assert len(res.events) == 1 and res.events[0].stats.cycles > 0


def test_task_resident_odd_steps_end_in_the_other_half():
    """The resident kernel writes the grid back where the streaming one would end (half steps % 2)."""
    check(plain.Params("taylor-green", 64, 1 / 6, 0.04), 3, "emulator", "tiny", form=task, resident=True)


def test_task_layout_round_trips():
    rng = np.random.default_rng(0)
    f = rng.standard_normal((9, 16, 16)).astype(np.float32)
    for groups in (1, 2, 4):
        dev = task.pack(f, groups)
        assert dev.shape == (groups, 2, 9, 16 // 2 // groups + 2, 16, 2)
        assert np.array_equal(task.unpack(dev, 0), f)
    # slot row s holds rows s and s + n/2 in its two lanes, x contiguous
    dev = task.pack(f, 2)
    assert dev[1, 0, 3, 1 + 1, 5, 0] == f[3, 4 + 1, 5] and dev[1, 0, 3, 1 + 1, 5, 1] == f[3, 8 + 4 + 1, 5]


def test_task_rejects_what_it_does_not_run():
    with pytest.raises(ValueError, match="taylor-green and cavity"):
        task.TaskLBM(plain.Params("channel", 64, 0.05, 0.04, 0.05), "tiny")
    with pytest.raises(ValueError, match=r"takes n in \[64, 128"):
        task.TaskLBM(plain.Params("cavity", 48, 0.05), "tiny")
    assert task.sizes("mncore2", 4096) == [1024, 2048]
    assert task.fits_resident("mncore2", 1024) and not task.fits_resident("mncore2", 2048)
    with pytest.raises(ValueError, match=r"resident mode needs the grid in LM: on mncore2 n in \[1024\]"):
        task.TaskLBM(plain.Params("cavity", 2048, 0.05), "mncore2", resident=True)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["taylor-green", "cavity"])
def test_task_mncore2(case):
    """Four groups: the bands' halos cross the group bus."""
    params = plain.Params(case, 1024, 0.05, 0.04, 0.1)
    res = check(params, 3, "emulator", "mncore2", form=task)
    st = res.events[0].stats
    assert st.cycles < 3 * 1024 * 1024 * 72 / 512 / 0.8      # within 80% of the DRAM roofline
    res = check(params, 3, "emulator", "mncore2", form=task, resident=True)
    assert res.events[0].stats.cycles < st.cycles             # faster than streaming, even with its load


@pytest.mark.slow
def test_task_cavity_against_ghia_on_the_emulator(tmp_path, capsys):
    """Issue 24's slow check: the lid-driven cavity at Re = 100, N = 64, run on the emulator to
    steady state (the resident task form on tiny, windows of 1000 steps: ~10000 steps, ~12 min),
    then against Ghia et al. (1982) and the numpy reference; run.py exits 1 when a check fails."""
    from samples.lbm import run
    code = run.main(["--form", "task", "--resident", "--machine", "tiny", "--case", "cavity", "--n", "64",
                     "--no-progress", "--png", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "PASS  cavity vs Ghia et al. 1982 (Re 100), 17 + 17 points" in out, out
    assert "PASS  device vs numpy reference" in out and "PASS  steady state" in out, out
    assert (tmp_path / "cavity-n64-ghia.png").is_file()
