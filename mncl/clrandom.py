"""mncl.clrandom: counter-based random numbers on the device (pyopencl.clrandom's shape).

    import mncl.clrandom as clrandom
    gen = clrandom.PhiloxGenerator(ctx, seed=42)
    u = gen.uniform(queue, (1000,), np.float32)          # [0, 1)
    z = gen.normal(queue, (1000,), np.float32)           # mean 0, sd 1 (Box-Muller)
    r = clrandom.rand(queue, (10,), np.float32)          # a module-wide generator

The generator is Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as
easy as 1, 2, 3", SC 2011; the Random123 library's philox4x32 with 10 rounds): work-item j of a
call encrypts the counter (offset + j as two 32-bit words, then the generator's c2, c3) under the
64-bit key and writes the four 32-bit words as four values; the offset then advances past them,
so successive calls continue the stream.  ``philox4x32_10`` below is the same function in numpy,
checked against Random123's known-answer vectors; tests compare the device's raw words with it
bit for bit.  Uniform floats take the top 24 (float) or 53 (double, from two words) bits: k 2^-24
lies in [0, 1), exactly; normals are Box-Muller on pairs of uniforms.
"""
from __future__ import annotations

import numpy as np

from .array import Array, empty
from .program import Program

M0, M1 = 0xD2511F53, 0xCD9E8D57          # Philox multipliers
W0, W1 = 0x9E3779B9, 0xBB67AE85          # Weyl key increments
ROUNDS = 10


def philox4x32_10(counter: np.ndarray, key: np.ndarray) -> np.ndarray:
    """The reference: counters (n, 4) uint32 under keys (n, 2) or (2,) uint32 -> (n, 4) uint32."""
    c = np.array(counter, np.uint64).reshape(-1, 4) & 0xFFFFFFFF
    k = np.broadcast_to(np.array(key, np.uint64) & 0xFFFFFFFF, (c.shape[0], 2)).copy()
    for r in range(ROUNDS):
        if r:
            k[:, 0] = (k[:, 0] + W0) & 0xFFFFFFFF
            k[:, 1] = (k[:, 1] + W1) & 0xFFFFFFFF
        p0, p1 = M0 * c[:, 0], M1 * c[:, 2]
        c = np.stack([(p1 >> 32) ^ c[:, 1] ^ k[:, 0], p1 & 0xFFFFFFFF,
                      (p0 >> 32) ^ c[:, 3] ^ k[:, 1], p0 & 0xFFFFFFFF], axis=1)
    return c.astype(np.uint32)


SOURCE = f"""
#define ROUNDS {ROUNDS}

/* Philox4x32-10 of counter c under key (k0, k1) */
void philox(uint c[4], uint k0, uint k1)
{{
    for (int r = 0; r < ROUNDS; r++) {{
        if (r > 0) {{
            k0 += 0x{W0:08X}u;
            k1 += 0x{W1:08X}u;
        }}
        uint hi0 = mul_hi(0x{M0:08X}u, c[0]), lo0 = 0x{M0:08X}u * c[0];
        uint hi1 = mul_hi(0x{M1:08X}u, c[2]), lo1 = 0x{M1:08X}u * c[2];
        uint n0 = hi1 ^ c[1] ^ k0, n2 = hi0 ^ c[3] ^ k1;
        c[0] = n0;
        c[1] = lo1;
        c[2] = n2;
        c[3] = lo0;
    }}
}}

/* four words per work-item: counter (offset + j, its high word, c2, c3) */
__kernel void philox_bits(__global uint *out, long n, ulong offset, uint c2, uint c3, uint k0, uint k1)
{{
    long j = get_global_id(0);
    ulong ctr = offset + (ulong)j;
    uint c[4] = {{(uint)ctr, (uint)(ctr >> 32), c2, c3}};
    philox(c, k0, k1);
    for (int q = 0; q < 4; q++)
        if (4 * j + q < n)
            out[4 * j + q] = c[q];
}}

__kernel void uniform_f(__global const uint *bits, __global float *out, long n, float a, float b)
{{
    long i = get_global_id(0);
    if (i < n)
        out[i] = a + (b - a) * ((float)(bits[i] >> 8) * 0x1p-24f);
}}

/* Box-Muller on the pair (2m, 2m+1): u1 in (0, 1], u2 in [0, 1) */
__kernel void normal_f(__global const uint *bits, __global float *out, long n, float mu, float sigma)
{{
    long m = get_global_id(0);
    if (2 * m < n) {{
        float u1 = ((float)(bits[2 * m] >> 8) + 1.0f) * 0x1p-24f;
        float u2 = (float)(bits[2 * m + 1] >> 8) * 0x1p-24f;
        float r = sqrt(-2.0f * log(u1));
        out[2 * m] = mu + sigma * r * cos(6.2831853f * u2);
        if (2 * m + 1 < n)
            out[2 * m + 1] = mu + sigma * r * sin(6.2831853f * u2);
    }}
}}
"""


