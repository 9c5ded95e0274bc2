"""Grid-stride loops (`for (i = gid; i < n; i += get_global_size(0))`, SHOC's reduction): the
loop's index is gid + t * (global size) in every lane that runs pass t, so `in[i]` is a shifted
contiguous load per pass (control.pass_ivs), not a gather of the whole buffer in every pass."""
import numpy as np
import pytest

from tests.emulator_harness import device_env, launch

SRC = r"""
__kernel void strided_sum(__global const float *in, __global float *out, int n) {
    float s = 0.0f;
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
        s += in[i];
    out[get_global_id(0)] = s;
}
__kernel void strided_from(__global const int *in, __global int *out, int n, int first) {
    int g = get_global_id(0), s = 0, k = 0;
    for (int i = g + first; i < n; i += get_global_size(0))
        s += in[i] * ++k;
    out[g] = s;
}
__kernel void strided_upto(__global const float *in, __global float *out, int last) {
    float s = 0.0f;
    for (int i = get_global_id(0); i <= last; i += get_global_size(0))
        s += in[i];
    out[get_global_id(0)] = s;
}
__kernel void strided_down(__global const int *in, __global int *out, int n) {
    int g = get_global_id(0), s = 0, k = 0;
    for (int i = n - 1 - g; i >= 0; i -= get_global_size(0))
        s += in[i] * ++k;
    out[g] = s;
}
"""


def compiled(name):
    from translator import compile_opencl
    from translator.backend import compile_kernel
    import emulator.machine
    return compile_kernel(compile_opencl(SRC, spmd=True), name, emulator.machine.load_machine("tiny"))


def kernel_plans(name):
    return compiled(name).plans


@pytest.mark.parametrize("name, on_sequencer", [("strided_sum", True), ("strided_from", True),
                                                ("strided_upto", True), ("strided_down", False)])
def test_grid_stride_loop_with_a_positive_step_runs_on_the_sequencer(name, on_sequencer):
    # the lane with the least start runs the most passes: the sequencer counts them, so no pass
    # waits for an any-reduction and the column plan moves the next passes' shares early
    k = compiled(name)
    assert (".while any" not in k.asm) == on_sequencer
    if on_sequencer:
        assert any("double-buffered" in p[3] for p in k.plans), k.plans


@pytest.mark.parametrize("name", ["strided_sum", "strided_from"])
def test_grid_stride_index_is_a_shifted_load(name):
    plans = kernel_plans(name)
    assert plans and all("shifted load" in p[3] for p in plans), plans


@pytest.mark.parametrize("items, n", [(64, 1000), (40, 40), (100, 7), (256, 4097), (1100, 5000), (1100, 700)])
def test_grid_stride_loops_match_numpy(items, n):
    env = device_env("tiny")
    rng = np.random.default_rng(items + n)
    x = rng.integers(-8, 8, n).astype(np.float32)
    (_, got), _ = launch(env, SRC, "strided_sum", items, x, np.zeros(items, np.float32), np.int32(n))
    want = np.array([x[g::items].sum() for g in range(items)], np.float32)
    np.testing.assert_array_equal(got, want)
    (_, got), _ = launch(env, SRC, "strided_upto", items, x, np.zeros(items, np.float32), np.int32(n - 2))
    np.testing.assert_array_equal(got, np.array([x[g:n - 1:items].sum() for g in range(items)], np.float32))
    xi = rng.integers(-50, 50, n).astype(np.int32)
    for first in (0, 3):
        (_, got), _ = launch(env, SRC, "strided_from", items, xi, np.zeros(items, np.int32), np.int32(n), np.int32(first))
        want = [int(np.dot(xi[g + first::items], np.arange(1, len(xi[g + first::items]) + 1))) for g in range(items)]
        np.testing.assert_array_equal(got, np.array(want, np.int32))
    (_, got), _ = launch(env, SRC, "strided_down", items, xi, np.zeros(items, np.int32), np.int32(n))
    want = [int(np.dot(xi[n - 1 - g::-items], np.arange(1, len(xi[n - 1 - g::-items]) + 1))) if n - 1 - g >= 0 else 0
            for g in range(items)]
    np.testing.assert_array_equal(got, np.array(want, np.int32))
