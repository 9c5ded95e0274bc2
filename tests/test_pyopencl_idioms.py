"""PyOpenCL demo idioms run unchanged apart from the import: each program text runs once with
``import pyopencl as cl`` (on PoCL, skipped if absent) and once with ``import mncl as cl``.

Each program leaves its results in ``result`` (a dict of numpy arrays / numbers); the two
runs are compared with each other and with numpy.
"""
import numpy as np
import pytest

try:
    from translator import compile_opencl  # noqa: F401
except ImportError:
    pytest.skip("the OpenCL C front end (translator.compile_opencl) is not available yet",
                allow_module_level=True)

ARRAY_ADDITION = '''
import numpy as np

rng = np.random.default_rng(0)
a_np = rng.random(50000).astype(np.float32)
b_np = rng.random(50000).astype(np.float32)

ctx = cl.create_some_context()
queue = cl.CommandQueue(ctx)

mf = cl.mem_flags
a_g = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a_np)
b_g = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b_np)

prg = cl.Program(ctx, """
__kernel void sum(
    __global const float *a_g, __global const float *b_g, __global float *res_g)
{
  int gid = get_global_id(0);
  res_g[gid] = a_g[gid] + b_g[gid];
}
""").build()

res_g = cl.Buffer(ctx, mf.WRITE_ONLY, a_np.nbytes)
knl = prg.sum  # Use this Kernel object for repeated calls
knl(queue, a_np.shape, None, a_g, b_g, res_g)

res_np = np.empty_like(a_np)
cl.enqueue_copy(queue, res_np, res_g)

result = {"res": res_np, "expect": a_np + b_np}
'''

SCALAR_DTYPES_TWICE = '''
import numpy as np

n = 1000
x = np.arange(n, dtype=np.float32)
ctx = cl.create_some_context()
queue = cl.CommandQueue(ctx)
mf = cl.mem_flags
x_g = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=x)

prg = cl.Program(ctx, """
__kernel void scale(__global float *x, float factor, int n)
{
  int i = get_global_id(0);
  if (i < n)
    x[i] = x[i] * factor;
}
""").build()

knl = prg.scale
knl.set_scalar_arg_dtypes([None, np.float32, np.int32])
knl(queue, (n,), None, x_g, 2.0, n)
knl(queue, (n,), None, x_g, 3.0, n - 10)

out = np.empty_like(x)
cl.enqueue_copy(queue, out, x_g)
expect = x * 2
expect[: n - 10] *= 3
result = {"res": out, "expect": expect}
'''

EVENT_PROFILING = '''
import numpy as np

n = 1 << 18
a = np.linspace(0, 1, n).astype(np.float32)
ctx = cl.create_some_context()
queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
mf = cl.mem_flags
a_g = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
out_g = cl.Buffer(ctx, mf.WRITE_ONLY, a.nbytes)

prg = cl.Program(ctx, """
__kernel void square(__global const float *a, __global float *out)
{
  int i = get_global_id(0);
  out[i] = a[i] * a[i];
}
""").build()

evt = prg.square(queue, a.shape, None, a_g, out_g)
evt.wait()
elapsed = 1e-9 * (evt.profile.end - evt.profile.start)
ordered = evt.profile.queued <= evt.profile.submit <= evt.profile.start <= evt.profile.end

out = np.empty_like(a)
copy_evt = cl.enqueue_copy(queue, out, out_g, is_blocking=False)
cl.wait_for_events([copy_evt])
result = {"res": out, "expect": a * a, "elapsed_positive": elapsed > 0, "ordered": ordered,
          "complete": evt.command_execution_status == cl.command_execution_status.COMPLETE}
'''

LOCAL_MEMORY_REDUCTION = '''
import numpy as np

n, group = 1 << 14, 128
a = (np.arange(n) % 97).astype(np.float32)
ctx = cl.create_some_context()
queue = cl.CommandQueue(ctx)
mf = cl.mem_flags
a_g = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
partial_g = cl.Buffer(ctx, mf.WRITE_ONLY, 4 * (n // group))

prg = cl.Program(ctx, """
__kernel void reduce(__global const float *a, __global float *partial, __local float *scratch)
{
  int lid = get_local_id(0);
  scratch[lid] = a[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s)
      scratch[lid] += scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0)
    partial[get_group_id(0)] = scratch[0];
}
""").build()

prg.reduce(queue, (n,), (group,), a_g, partial_g, cl.LocalMemory(4 * group))
partial = np.empty(n // group, np.float32)
cl.enqueue_copy(queue, partial, partial_g)
result = {"res": partial, "expect": a.reshape(-1, group).sum(axis=1)}
'''

PROGRAMS = {"array_addition": ARRAY_ADDITION, "scalar_dtypes_twice": SCALAR_DTYPES_TWICE,
            "event_profiling": EVENT_PROFILING, "local_memory_reduction": LOCAL_MEMORY_REDUCTION}


def run_program(text: str, module) -> dict:
    ns = {"cl": module}
    exec(compile(text, "<idiom>", "exec"), ns)
    return ns["result"]


def check(result):
    np.testing.assert_allclose(result["res"], result["expect"], rtol=1e-6)
    for k, v in result.items():
        if isinstance(v, bool):
            assert v, k


@pytest.mark.parametrize("name", PROGRAMS)
def test_idiom_runs_on_mncl(name, monkeypatch):
    monkeypatch.setenv("MNCL_DEVICE", "cpu")
    monkeypatch.delenv("MNCL_MACHINE", raising=False)
    import mncl
    check(run_program(PROGRAMS[name], mncl))


@pytest.mark.parametrize("name", PROGRAMS)
def test_idiom_matches_pyopencl_on_pocl(name, monkeypatch):
    pyopencl = pytest.importorskip("pyopencl")
    try:
        platforms = pyopencl.get_platforms()
    except pyopencl.Error:
        platforms = []
    if not any("Portable Computing Language" in p.name for p in platforms):
        pytest.skip("PoCL is not installed")
    monkeypatch.setenv("PYOPENCL_CTX", "Portable")   # PoCL even when Oclgrind is registered too
    import mncl
    ref = run_program(PROGRAMS[name], pyopencl)
    check(ref)
    ours = run_program(PROGRAMS[name], mncl)
    np.testing.assert_allclose(ours["res"], ref["res"], rtol=1e-6)
