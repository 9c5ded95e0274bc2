"""A run keeps the heap that was alive before it out of the garbage collector's full collections
(executor.heap_frozen), and gives it back when it ends, whatever way it ends."""
from __future__ import annotations

import gc
import threading

import pytest

from emulator import Emulator, EmuFault, assemble
from emulator.observers import Observer

LOOP = ".block b\n  fvadd $lr0v $ls0v $ln0v\n.endblock\n.loop %i = 0, 200\n  .call b\n.endloop\nnop"


class FrozenDuringRun(Observer):
    """Records gc.get_freeze_count() at each step and, at the first, forces a full collection."""
    def __init__(self):
        self.counts = []

    def step_executed(self, emu, step):
        self.counts.append(gc.get_freeze_count())
        if len(self.counts) == 1:
            gc.collect()


def test_objects_alive_before_a_run_are_frozen_for_it_and_thawed_after():
    """Without it, a full collection inside a run walked every object the build left (the program, its
    plans, the compiler's caches): 30-120 ms apiece on the real kernels, over a third of atax's run."""
    before = [[] for _ in range(50_000)]                # a heap the run did not make (tracked objects)
    assert gc.get_freeze_count() == 0
    emu, obs = Emulator("tiny"), FrozenDuringRun()
    emu.subscribe(obs)
    emu.run(assemble(LOOP, "loop.vsm"))
    assert len(obs.counts) == 201
    assert min(obs.counts) >= len(before)                  # frozen at every step, even after a collection
    assert gc.get_freeze_count() == 0                      # and nothing stays frozen
    del before


def test_a_faulting_run_thaws_the_heap():
    emu = Emulator("tiny")
    with pytest.raises(EmuFault):
        emu.run(assemble(LOOP + '\n.fault "boom"\nnop', "f.vsm"))
    assert gc.get_freeze_count() == 0


def test_overlapping_runs_in_threads_thaw_once_the_last_ends():
    """Two emulators in two threads: the heap stays frozen while either runs, and thaws at the end."""
    start, during = threading.Barrier(2), []

    class Seen(Observer):
        def step_executed(self, emu, step):
            during.append(gc.get_freeze_count() > 0)

    def run():
        emu = Emulator("tiny")
        emu.subscribe(Seen())
        start.wait()
        emu.run(assemble(LOOP, "loop.vsm"))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(during) == 402 and all(during)
    assert gc.get_freeze_count() == 0
