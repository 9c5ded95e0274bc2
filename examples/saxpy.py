"""examples/saxpy.cl from Python: `import mncl as cl` where a PyOpenCL script has `import pyopencl as cl`."""
import pathlib

import numpy as np

import mncl as cl

ctx = cl.create_some_context()                   # the emulator device; MNCL_DEVICE=cpu for the CPU
q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
n = 100_000
rng = np.random.default_rng(0)
x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
mf = cl.mem_flags
x_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
y_buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=y)
prg = cl.Program(ctx, (pathlib.Path(__file__).parent / "saxpy.cl").read_text()).build()
ev = prg.saxpy(q, (n,), None, x_buf, y_buf, np.float32(2.5), np.int32(n))
out = np.empty_like(y)
cl.enqueue_copy(q, out, y_buf)
print("max error", np.abs(out - (np.float32(2.5) * x + y)).max(), "|", ev.profile.end - ev.profile.start, "ns emulated")
