"""Build cost grows linearly with the source (issue 20 item 10, issue 19 item 9): a kernel of n
`y[i] += x[i] * j;` lines emitted code whose size grew as n^2 (each store settled the whole lazy
float chain behind it again, translator/backend/nans.py), so 100 lines took over 200 s to build."""
import numpy as np
import pytest

import mncl as cl


def accumulate(n: int) -> str:
    body = "".join(f"  y[i] += x[i] * {j}.0f;\n" for j in range(n))
    return ("__kernel void k(__global float *y, __global const float *x) {\n"
            "  int i = get_global_id(0);\n" + body + "}\n")


def asm_lines(src: str, machine: str = "tiny") -> int:
    import translator
    from emulator.machine import load_machine
    from translator.backend import compile_kernel
    module = translator.compile_opencl(src, spmd=True)
    return len(compile_kernel(module, "k", load_machine(machine), "1d").asm.splitlines())


def test_code_size_is_linear_in_the_number_of_statements():
    small, big = asm_lines(accumulate(16)), asm_lines(accumulate(32))
    assert big < 2.2 * small, (small, big)


CHAIN = r"""
__kernel void chain(__global float *o, __global const float *a, __global const float *b) {
  int i = get_global_id(0);
  float s = a[i];
  o[6 * i] = s;
  s = s * b[i];      o[6 * i + 1] = s;
  s = s - a[i];      o[6 * i + 2] = s;
  s = s * -0.0f;     o[6 * i + 3] = s;
  s = s + b[i];      o[6 * i + 4] = s;
  s = fma(s, a[i], -s); o[6 * i + 5] = s;
}
"""


def test_a_chain_stored_at_every_step_keeps_ieee_nans_and_zero_signs(tiny_env):
    """Each stored value ends the next settle's walk (it is exact in place): the results still
    carry IEEE NaNs and signed zeros, against numpy in float32."""
    ctx, q = tiny_env
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -2.0, 3e38], np.float32)
    a, b = (x.ravel().copy() for x in np.meshgrid(specials, specials))
    mf = cl.mem_flags
    ab = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    bb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
    ob = cl.Buffer(ctx, mf.WRITE_ONLY, 6 * a.nbytes)
    cl.Program(ctx, CHAIN).build().chain(q, a.shape, None, ob, ab, bb)
    got = np.empty(6 * a.size, np.float32)
    cl.enqueue_copy(q, got, ob)
    with np.errstate(all="ignore"):
        s0 = a
        s1 = s0 * b
        s2 = s1 - a
        s3 = s2 * np.float32(-0.0)
        s4 = s3 + b
        s5 = (s4.astype(np.float64) * a - s4).astype(np.float32)
    want = np.stack([s0, s1, s2, s3, s4, s5], axis=1).ravel()
    np.testing.assert_array_equal(got, want)
    real = ~np.isnan(want)           # (a NaN's sign is not specified)
    np.testing.assert_array_equal(np.signbit(got[real]), np.signbit(want[real]))
