"""The LBM sample's numpy reference (samples/lbm/reference.py) against physics and published data,
its checks (checks.py), the CLI with --reference (run.py) and the pictures (plots.py).

Measured values these tests hold (fp32 numpy reference): Taylor-Green relative L2 error of u
8.42e-3 at N = 32 / 200 steps, 2.12e-3 at N = 64 / 800 steps (ratio 3.98); mass drift 9.1e-8 and
1.7e-7; cavity Re 100, N = 64, steady after 10000 steps, against Ghia et al. (1982): max 6.1e-3,
rms 2.6e-3 of U_lid.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from samples.lbm import checks as C
from samples.lbm import reference as R
from samples.lbm import run as cli


def tg_run(n: int):
    p = R.Params.for_case("taylor-green", n)
    f0 = R.init(p)
    steps = C.tg_reference_steps(n)
    return p, f0, R.run(f0, p, steps), steps


# -- the scheme itself -----------------------------------------------------------------------------------

def test_lattice_tables():
    assert math.isclose(float(R.W.sum()), 1.0, rel_tol=1e-7)
    for k in range(9):
        o = R.OPP[k]
        assert (R.EX[o], R.EY[o]) == (-R.EX[k], -R.EY[k])
        assert R.W[o] == R.W[k]


def test_equilibrium_moments():
    rng = np.random.default_rng(1)
    rho = (1 + 0.01 * rng.standard_normal((8, 8))).astype(np.float32)
    ux, uy = (0.05 * rng.standard_normal((2, 8, 8))).astype(np.float32)
    r, x, y = R.macroscopic(R.equilibrium(rho, ux, uy))
    np.testing.assert_allclose(r, rho, rtol=1e-6)
    np.testing.assert_allclose(x, ux, atol=1e-7)
    np.testing.assert_allclose(y, uy, atol=1e-7)


def naive_step(f, p):
    """The scheme cell by cell, in float64 loops: the vectorised step must match it."""
    ny, nx = f.shape[1:]
    out = np.empty_like(f, dtype=np.float64)
    lid = p.u_lid if p.case == "cavity" else 0.0
    for y in range(ny):
        for x in range(nx):
            pulled = np.empty(9)
            for k in range(9):
                sx, sy = x - R.EX[k], y - R.EY[k]
                if p.case == "taylor-green":
                    pulled[k] = f[k, sy % ny, sx % nx]
                elif 0 <= sx < nx and 0 <= sy < ny:
                    pulled[k] = f[k, sy, sx]
                else:
                    uw = lid if sy == ny else 0.0
                    pulled[k] = f[R.OPP[k], y, x] + 6 * R.W[k] * R.EX[k] * uw
            rho = pulled.sum()
            u = (pulled @ R.EX) / rho
            v = (pulled @ R.EY) / rho
            for k in range(9):
                eu = R.EX[k] * u + R.EY[k] * v
                feq = R.W[k] * rho * (1 + 3 * eu + 4.5 * eu * eu - 1.5 * (u * u + v * v))
                out[k, y, x] = pulled[k] - (pulled[k] - feq) / p.tau
    return out


@pytest.mark.parametrize("case", ["taylor-green", "cavity"])
def test_step_matches_cell_by_cell(case):
    p = R.Params.for_case(case, 8, re=10)
    rng = np.random.default_rng(2)
    f = R.init(p) * (1 + 0.02 * rng.standard_normal((9, 8, 8))).astype(np.float32)
    f = f.astype(np.float32)
    np.testing.assert_allclose(R.step(f, p), naive_step(f.astype(np.float64), p), rtol=0, atol=3e-7)


def test_step_rejects_wrong_arrays():
    p = R.Params.for_case("cavity", 8)
    with pytest.raises(ValueError, match="float32"):
        R.step(R.init(p).astype(np.float64), p)
    with pytest.raises(ValueError, match="unknown case"):
        R.Params("pipe", 8, 0.1)


def test_params_from_re():
    p = R.Params.for_case("cavity", 64, re=100)
    assert math.isclose(p.nu, 0.064) and math.isclose(p.tau, 0.692) and math.isclose(p.re, 100)
    assert R.Params.for_case("taylor-green", 32).tau == 1.0


# -- Taylor-Green ---------------------------------------------------------------------------------------

def test_taylor_green_n32():
    p, f0, f, steps = tg_run(32)
    c = C.taylor_green_error(f, p, steps)
    assert c.passed, c.line
    assert 8.2e-3 < c.value < 8.6e-3, c.line               # measured 8.42e-3 (issue: about 7.7e-3)
    m = C.mass_drift(f0, f)
    assert m.passed, m.line


def test_taylor_green_second_order():          # N = 64 / 800 steps: ~3 s
    _, _, f32, s32 = tg_run(32)
    p, f0, f64, s64 = tg_run(64)
    e32 = C.taylor_green_l2(f32, R.Params.for_case("taylor-green", 32), s32)
    c = C.taylor_green_error(f64, p, s64)
    assert c.passed and 2.0e-3 < c.value < 2.3e-3, c.line   # measured 2.12e-3 (issue: about 1.9e-3)
    order = C.taylor_green_order(e32, c.value, 32)
    assert order.passed, order.line
    assert C.mass_drift(f0, f64).passed


def test_mass_drift_literal_sum_is_what_the_shifted_sum_fixes():
    """rho summed literally in fp32 drifts mass by > 1e-6 in the issue's N = 32 run; the shifted sum
    (1 + sum (f - w)), the same number in exact arithmetic, keeps it under 1e-7."""
    p = R.Params.for_case("taylor-green", 32)
    f0 = R.init(p)
    f = f0
    for _ in range(200):
        pulled = R.stream(f, p)
        rho, ux, uy = R.macroscopic(pulled, literal=True)
        pulled -= (pulled - R.equilibrium(rho, ux, uy)) / np.float32(p.tau)
        f = pulled
    assert not C.mass_drift(f0, f).passed
    assert C.mass_drift(f0, R.run(f0, p, 200)).value < 2e-7


# -- the cavity -----------------------------------------------------------------------------------------

def test_cavity_mass_and_lid():
    p = R.Params.for_case("cavity", 16)
    f0 = R.init(p)
    f = R.run(f0, p, 200)
    _, ux, uy = R.macroscopic(f)
    assert ux[-1].mean() > 0.02                   # the lid drags the top row in +x
    assert ux[: p.n // 2].mean() < 0              # the return flow below
    assert abs(C.mass(f) - C.mass(f0)) / C.mass(f0) < 1e-6


def test_ghia_check_on_synthetic_profiles():
    """The comparison machinery alone: centre lines that are Ghia's own points pass with ~0 deviation."""
    n = 64
    pos = (np.arange(n) + 0.5) / n
    u = np.interp(pos, C.GHIA_U_Y[::-1], C.GHIA_U[::-1]) * 0.1
    v = np.interp(pos, C.GHIA_V_X[::-1], C.GHIA_V[::-1]) * 0.1
    ux = np.tile(u[:, None], (1, n)).astype(np.float32)
    uy = np.tile(v[None, :], (n, 1)).astype(np.float32)
    f = R.equilibrium(np.ones((n, n), np.float32), ux, uy)
    res = C.ghia(f, 0.1)
    assert all(c.passed for c in res), [c.line for c in res]
    assert res[0].value < 0.01            # resampling the lid's steep layer at 64 points: 7.5e-3


