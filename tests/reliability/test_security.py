"""Issue 20, items 1 and 2: the program cache runs nothing it did not write itself, and ``#include``
reads only regular text files of bounded size and never echoes a host file into the build log.

Each probe runs in a child process (cache_child.py) with a time and memory limit: on the unfixed
code a planted entry ran ``system``, ``/dev/zero`` ate memory and a FIFO hung.
"""
import os
import stat

import pytest

from .cache_child import run_child

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX permissions and FIFOs")


def assert_clean_exit(r, *expect_out):
    assert r.returncode == 0, f"the child failed (rc {r.returncode}):\n{r.stdout}\n{r.stderr[-3000:]}"
    for e in expect_out:
        assert e in r.stdout, f"{e!r} not in the child's output:\n{r.stdout}\n{r.stderr[-3000:]}"


# -- item 1: the cache ------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["binary", "forged-header", "symlink"])
def test_planted_cpu_entry_never_runs(tmp_path, how):
    """An entry someone else wrote, holding IR that calls system(), is refused with a warning
    and the program rebuilt: the command does not run and the result is right."""
    marker = tmp_path / "pwned"
    r = run_child(f"""
        run(TWO)                                  # the cache directory and its key file exist
        planted = dump_module(calling_system(ONE, {str(marker)!r}))
        path = entry(ONE) + ".mnclbin"
        if {how!r} == "binary":
            Path(path).write_bytes(planted)
        elif {how!r} == "forged-header":
            Path(path).write_bytes(b"MNCL-CACHE 2\\n" + os.urandom(32) + planted)
        else:
            Path({str(tmp_path / "elsewhere")!r}).write_bytes(planted)
            os.symlink({str(tmp_path / "elsewhere")!r}, path)
        print("result", run(ONE)[:4])
        print("again", run(ONE)[:4])                  # the rebuilt entry is used
    """, MNCL_CACHE_DIR=tmp_path / "cache")
    assert not marker.exists(), "the planted entry ran system()"
    assert_clean_exit(r, "result [1. 1. 1. 1.]", "again [1. 1. 1. 1.]")
    assert "CacheWarning" in r.stderr and ("integrity check" in r.stderr or "opened safely" in r.stderr)
    assert r.stderr.count("CacheWarning") == 1, r.stderr


def test_entries_are_tied_to_their_key(tmp_path):
    """A genuine entry of one program put under another program's key is not used for it."""
    r = run_child("""
        import shutil
        print("one", run(ONE)[:2])
        for ext in (".mnclbin", ".o"):
            shutil.copy(entry(ONE) + ext, entry(TWO) + ext)
        print("two", run(TWO)[:2])
    """, MNCL_CACHE_DIR=tmp_path / "cache")
    assert_clean_exit(r, "one [1. 1.]", "two [2. 2.]")


def test_tampered_emulator_entry_is_rebuilt(tmp_path):
    """On the emulator device a tampered entry (two kernels' code swapped, checksum fixed up) gave
    silently wrong results; it is now refused and rebuilt."""
    r = run_child("""
        import hashlib, json
        SRC = '''__kernel void k(__global float *y) { y[get_global_id(0)] = 3.0f; }
                 __kernel void other(__global float *y) { y[get_global_id(0)] = 4.0f; }'''
        print("first", run(SRC)[:2])
        path = entry(SRC) + ".o"
        data = Path(path).read_bytes()
        doc = json.loads(data[data.index(b'{"format"'):])
        names = [kb["name"] for kb in doc["kernels"]]
        for kb in doc["kernels"]:
            kb["name"] = names[1 - names.index(kb["name"])]
        obj = json.dumps(doc).encode()
        Path(path).write_bytes(hashlib.sha256(obj).digest() + obj)
        print("second", run(SRC)[:2])
    """, MNCL_CACHE_DIR=tmp_path / "cache", MNCL_DEVICE="emulator", MNCL_MACHINE="tiny")
    assert_clean_exit(r, "first [3. 3.]", "second [3. 3.]")


def test_corrupt_entries_are_rebuilt_never_abort(tmp_path):
    """Truncations, bit flips and garbage with a valid old-style checksum in either file: every
    build succeeds with the right result (no "LLVM ERROR" abort, no failed launch)."""
    r = run_child("""
        import hashlib, random
        rng = random.Random(20)
        ok = 0
        for trial in range(24):
            assert run(ONE)[0] == 1.0
            ext = (".mnclbin", ".o")[trial % 2]
            path = entry(ONE) + ext
            data = bytearray(Path(path).read_bytes())
            kind = trial // 2 % 4
            if kind == 0:
                data = data[:rng.randrange(len(data))]
            elif kind == 1:
                for _ in range(4):
                    data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
            elif kind == 2:
                junk = bytes(rng.randrange(256) for _ in range(256))
                data = hashlib.sha256(junk).digest() + junk
            else:
                junk = b"\\x7fELF\\x02\\x01\\x01" + bytes(rng.randrange(256) for _ in range(512))
                data = hashlib.sha256(junk).digest() + junk
            Path(path).write_bytes(bytes(data))
            ok += run(ONE)[0] == 1.0
        print("ok", ok)
    """, MNCL_CACHE_DIR=tmp_path / "cache", PYTHONWARNINGS="ignore")
    assert_clean_exit(r, "ok 24")


