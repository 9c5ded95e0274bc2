"""Issue 20, item 13: processes sharing the program cache; a writer killed mid-write; a lock that
cannot be removed.

The unfixed cache serialised writers with a ``lock`` file: a lock it could not remove (a directory
of that name, older than 30 s) made every build spin for ever, and a writer SIGKILLed while holding
it made every build for 30 s wait 10 s and cache nothing, its ``.tmp`` file left behind.  The cache
now needs no lock (mncl/cache.py): these tests hold it to that.
"""
import os
import signal
import time

import pytest

from .cache_child import run_child, start_child

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")

# a build that reports whether it compiled (a hit compiles nothing) and checks the result
BUILD = """
    import time
    compiles = []
    real_compile = device.backend.compile
    device.backend.compile = lambda *a: compiles.append(1) or real_compile(*a)
    t0 = time.monotonic()
    y = run(ONE)
    print("seconds", round(time.monotonic() - t0, 2))
    print("compiled", len(compiles), "result", y[:2])
"""


def entries(d):
    return sorted(p.name for p in d.iterdir() if p.suffix in (".mnclbin", ".o")) if d.exists() else []


def tmps(d):
    return sorted(p.name for p in d.iterdir() if p.name.endswith(".tmp")) if d.exists() else []


def check_build(r, compiled: int, within: float):
    assert r.returncode == 0, f"rc {r.returncode}:\n{r.stdout}\n{r.stderr[-3000:]}"
    assert f"compiled {compiled} result [1. 1.]" in r.stdout, r.stdout + r.stderr[-3000:]
    seconds = float(r.stdout.split("seconds ")[1].split()[0])
    assert seconds < within, f"the build took {seconds} s"


@pytest.mark.parametrize("age", ["fresh", "old"])
def test_a_lock_that_cannot_be_removed_blocks_nothing(tmp_path, age):
    """A directory named ``lock`` (which no unlink removes), fresh or older than any staleness bound:
    the build neither spins nor waits, and its entry is stored."""
    d = tmp_path / "cache"
    d.mkdir(mode=0o700)
    (d / "lock").mkdir()
    if age == "old":
        os.utime(d / "lock", (time.time() - 3600, time.time() - 3600))
    r = run_child(BUILD, timeout=60, MNCL_CACHE_DIR=d)
    check_build(r, compiled=1, within=5)
    assert len(entries(d)) == 2
    check_build(run_child(BUILD, timeout=60, MNCL_CACHE_DIR=d), compiled=0, within=5)


def test_read_only_cache_directory_builds_without_storing(tmp_path):
    """A cache directory that cannot be written: builds succeed and do not wait."""
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only directories")
    d = tmp_path / "cache"
    d.mkdir(mode=0o500)
    try:
        check_build(run_child(BUILD, timeout=60, MNCL_CACHE_DIR=d), compiled=1, within=5)
        assert entries(d) == []
    finally:
        d.chmod(0o700)


def test_writer_killed_mid_write(tmp_path):
    """SIGKILL a writer between writing its temporary file and renaming it into place: the next build
    does not wait, stores its entry, and no temporary file is left behind."""
    d = tmp_path / "cache"
    ready = tmp_path / "ready"
    writer = start_child(f"""
        import time
        def stuck(*a, **k):           # the writer has written its temporary file; now it hangs
            Path({str(ready)!r}).write_text("x")
            time.sleep(600)
        os.rename = os.replace = stuck
        run(ONE)
    """, MNCL_CACHE_DIR=d)
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert writer.poll() is None, writer.communicate()
            assert time.monotonic() < deadline, "the writer never reached its rename"
            time.sleep(0.05)
        assert tmps(d), "the writer should have a temporary file when it is killed"
        writer.send_signal(signal.SIGKILL)
        writer.wait(10)
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait(10)
        writer.communicate()
    assert writer.returncode == -signal.SIGKILL
    r = run_child(BUILD, timeout=60, MNCL_CACHE_DIR=d)
    check_build(r, compiled=1, within=5)
    assert len(entries(d)) == 2 and tmps(d) == [], os.listdir(d)
    check_build(run_child(BUILD, timeout=60, MNCL_CACHE_DIR=d), compiled=0, within=5)


def test_processes_sharing_a_cache(tmp_path):
    """Four processes build the same program into one empty cache at once: all succeed with the right
    result, one entry results, no temporary file stays, and a fifth process compiles nothing."""
    d = tmp_path / "cache"
    procs = [start_child(BUILD, MNCL_CACHE_DIR=d) for _ in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-3000:]
        assert "result [1. 1.]" in out, out + err[-3000:]
    assert len(entries(d)) == 2 and tmps(d) == [], os.listdir(d)
    check_build(run_child(BUILD, timeout=60, MNCL_CACHE_DIR=d), compiled=0, within=5)


def test_stale_temporary_files_are_cleaned(tmp_path):
    """Temporary files of dead writers (a pid that is gone, or older than the bound) are removed by
    the next store; a live writer's recent one is kept."""
    from mncl import cache
    d = tmp_path / "cache"
    check_build(run_child(BUILD, timeout=60, MNCL_CACHE_DIR=d), compiled=1, within=5)
    dead = f".x.mnclbin.{2 ** 22 + 12345}.00ff00ff00ff00ff.tmp"          # above pid_max: no such process
    old = f".y.mnclbin.{os.getpid()}.00ff00ff00ff00ff.tmp"
    live = f".z.mnclbin.{os.getpid()}.1234567890123456.tmp"
    format1 = f"{'e' * 64}.mnclbin.{2 ** 22 + 12345}.tmp"                 # the unfixed code's name
    for name in (dead, old, live, format1):
        (d / name).write_bytes(b"partial")
    past = time.time() - cache.STALE_TMP_S - 60
    os.utime(d / old, (past, past))
    cache.store("0" * 64, b"binary", None, str(d))
    assert tmps(d) == [live]