def test_cavity_against_ghia_n64():           # ~6 s to steady state (10000 steps): under 20 s, so not slow
    p = R.Params.for_case("cavity", 64)
    f = R.init(p)
    for _ in range(60):
        g = R.run(f, p, C.STEADY_WINDOW)
        done = C.steady_state(f, g, p.u_lid)
        f = g
        if done.passed:
            break
    assert done.passed, done.line
    res = C.ghia(f, p.u_lid)
    assert all(c.passed for c in res), [c.line for c in res]
    assert res[0].value < 0.008                     # measured 6.1e-3 (the reference note: 0.006-0.008)


def test_agreement_check():
    p = R.Params.for_case("taylor-green", 16)
    f = R.run(R.init(p), p, 10)
    assert C.agreement(f, f, p.u0).value == 0
    g = f.copy()
    g[1] += 1e-5                                  # +x momentum 1e-5: 2.5e-4 of u0
    c = C.agreement(g, f, p.u0)
    assert not c.passed and "FAIL" in c.line


# -- the CLI and the pictures --------------------------------------------------------------------------

def test_cli_reference_taylor_green(capsys):
    assert cli.main(["--reference", "--n", "16", "--steps", "50", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "PASS  taylor-green L2 error" in out and "mass drift" in out and "MLUPS" in out
    assert "FAIL" not in out


def test_cli_fails_on_a_failed_check(capsys):
    # a cavity run too short to be steady: the steady-state and Ghia checks fail, exit 1
    assert cli.main(["--reference", "--case", "cavity", "--n", "16", "--steps", "1000", "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  steady state" in out and "check(s) failed" in out


def test_cli_forms_not_there(capsys):
    assert cli.main(["--form", "task", "--n", "16", "--steps", "2"]) == 2      # sizes the task form does not run
    assert "takes n in [1024, 2048], not 16" in capsys.readouterr().err
    assert cli.main(["--form", "task", "--device", "cpu", "--n", "16", "--steps", "2"]) == 2
    assert "runs on the emulator device" in capsys.readouterr().err
    assert cli.main(["--case", "channel", "--form", "plain", "--n", "16", "--steps", "2"]) == 2
    assert "reference only" in capsys.readouterr().err


def test_pictures(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    assert cli.main(["--reference", "--case", "cavity", "--n", "16", "--re", "10", "--no-progress",
                     "--png", str(tmp_path)]) == 0
    assert cli.main(["--reference", "--case", "channel", "--n", "20", "--steps", "120", "--frames", "3",
                     "--frame-every", "40", "--no-progress", "--png", str(tmp_path)]) == 0
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["cavity-n16-speed.png", "cavity-n16-vorticity.png",
                     "channel-n20-frames.png", "channel-n20-speed.png", "channel-n20-vorticity.png"], names
    assert all(p.stat().st_size > 5000 for p in tmp_path.iterdir())


def test_ghia_picture(tmp_path):
    pytest.importorskip("matplotlib")
    from samples.lbm import plots
    p = R.Params.for_case("cavity", 16)
    path = plots.ghia_profiles(R.run(R.init(p), p, 300), tmp_path / "g.png", p.u_lid)
    assert path.stat().st_size > 5000