def test_cache_directory_is_private_and_checked(tmp_path):
    """The directory is created 0700 with a 0600 key file; entries are written 0600."""
    r = run_child("print(run(ONE)[0])", MNCL_CACHE_DIR=tmp_path / "new" / "cache")
    assert_clean_exit(r, "1.0")
    d = tmp_path / "new" / "cache"
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    files = list(d.iterdir())
    assert len([f for f in files if f.suffix in (".mnclbin", ".o")]) == 2
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files), [oct(f.stat().st_mode) for f in files]


@pytest.mark.parametrize("damage", ["world-writable", "group-writable", "other-owner"])
def test_unsafe_cache_directory_is_refused(tmp_path, damage):
    """A directory others can write to (or that someone else owns) is not used at all: one warning
    says why, a planted entry in it does not run, and nothing is written there."""
    if damage == "other-owner" and os.geteuid() != 0:
        pytest.skip("needs root to give the directory to another user")
    marker = tmp_path / "pwned"
    shared = tmp_path / "shared"
    r = run_child(f"""
        os.environ["MNCL_CACHE_DIR"] = {str(tmp_path / "setup")!r}
        planted = dump_module(calling_system(ONE, {str(marker)!r}))
        name = os.path.basename(entry(ONE)) + ".mnclbin"
        os.mkdir({str(shared)!r})
        Path({str(shared)!r}, name).write_bytes(planted)
        if {damage!r} == "other-owner":
            os.chown({str(shared)!r}, 65534, 65534)
        os.chmod({str(shared)!r}, {{"world-writable": 0o777, "group-writable": 0o770}}.get({damage!r}, 0o755))
        os.environ["MNCL_CACHE_DIR"] = {str(shared)!r}
        print("result", run(ONE)[:2])
        print("files", sorted(os.listdir({str(shared)!r})) == [name])
    """)
    assert not marker.exists(), "an entry in an unsafe directory ran"
    assert_clean_exit(r, "result [1. 1.]", "files True")
    why = "owned by uid 65534" if damage == "other-owner" else "writable by group or others"
    assert "CacheWarning" in r.stderr and why in r.stderr and "building without the cache" in r.stderr


def test_temporary_names_are_unpredictable_and_never_followed(tmp_path):
    """Symbolic links planted at the names the unfixed code wrote to (<entry>.<pid>.tmp) are not
    followed: the file they point to is untouched."""
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    r = run_child(f"""
        os.makedirs(cache.cache_dir(), mode=0o700, exist_ok=True)
        for ext in (".mnclbin", ".o"):
            os.symlink({str(victim)!r}, f"{{entry(ONE)}}{{ext}}.{{os.getpid()}}.tmp")
        print("result", run(ONE)[:2])
        print("result", run(ONE)[:2])
    """, MNCL_CACHE_DIR=tmp_path / "cache")
    assert_clean_exit(r, "result [1. 1.]")
    assert victim.read_text() == "precious\n"


@pytest.mark.parametrize("what", ["extern", "asm", "global"])
def test_cpu_device_refuses_ir_calling_outside_the_runtime(tmp_path, what):
    """A program binary (no cache involved) whose IR declares system() or holds inline assembly is
    refused at build time with a message naming it."""
    marker = tmp_path / "pwned"
    r = run_child(f"""
        m = calling_system(ONE, {str(marker)!r})
        if {what!r} == "asm":
            m = compiled(ONE)
            m.llvm_ir = m.llvm_ir.replace("entry:\\n", 'entry:\\n  call void asm sideeffect "nop", ""()\\n', 1)
        if {what!r} == "global":
            m = compiled(ONE)
            m.llvm_ir = (m.llvm_ir.replace("entry:\\n", "entry:\\n  %e = load ptr, ptr @environ\\n", 1)
                         + "@environ = external global ptr\\n")
        try:
            prg = cl.Program(ctx, [device], [dump_module(m)]).build()
            y = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 64)
            prg.k(queue, (16,), None, y)
            queue.finish()
            print("ran")
        except cl.Error as e:
            print("refused", e)
    """, MNCL_CACHE="0")
    assert not marker.exists()
    assert_clean_exit(r, "refused")
    assert {"extern": "external function 'system'", "asm": "inline assembly",
            "global": "external variable 'environ'"}[what] in r.stdout


