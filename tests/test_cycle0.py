"""In a wave narrowed 4 or 8 times every work-item is in cycle 0 (layout.item_of_slot), and ALU
and MAU ops read their general registers at cycle 0 (translator/backend/cycle0.py), so that the
emulator computes one cycle where it computed four.  What decides which slots live (the slot
numbers, in_wave, the live-lane masks), packing's passes, T-indirect data and moves between PEs
keep their four cycles; results stay numpy's."""
import re

import numpy as np
import pytest

import translator
from emulator.machine import load_machine
from emulator_harness import device_env, launch
from translator.backend import compile_kernel

KERNEL = """
__kernel void k(__global const float *x, __global const int *idx, __global float *y, __global int *hits,
                int n, int spin)
{
    int i = get_global_id(0);
    float v = x[i] * 2.0f + 1.0f;
    int t = i % spin;                              /* per-lane trip counts: an any-reduction */
    while (t > 0) { v = v * 0.5f + x[t]; t--; }
    if (i < n) y[i] = v + x[idx[i]];               /* gathered */
    if (i % 7 == 0) hits[idx[i]] = i;              /* scattered, one writer an element */
}
"""


def asm(mode):
    mod = translator.compile_opencl(KERNEL, spmd=True)
    return compile_kernel(mod, "k", load_machine("mncore2"), mode).asm


def computing_lines(text):
    return [ln.split("#")[0] for ln in text.splitlines()
            if re.match(r"\s+[a-z]", ln) and not re.match(r"\s+(l1bm|l2bm|mv|wait|nop|\.)", ln)]


def test_a_narrowed_wave_reads_general_registers_at_cycle_0():
    narrow, full = asm("1d-n8"), asm("1d")
    at0 = lambda text: sum(len(re.findall(r"\$l[rs]\d+\b(?!v)", ln)) for ln in computing_lines(text))
    assert at0(full) < 10                  # (a full wave's ops read vectors: explicit cycle forms only)
    assert at0(narrow) > 100, at0(narrow)


def test_the_slot_numbers_keep_their_four_cycles():
    """The slot numbers are made cycle by cycle (`imm c $lr<a>v/<cycle c>`): whatever reads them
    reads the vector, so in_wave still tells the empty slots of cycles 1..3."""
    lines = asm("1d-n8").splitlines()
    at = next(k for k, ln in enumerate(lines) if re.search(r"imm 3 \$l[rs]\d+v/0001", ln))
    slot = re.search(r"imm 3 (\$l[rs]\d+)v/0001", lines[at]).group(1)
    first = next(ln for ln in lines[at + 1:] if re.search(re.escape(slot) + r"v?\b", ln.split("#")[0]))
    assert slot + "v" in first, first


@pytest.mark.parametrize("g", [100, 4095, 8000])
def test_narrowed_kernels_with_loops_gathers_and_scatters_match_numpy(g):
    """4095 and 100 work-items run narrowed 8 times, 8000 four times; dead slots must neither
    count in the loop's any-reduction nor scatter."""
    rng = np.random.default_rng(g)
    x = rng.uniform(-1, 1, g + 8).astype(np.float32)
    idx = rng.permutation(g).astype(np.int32)
    n, spin = g - g // 5, 6
    (_, _, y, hits), _ = launch(device_env("mncore2"), KERNEL, "k", g, x, idx, np.zeros(g, np.float32),
                          np.full(g, -1, np.int32), np.int32(n), np.int32(spin))
    i = np.arange(g)
    v = (x[:g] * np.float32(2) + np.float32(1)).astype(np.float32)
    for j in range(spin - 1, 0, -1):
        live = (i % spin) >= j
        v = np.where(live, (v * np.float32(0.5) + x[j]).astype(np.float32), v)
    want = np.zeros(g, np.float32)
    want[:n] = (v + x[idx])[:n]
    np.testing.assert_array_equal(y, want)
    want_hits = np.full(g, -1, np.int32)
    want_hits[idx[::7]] = i[::7]
    np.testing.assert_array_equal(hits, want_hits)
