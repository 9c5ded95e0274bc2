"""CPU time of a build step, for the tests that guard against a pass going quadratic again.

The suite's process holds millions of objects by the time these tests run, and every full
collection during the timed call walks all of them: on a shared 2-core CI machine that took an
FFT build that costs 2.6 s alone to 10 s. So the heap that exists before the call is frozen out
of the collector (the call's own garbage is still collected), and a call over its bound is timed
once more before it counts, so one burst of contention does not fail the suite."""
import gc
import time


def cpu_seconds(fn, bound: float) -> float:
    """The process CPU seconds fn() takes, the lesser of two tries when the first passes `bound`."""
    gc.collect()
    gc.freeze()
    try:
        best = float("inf")
        for _ in range(2):
            t = time.process_time()
            fn()
            best = min(best, time.process_time() - t)
            if best < bound:
                break
        return best
    finally:
        gc.unfreeze()