# -- item 2: #include --------------------------------------------------------------------------
KERNEL = '#include {}\n__kernel void k(__global float *y) {{ y[get_global_id(0)] = N; }}\n'


@pytest.fixture
def build_log(monkeypatch):
    """The build log of a kernel that includes ``include`` ("BUILT" if it builds), in this process:
    for regular files only (what could hang runs in a child, below)."""
    import mncl as cl
    monkeypatch.setenv("MNCL_CACHE", "0")
    monkeypatch.delenv("MNCL_INCLUDE_ROOTS", raising=False)
    ctx = cl.create_some_context()

    def build(include, *options, roots=None):
        if roots is not None:
            monkeypatch.setenv("MNCL_INCLUDE_ROOTS", roots)
        try:
            cl.Program(ctx, KERNEL.format(include)).build(options=list(options))
            return "BUILT"
        except cl.Error as e:
            return str(e)
        finally:
            monkeypatch.delenv("MNCL_INCLUDE_ROOTS", raising=False)
    return build


def test_include_of_proc_environ_is_refused_and_not_echoed(build_log, monkeypatch):
    monkeypatch.setenv("MNCL_CANARY_VALUE", "s3cr3t-canary")
    log = build_log('"/proc/self/environ"')
    assert "'/proc/self/environ': it is under /proc, not a source file" in log
    assert "s3cr3t-canary" not in log


@pytest.mark.parametrize("name", ["/dev/zero", "fifo", "directory"])
def test_include_of_a_device_fifo_or_directory_fails_at_once(tmp_path, name):
    """In a child: on the unfixed code /dev/zero ate memory and a FIFO blocked for ever."""
    if name == "fifo":
        os.mkfifo(tmp_path / "fifo.h")
        inc, why = f'"{tmp_path / "fifo.h"}"', "not a regular file (a FIFO)"
    elif name == "directory":
        (tmp_path / "dir.h").mkdir()
        inc, why = f'"{tmp_path / "dir.h"}"', "not a regular file (a directory)"
    else:
        inc, why = '"/dev/zero"', "is under /dev"
    r = run_child(f"""
        try:
            cl.Program(ctx, {KERNEL.format(inc)!r}).build()
            print("BUILT")
        except cl.Error as e:
            print(e)
    """, timeout=60, MNCL_CACHE="0")
    assert_clean_exit(r, why)


def test_include_size_cap_and_long_lines_are_not_echoed(build_log, tmp_path):
    from translator.sourcefile import MAX_INCLUDE_BYTES
    (tmp_path / "huge.h").write_bytes(b"x" * (MAX_INCLUDE_BYTES + 1))
    log = build_log('"huge.h"', "-I", str(tmp_path))
    assert f"it has {MAX_INCLUDE_BYTES + 1} bytes; an included file may have at most {MAX_INCLUDE_BYTES}" in log
    assert len(log) < 1000
    # a file under the cap that is one long line of garbage: the log quotes a bounded piece of it
    (tmp_path / "long.h").write_text("#define N 1\n" + "int q = " + "zz$" * 100000 + ";\n")
    log = build_log('"long.h"', "-I", str(tmp_path))
    assert "long.h:2:" in log and len(log) < 3000, log[:3000]
    (tmp_path / "bin.h").write_bytes(b"#define N 1\n\0\0\0")
    assert "it contains NUL bytes: it is not a text file" in build_log('"bin.h"', "-I", str(tmp_path))


def test_include_search_and_mncl_include_roots(build_log, tmp_path):
    """-I works as gcc's; MNCL_INCLUDE_ROOTS confines includes to its directories (no absolute
    names, nothing that resolves outside them, symbolic links included)."""
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "n.h").write_text("#define N 7\n")
    (tmp_path / "outside.h").write_text("#define N 8\n")
    os.symlink(tmp_path / "outside.h", inc / "link.h")
    assert build_log("<n.h>", "-I", str(inc)) == "BUILT"
    assert build_log('"link.h"', "-I", str(inc)) == "BUILT"
    assert build_log('"n.h"', "-I", str(inc), roots=str(inc)) == "BUILT"
    outside = "outside the directories MNCL_INCLUDE_ROOTS allows"
    assert "absolute include paths are not allowed" in build_log(f'"{inc / "n.h"}"', roots=str(inc))
    assert outside in build_log('"outside.h"', "-I", str(tmp_path), roots=str(inc))
    assert outside in build_log('"link.h"', "-I", str(inc), roots=str(inc))
    assert outside in build_log('"../outside.h"', "-I", str(inc), roots=str(inc))
    assert outside in build_log('"n.h"', "-I", str(inc), roots="")        # set and empty: mncl.h only
    assert build_log('<mncl.h>\n#define N 1', roots="") == "BUILT"