class PhiloxGenerator:
    """Philox4x32-10 streams on a context (pyopencl.clrandom.PhiloxGenerator's constructor)."""

    def __init__(self, context, key=None, counter=None, seed=None):
        self.context = context
        if key is None:
            rng = np.random.default_rng(seed)
            key = rng.integers(0, 2 ** 32, 2, dtype=np.uint64)
        self.key = [int(k) & 0xFFFFFFFF for k in key]
        counter = [0, 0, 0, 0] if counter is None else [int(c) & 0xFFFFFFFF for c in counter]
        self.offset = counter[0] | counter[1] << 32
        self.c2, self.c3 = counter[2], counter[3]
        self.program = Program(context, SOURCE).build()

    def _bits(self, queue, n: int) -> Array:
        out = empty(queue, (max(n, 1),), np.uint32)
        items = -(-n // 4)
        if items:
            self.program.philox_bits(queue, (items,), None, out.data, np.int64(n), np.uint64(self.offset),
                                     np.uint32(self.c2), np.uint32(self.c3), np.uint32(self.key[0]),
                                     np.uint32(self.key[1]))
        self.offset = (self.offset + items) & ((1 << 64) - 1)
        return out

    def random_bits(self, queue, shape) -> Array:
        """Raw 32-bit words of the stream, as an Array of uint32."""
        n = int(np.prod(shape))
        return self._bits(queue, n).reshape(shape) if n else empty(queue, shape, np.uint32)

    def uniform(self, queue, shape, dtype=np.float32, a=0.0, b=1.0, **kwargs) -> Array:
        out, n = self._floats(queue, shape, dtype)
        if n:
            bits = self._bits(queue, n)
            self.program.uniform_f(queue, (n,), None, bits.data, out.data, np.int64(n), np.float32(a), np.float32(b))
        return out

    def normal(self, queue, shape, dtype=np.float32, mu=0.0, sigma=1.0, **kwargs) -> Array:
        out, n = self._floats(queue, shape, dtype)
        if n:
            bits = self._bits(queue, n + (n & 1))
            self.program.normal_f(queue, (-(-n // 2),), None, bits.data, out.data, np.int64(n),
                                  np.float32(mu), np.float32(sigma))
        return out

    @staticmethod
    def _floats(queue, shape, dtype) -> tuple:
        """(the output Array, its size) of uniform / normal, which make float32 so far."""
        if np.dtype(dtype) != np.float32:
            raise NotImplementedError("mncl.clrandom: float32 so far")
        out = empty(queue, shape, np.float32)
        return out, out.size


_generators = {}


def _default(context) -> PhiloxGenerator:
    g = _generators.get(id(context))
    if g is None or g.context is not context:
        g = _generators[id(context)] = PhiloxGenerator(context, seed=0)
    return g


def rand(queue, shape, dtype=np.float32, luxury=None, a=0.0, b=1.0) -> Array:
    """Uniform values in [a, b) from the context's default generator (seed 0)."""
    return _default(queue.context).uniform(queue, shape, dtype, a, b)


def fill_rand(result: Array, queue=None, luxury=None, a=0.0, b=1.0) -> None:
    """result's elements replaced by uniform values in [a, b)."""
    r = rand(queue or result.queue, result.shape, result.dtype, a=a, b=b)
    result._into(r)
