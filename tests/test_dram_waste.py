"""Bytes that cross DRAM for nothing: a uniform table's prefetch past the buffer's last block, and
the store tag's first transfer (which only gives the first wait something to wait for).  Each
launch's DRAM bytes are the machine's own counts (Counters, dram_l2bm.*), checked exactly."""
import numpy as np

from emulator_harness import device_env, launch

TABLE = """
__kernel void scaled_sum(__global const float *x, __global float *y, int n)
{
    int i = get_global_id(0);
    float s = 0.0f;
    for (int j = 0; j < n; j++)
        s += x[j] * (float)(i + 1);
    y[i] = s;
}
"""

ARG_BLOCK = 512        # the argument block, broadcast to every group (abi.ARG_LONGS long words)


def test_a_table_walk_moves_its_blocks_once_and_no_block_past_the_buffer():
    """x[j] in the loop is a table of the widened copy (a long word per element), 64 long words a
    block; fetching block b starts block b + 1's MV, but the last block starts none."""
    n, items = 1024, 512
    x = np.arange(n, dtype=np.float32) % 7
    (_, y), ev = launch(device_env("mncore2", new=True), TABLE, "scaled_sum", items, x,
                        np.zeros(items, np.float32), np.int32(n))
    np.testing.assert_array_equal(y, x.sum(dtype=np.float64) * np.arange(1, items + 1, dtype=np.float32))
    assert ev.stats.bytes_by_link["dram_l2bm.broadcast"] == ARG_BLOCK + 8 * n


def test_the_store_tag_is_first_used_without_dram_bytes():
    """y's shares go up under the store tag, whose first transfer comes from PDM: the launch reads
    nothing from DRAM but x's tables and the argument block."""
    n, items = 64, 4096
    x = np.ones(n, np.float32)
    (_, y), ev = launch(device_env("mncore2", new=True), TABLE, "scaled_sum", items, x,
                        np.zeros(items, np.float32), np.int32(n))
    np.testing.assert_array_equal(y, n * np.arange(1, items + 1, dtype=np.float32))
    links = ev.stats.bytes_by_link
    assert links.get("dram_l2bm.down", 0) == 0, links
    assert links["dram_l2bm.up"] == 4 * items


GATHER = """
__kernel void pick(__global const float *a, __global const int *idx, __global float *o)
{
    int i = get_global_id(0);
    o[i] = a[idx[i]];
}
"""


def test_a_gather_of_a_short_buffer_moves_its_chunks_not_a_stripe():
    """A gather's MV from DRAM is as long as the chunks of the stripe that lie inside the buffer
    (Memory.by_chunks over chunks_in): in a full wave of mncore2 a 1 KiB table moves one 4 KiB
    chunk, not the 32 KiB stripe that is a group's share of the wave."""
    n, items = 256, 32768
    a = np.arange(n, dtype=np.float32) * 0.5
    idx = (np.arange(items, dtype=np.int32) * 7) % n
    (_, _, o), ev = launch(device_env("mncore2", new=True), GATHER, "pick", items, a, idx,
                           np.zeros(items, np.float32))
    np.testing.assert_array_equal(o, a[idx])
    links = ev.stats.bytes_by_link
    assert links["dram_l2bm.broadcast"] - ARG_BLOCK == 4096, links      # a's one chunk, from its copy in group 0
