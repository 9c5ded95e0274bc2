"""Array arithmetic with cl.array (PyOpenCL's demo_array, extended): element-wise operators on
arrays and scalars, comparisons, in-place updates, reductions, clmath, copies and casts."""
import numpy as np

SIZES = {"small": {"n": 1000}, "large": {"n": 8000}}


def inputs(n):
    rng = np.random.default_rng(26)
    return (rng.random(n, dtype=np.float32) * 4 - 2, rng.random(n, dtype=np.float32) + 0.5,
            rng.integers(-1000, 1000, n).astype(np.int32))


def run(cl, queue, n):
    a_np, b_np, k_np = inputs(n)
    a = cl.array.to_device(queue, a_np)
    b = cl.array.to_device(queue, b_np)
    k = cl.array.to_device(queue, k_np)
    out = {}
    out["lin"] = (2 * a + b).get()
    out["prod"] = (a * b - 1).get()
    out["quot"] = (a / b).get()
    out["rquot"] = (1 / b).get()
    out["neg"] = (-a).get()
    out["gt"] = (a > b).get()
    out["le"] = (a <= 0.5).get()
    c = a.copy()
    c += b
    c *= 3
    c -= a
    out["inplace"] = c.get()
    out["sum"] = cl.array.sum(a).get()
    out["dot"] = cl.array.dot(a, b).get()
    out["max"] = cl.array.max(a).get()
    out["min"] = cl.array.min(b).get()
    out["maximum"] = cl.array.maximum(a, b).get()
    out["minimum"] = cl.array.minimum(a, b).get()
    out["if_positive"] = cl.array.if_positive(a, a, b).get()
    out["sin"] = cl.clmath.sin(a).get()
    out["exp"] = cl.clmath.exp(a).get()
    out["sqrt"] = cl.clmath.sqrt(b).get()
    out["ipoly"] = (k * 3 - 7).get()
    out["isum"] = cl.array.sum(k).get()
    out["imax"] = cl.array.max(k).get()
    out["iastype"] = k.astype(np.float32).get()
    out["arange"] = cl.array.arange(queue, 0, n, 3, dtype=np.int32).get()
    out["zeros"] = cl.array.zeros(queue, (4, 5), np.float32).get()
    out["fill"] = cl.array.empty(queue, 7, np.int32).fill(5).get()
    out["reshape"] = (a.reshape(n // 10, 10) * 2).get()
    out["diff"] = (a[1:] - a[:-1]).get()                  # slices are views of the same buffer
    out["row"] = a.reshape(n // 10, 10)[3].get()
    out["slice_sum"] = cl.array.sum(k[n // 2:]).get()
    d = a.copy()
    d[: n // 4] = 0
    d[n // 2: n // 2 + 10] = b[:10]
    out["setitem"] = d.get()
    return out


def reference(n):
    a, b, k = inputs(n)
    f = np.float32
    return {"lin": 2 * a + b, "prod": a * b - 1, "quot": a / b, "rquot": 1 / b, "neg": -a,
            "gt": (a > b).astype(np.int8), "le": (a <= 0.5).astype(np.int8), "inplace": (a + b) * f(3) - a,
            "sum": a.astype(np.float64).sum(), "dot": np.dot(a.astype(np.float64), b), "max": a.max(),
            "min": b.min(), "maximum": np.maximum(a, b), "minimum": np.minimum(a, b),
            "if_positive": np.where(a > 0, a, b), "sin": np.sin(a.astype(np.float64)),
            "exp": np.exp(a.astype(np.float64)), "sqrt": np.sqrt(b.astype(np.float64)),
            "ipoly": k * 3 - 7, "isum": k.sum(), "imax": k.max(), "iastype": k.astype(np.float32),
            "arange": np.arange(0, n, 3, dtype=np.int32), "zeros": np.zeros((4, 5), np.float32),
            "fill": np.full(7, 5, np.int32), "reshape": (a * 2).reshape(n // 10, 10), "diff": a[1:] - a[:-1],
            "row": a[30:40], "slice_sum": k[n // 2:].sum(), "setitem": _setitem(a, b, n)}


def _setitem(a, b, n):
    d = a.copy()
    d[: n // 4] = 0
    d[n // 2: n // 2 + 10] = b[:10]
    return d


EXACT = ("lin", "prod", "quot", "rquot", "neg", "gt", "le", "inplace", "max", "min", "maximum", "minimum",
         "if_positive", "ipoly", "isum", "imax", "iastype", "arange", "zeros", "fill", "reshape", "diff", "row",
         "slice_sum", "setitem")


def check(got, want, against):
    for key in EXACT:
        np.testing.assert_array_equal(np.asarray(got[key]), np.asarray(want[key]), err_msg=f"{key} vs {against}")
    for key, rtol, atol in (("sum", 1e-5, 1e-3), ("dot", 1e-5, 1e-3), ("sin", 4e-7, 1e-7), ("exp", 4e-7, 0),
                            ("sqrt", 2e-7, 0)):
        np.testing.assert_allclose(got[key], want[key], rtol=rtol, atol=atol, err_msg=f"{key} vs {against}")


if __name__ == "__main__":
    import sys
    from .harness import main
    main(sys.modules[__name__])
