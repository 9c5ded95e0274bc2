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
    """Counts the steps and records gc.get_freeze_count() at the first (after forcing a full
    collection there) and the last: the count walks every frozen object, so not at every step (in
    the full suite's heap that took minutes)."""
    def __init__(self, last: int):
        self.steps, self.last, self.counts = 0, last, []

    def step_executed(self, emu, step):
        self.steps += 1
        if self.steps == 1:
            gc.collect()
        if self.steps in (1, self.last):
            self.counts.append(gc.get_freeze_count())


def test_objects_alive_before_a_run_are_frozen_for_it_and_thawed_after():
    """Without it, a full collection inside a run walked every object the build left (the program, its
    plans, the compiler's caches): 30-120 ms apiece on the real kernels, over a third of atax's run."""
    before = [[] for _ in range(50_000)]                # a heap the run did not make (tracked objects)
    assert gc.get_freeze_count() == 0
    emu, obs = Emulator("tiny"), FrozenDuringRun(last=201)
    emu.subscribe(obs)
    emu.run(assemble(LOOP, "loop.vsm"))
    assert obs.steps == 201 and len(obs.counts) == 2
    assert min(obs.counts) >= len(before)                  # frozen from the first step to the last
    assert gc.get_freeze_count() == 0                      # and nothing stays frozen
    del before


def test_a_faulting_run_thaws_the_heap():
    emu = Emulator("tiny")
    with pytest.raises(EmuFault):
        emu.run(assemble(LOOP + '\n.fault "boom"\nnop', "f.vsm"))
    assert gc.get_freeze_count() == 0


def test_overlapping_runs_in_threads_thaw_once_the_last_ends():
    """Two emulators in two threads: the heap stays frozen until the last run ends.  The second run
    starts first and waits at its 100th step until the first has returned, then looks."""
    second_started, first_done, seen = threading.Event(), threading.Event(), []

    class WaitForFirst(Observer):
        steps = 0

        def step_executed(self, emu, step):
            self.steps += 1
            if self.steps == 1:
                second_started.set()
            if self.steps == 100:
                seen.append(first_done.wait(60) and gc.get_freeze_count())

    def first():
        assert second_started.wait(60)
        Emulator("tiny").run(assemble(LOOP, "loop.vsm"))
        first_done.set()

    def second():
        emu = Emulator("tiny")
        emu.subscribe(WaitForFirst())
        emu.run(assemble(LOOP, "loop.vsm"))

    threads = [threading.Thread(target=second), threading.Thread(target=first)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 1 and seen[0] > 0                  # still frozen after the first run ended
    assert gc.get_freeze_count() == 0                      # thawed once the second did
