"""Launch examples/square_task.cl: a task kernel that moves every byte itself."""
import pathlib

import numpy as np

import mncl as cl

ctx = cl.create_some_context()
q = cl.CommandQueue(ctx)
prg = cl.Program(ctx, (pathlib.Path(__file__).parent / "square_task.cl").read_text()).build()
x = np.linspace(-4, 4, 8 * ctx.devices[0].max_compute_units, dtype=np.float32)   # 8 floats per PE
mf = cl.mem_flags
x_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
y_buf = cl.Buffer(ctx, mf.WRITE_ONLY, x.nbytes)
knl = prg.square
knl.set_args(x_buf, y_buf)
ev = cl.enqueue_task(q, knl)
y = np.empty_like(x)
cl.enqueue_copy(q, y, y_buf)
print(np.array_equal(y, x * x), ev.stats.cycles, "cycles")
