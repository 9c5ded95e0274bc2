"""mncl.elementwise: PyOpenCL's ElementwiseKernel on MNCL's devices.

    from mncl.elementwise import ElementwiseKernel
    lin = ElementwiseKernel(ctx, "float a, float *x, float *y, float *z", "z[i] = a * x[i] + y[i]", "lin")
    lin(np.float32(2), x_arr, y_arr, z_arr)          # mncl.array.Array arguments; returns the event

The operation is C with ``i`` the element's index and ``n`` the element count (the first array
argument's size), as PyOpenCL's.  The generated kernel runs one work-item per element (``if (i <
n)``), which both devices run well; PyOpenCL's loop over a grid stride would be a strided access
the emulator's backend gathers.  ``arguments`` is a C parameter list or a list of VectorArg /
ScalarArg (mncl.tools).
"""
from __future__ import annotations

import numpy as np

from .tools import Variants, VectorArg, c_params, call_args, has_offsets, offset_prologue, parse_arg_list


def _source(name, args, operation, preamble, offsets=False) -> str:
    params = c_params(args, offsets)
    return f"""{preamble}
__kernel void {name}({params}{', ' if params else ''}long n)
{{
    {offset_prologue(args, offsets)}
    long i = get_global_id(0);
    if (i < n) {{
        {operation};
    }}
}}
"""


class ElementwiseKernel:
    """A kernel applying `operation` at every index i < n (PyOpenCL's signature)."""

    def __init__(self, context, arguments, operation, name="elwise_kernel", preamble="", options=None, **kwargs):
        self.context = context
        self.args = parse_arg_list(arguments)
        if not any(isinstance(a, VectorArg) for a in self.args):
            raise ValueError(f"ElementwiseKernel '{name}': no array argument to take the size from")
        self.name = name
        self.programs = Variants(context, lambda offsets: _source(name, self.args, operation, preamble, offsets),
                                 options)
        self.source = self.programs.source

    def __call__(self, *args, range=None, slice=None, queue=None, wait_for=None, **kwargs):
        if range is not None or slice is not None:
            raise NotImplementedError(f"ElementwiseKernel '{self.name}': range= and slice= are not supported")
        offsets = has_offsets(args)
        first, call = call_args(f"ElementwiseKernel '{self.name}'", args, self.args, offsets)
        n = first.size
        if n == 0:
            return None
        kernel = getattr(self.programs(offsets), self.name)        # (the variant taking offsets for views)
        return kernel(queue or first.queue, (n,), None, *call, np.int64(n), wait_for=wait_for)
