"""Sorting with BitonicSort (pyopencl.bitonic_sort): float keys sorted in place with an index array
permuted alongside, and integer keys alone."""
import numpy as np

SIZES = {"small": {"n": 256}, "large": {"n": 256}}


def inputs(n):
    rng = np.random.default_rng(17)
    return rng.standard_normal(n).astype(np.float32), rng.integers(-10 ** 6, 10 ** 6, n).astype(np.int32)


def run(cl, queue, n):
    f_np, k_np = inputs(n)
    f = cl.array.to_device(queue, f_np)
    k = cl.array.to_device(queue, k_np)
    idx = cl.array.arange(queue, 0, n, 1, dtype=np.int32)
    sorter = cl.bitonic_sort.BitonicSort(queue.context)
    sorter(f, idx=idx, queue=queue)
    sorter(k, queue=queue)
    return {"keys": f.get(), "idx": idx.get(), "ints": k.get()}


def reference(n):
    f, k = inputs(n)
    order = np.argsort(f, kind="stable")
    return {"keys": f[order], "idx": order.astype(np.int32), "ints": np.sort(k)}


def check(got, want, against):
    np.testing.assert_array_equal(got["keys"], want["keys"], err_msg=f"keys vs {against}")
    np.testing.assert_array_equal(got["ints"], want["ints"], err_msg=f"ints vs {against}")
    # the keys are distinct, so the permutation is determined
    np.testing.assert_array_equal(got["idx"], want["idx"], err_msg=f"idx vs {against}")


if __name__ == "__main__":
    import sys
    from .harness import main
    main(sys.modules[__name__])
