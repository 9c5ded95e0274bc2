"""Monte-Carlo pi with cl.clrandom: points uniform in the unit square from a Philox generator,
the fraction inside the quarter circle counted by a ReductionKernel, and normal variates' moments.
The generators' streams differ between PyOpenCL and mncl, so the checks are statistical: each
estimate within 5 standard errors of the truth and of the other implementation's."""
import numpy as np

SIZES = {"small": {"n": 4096}, "large": {"n": 8192}}


def run(cl, queue, n):
    ctx = queue.context
    gen = cl.clrandom.PhiloxGenerator(ctx, seed=2026)
    x = gen.uniform(queue, (n,), np.float32)
    y = gen.uniform(queue, (n,), np.float32)
    inside = cl.reduction.ReductionKernel(ctx, np.int32, neutral="0", reduce_expr="a+b",
                                          map_expr="x[i] * x[i] + y[i] * y[i] <= 1.0f ? 1 : 0",
                                          arguments="__global const float *x, __global const float *y")
    hits = int(inside(x, y).get())
    z = gen.normal(queue, (n,), np.float32, mu=1.0, sigma=2.0)
    zsum = float(cl.array.sum(z, dtype=np.float64 if _fp64(ctx) else np.float32).get())
    zsq = float(cl.array.dot(z - 1, z - 1).get())
    u = cl.clrandom.rand(queue, (n,), np.float32, a=-1.0, b=1.0)
    return {"n": n, "pi": 4.0 * hits / n, "umin": float(cl.array.min(x).get()), "umax": float(cl.array.max(y).get()),
            "zmean": zsum / n, "zvar": zsq / n, "rmin": float(cl.array.min(u).get()),
            "rmax": float(cl.array.max(u).get())}


def _fp64(ctx):
    return "cl_khr_fp64" in ctx.devices[0].extensions


def reference(n):
    return {"n": n, "pi": np.pi, "umin": 0.0, "umax": 1.0, "zmean": 1.0, "zvar": 4.0, "rmin": -1.0, "rmax": 1.0}


def check(got, want, against):
    n = got["n"]
    p = np.pi / 4
    se_pi = 4 * np.sqrt(p * (1 - p) / n) * (np.sqrt(2) if against != "numpy" else 1)
    assert abs(got["pi"] - want["pi"]) < 5 * se_pi, f"pi {got['pi']} vs {against}'s {want['pi']}"
    se_mean = 2 / np.sqrt(n) * (np.sqrt(2) if against != "numpy" else 1)
    assert abs(got["zmean"] - want["zmean"]) < 5 * se_mean, f"normal mean {got['zmean']} vs {against}"
    se_var = 4 * np.sqrt(2 / n) * (np.sqrt(2) if against != "numpy" else 1)
    assert abs(got["zvar"] - want["zvar"]) < 5 * se_var, f"normal variance {got['zvar']} vs {against}"
    assert 0 <= got["umin"] < 0.01 and 0.99 < got["umax"] < 1, (got["umin"], got["umax"])
    assert -1 <= got["rmin"] < -0.99 and 0.99 < got["rmax"] < 1, (got["rmin"], got["rmax"])


if __name__ == "__main__":
    import sys
    from .harness import main
    main(sys.modules[__name__])
