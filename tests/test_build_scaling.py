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


def test_sinking_into_branches_is_linear_in_the_branches():
    """cleanup.sink_into_branches scanned every op before each branch again: a kernel of n stores
    (each with a bounds-check branch) took n^2 steps there (1000 lines: most of 5 minutes)."""
    from timing import cpu_seconds
    from translator.backend.cleanup import sink_into_branches
    from translator.backend.ops import Op, SeqIf, VReg

    def stores():                     # fresh each try: the pass moves ops in place
        items = []
        for k in range(4000):
            r = VReg("x")
            items += [Op("iadd {s0} {s0} {d0}", "alu", (r,), (VReg("a"),)),
                      SeqIf("%p0 > 1", [Op("ipassa {s0} $t", "alu", (), (r,))])]
        return items
    trees = []
    assert cpu_seconds(lambda: trees.append(sink_into_branches(stores())), 3.0) < 3.0
    tree = trees[-1]
    assert len(tree) == 4000 and all(len(b.then) == 2 for b in tree)     # every add moved into its branch


def test_constants_past_the_hoisted_ones_are_made_where_read():
    from translator.backend.cleanup import rematerialise_constants
    from translator.backend.ops import Op, SeqLoop, VReg, flat_ops
    consts = [VReg(f"c{k}") for k in range(4)]
    prologue = [Op(f"limm {k} {{d0}}", "alu", (c,), ()) for k, c in enumerate(consts)]
    body = [Op("iadd {s0} {s1} {d0}", "alu", (VReg("y"),), (consts[k], consts[3])) for k in range(3)]
    tree = rematerialise_constants(prologue + [SeqLoop("%i", "0", "4", body)], keep=2)
    kept = [o for o in tree if isinstance(o, Op)]
    assert [o.dsts[0] for o in kept] == consts[2:]            # the most read (c3) and one more stay
    loop = tree[-1].body
    for k in range(2):                                        # c0, c1: a limm right before each reader
        assert loop[2 * k].text == f"limm {k} {{d0}}" and loop[2 * k + 1].srcs[0] is loop[2 * k].dsts[0]
    assert all(c not in o.srcs for c in consts[:2] for o in flat_ops(tree))


@pytest.mark.slow
def test_a_kernel_of_1000_lines_builds_and_runs(tiny_env):
    """1000 `y[i] += x[i] * j;` lines: over 5 minutes and 8.6 GB before (quadratic passes), then
    more live constants than registers; now about 20 s, and right."""
    ctx, q = tiny_env
    n = 64
    x = np.linspace(-1, 1, n).astype(np.float32)
    y = np.ones(n, np.float32)
    mf = cl.mem_flags
    yb = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=y)
    xb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    cl.Program(ctx, accumulate(1000)).build().k(q, (n,), None, yb, xb)
    got = np.empty_like(y)
    cl.enqueue_copy(q, got, yb)
    want = y.copy()
    for j in range(1000):
        want = want + x * np.float32(j)
    np.testing.assert_allclose(got, want, rtol=1e-5)
