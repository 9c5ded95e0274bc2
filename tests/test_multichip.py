"""Systems of chips on Dask (issue 27): collectives move real data between the chips' workers,
give the IEEE sums in a fixed order, and their bytes and modeled time follow the formulas;
tensor-parallel decode equals the single-chip and numpy results."""
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("dask.distributed")

from mncl.system import System, SystemSpecError, load_system  # noqa: E402

LINK = {"bytes_per_second": 1e9, "latency_s": 1e-6}
N, SIZE = 3, 999                     # parts of 333 elements


@pytest.fixture(scope="module", params=["ring", "all-to-all"])
def system(request):
    with System({"system": {"chips": N, "machine": "tiny", "topology": request.param}, "link": LINK}) as s:
        yield s


def arrays(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(SIZE).astype(np.float32) for _ in range(N)]


def test_all_reduce_is_the_sum_on_every_chip_with_the_formula_costs(system):
    xs = arrays()
    system.put("x", xs)
    rec = system.all_reduce("x")
    got = system.get("x")
    assert all(np.array_equal(got[0], g) for g in got)                    # one order of additions
    assert np.allclose(got[0], xs[0] + xs[1] + xs[2], rtol=1e-6, atol=1e-6)
    B = SIZE * 4
    assert rec.total_bytes == 2 * (N - 1) * B                              # each chip sends 2(N-1) parts of B/N
    steps = 2 * (N - 1) if system.topology == "ring" else 2
    assert rec.steps == steps
    assert rec.modeled_s == pytest.approx(steps * (LINK["latency_s"] + B / N / LINK["bytes_per_second"]))
    again = system.all_reduce("x")                                         # the same inputs, the same bits
    system.put("x", xs)
    system.all_reduce("x")
    assert np.array_equal(system.get("x")[0], got[0]) and again.total_bytes == rec.total_bytes


def test_reduce_scatter_all_gather_and_broadcast(system):
    xs = arrays(1)
    system.put("r", xs)
    rec = system.reduce_scatter("r")
    for i, g in enumerate(system.get("r")):
        lo, hi = system.part(i, SIZE)
        assert np.allclose(g[lo:hi], (xs[0] + xs[1] + xs[2])[lo:hi], rtol=1e-6, atol=1e-6)
    assert rec.total_bytes == (N - 1) * SIZE * 4
    system.put("g", xs)
    rec = system.all_gather("g")
    want = np.concatenate([xs[i][slice(*system.part(i, SIZE))] for i in range(N)])
    assert all(np.array_equal(g, want) for g in system.get("g")) and rec.total_bytes == (N - 1) * SIZE * 4
    system.put("b", xs)
    rec = system.broadcast("b", root=2)
    assert all(np.array_equal(g, xs[2]) for g in system.get("b"))
    assert rec.total_bytes == (N - 1) * SIZE * 4
    assert rec.modeled_s == pytest.approx(system.modeled("broadcast", SIZE * 4))


def test_a_chip_runs_kernels_on_its_own_emulator(system):
    def launch(chip, k):
        import mncl as cl
        prg = cl.Program(chip.ctx, "__kernel void f(__global float *a, float k)"
                                   " { a[get_global_id(0)] = k * get_global_id(0); }").build()
        buf = cl.Buffer(chip.ctx, cl.mem_flags.WRITE_ONLY, 64 * 4)
        ev = prg.f(chip.queue, (64,), None, buf, np.float32(k))
        out = np.empty(64, np.float32)
        cl.enqueue_copy(chip.queue, out, buf)
        return out, ev.stats.cycles, chip.device.name
    res = system.map(launch, [(i + 1,) for i in range(N)])
    for i, (out, cycles, name) in enumerate(res):
        assert np.array_equal(out, (i + 1) * np.arange(64, dtype=np.float32)) and cycles > 0 and "tiny" in name


@pytest.mark.parametrize("spec, message", [
    ({"system": {"chips": 0}, "link": LINK}, "chips must be a positive integer"),
    ({"system": {"chips": 2, "topology": "torus"}, "link": LINK}, "topology must be one of"),
    ({"system": {"chips": 2}, "link": {"latency_s": 0}}, "link.bytes_per_second"),
])
def test_bad_system_descriptions(spec, message):
    with pytest.raises(SystemSpecError, match=message):
        load_system(spec)


def test_tensor_parallel_decode_equals_one_chip_and_numpy():
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples" / "llm_decode"))
    import multichip
    model = multichip.MODELS["tiny"]
    x0 = np.random.default_rng(0).standard_normal(model["d"]).astype(np.float32)
    ref = multichip.reference(model, multichip.SEED, 1, x0)[0]
    one, (y1,) = multichip.decode(1, model, 1, "tiny", LINK, "ring", x0=x0)
    two, (y2,) = multichip.decode(2, model, 1, "tiny", LINK, "ring", x0=x0)
    for y in (y1, y2):
        assert np.linalg.norm(y - ref) / np.linalg.norm(ref) < 1e-5
    assert np.linalg.norm(y2 - y1) / np.linalg.norm(y1) < 1e-5
    assert one["net_s"] == 0 and two["net_s"] > 0 and two["net_bytes"] == 2 * 2 * (1 * model["d"] * 4)
    assert two["chips_s"] < one["chips_s"]                 # half the weights per chip


def test_a_chip_functions_failure_comes_back_whatever_its_exception_class(system):
    class Odd(Exception):                    # unpicklable: its __init__ takes two arguments
        def __init__(self, node, msg):
            super().__init__(msg)

    def fails(chip):
        raise Odd(None, f"broken on {chip.index}")
    from mncl.system import ChipError
    with pytest.raises(ChipError, match="chip 0: Odd: broken on 0"):
        system.map(fails)
