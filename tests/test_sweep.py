"""mncl sweep (issue 27): points as Dask tasks on a LocalCluster of 2 workers, equal to the same
points run serially, cached by content, complete when a worker dies, failures recorded."""
import pathlib
import textwrap

import pytest
from click.testing import CliRunner

pytest.importorskip("dask.distributed")
pytest.importorskip("pandas")

from mncl import sweep as sw  # noqa: E402

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"

SAXPY = textwrap.dedent("""
    [[run]]
    name = "saxpy"
    kind = "opencl"
    source = "{examples}/saxpy.cl"
    global = "{{n}}"
    args = {{ x = "rand:{{n}}", y = "rand:{{n}}", a = "2.5", n = "{{n}}" }}
    reference = "cpu"

    [[run]]
    name = "hello"
    kind = "vsm"
    source = "{examples}/hello.vsm"

    [axes]
    machine = ["tiny"]
    "links.dram_l2bm.bytes_per_cycle" = [128, 256]
    n = [256, 4096]
    """)

# a python run whose worker dies the first time it runs a point (its marker file does not exist yet)
DYING = textwrap.dedent('''
    import os, pathlib

    def point(params, device):
        mark = pathlib.Path(params["marks"]) / f"{params['i']}"
        if params["i"] == 1 and not mark.exists():
            mark.write_text("died once")
            os._exit(1)                   # the worker process dies mid-sweep
        return {"cycles": params["i"] * 10, "passed": True}
    ''')


def spec_file(tmp_path, text):
    p = tmp_path / "spec.toml"
    p.write_text(text)
    return p


def comparable(rows):
    return [{k: v for k, v in r.items() if k != "wall_s"} for r in rows]


@pytest.fixture(scope="module")
def client():
    from dask.distributed import Client
    cluster = sw.local_cluster(2)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_cluster_results_equal_serial_and_a_second_sweep_is_all_cached(tmp_path, client):
    spec = spec_file(tmp_path, SAXPY.format(examples=EXAMPLES))
    serial = sw.sweep(spec, workers=0, cache=False)
    assert serial.computed == 6 and len(serial.rows) == 8       # hello does not use n: 2 emulations
    assert all(r["status"] == "ok" and r["passed"] for r in serial.rows), serial.rows
    on_dask = sw.sweep(spec, client=client, where=tmp_path / "cache")
    assert comparable(on_dask.rows) == comparable(serial.rows)
    again = sw.sweep(spec, client=client, where=tmp_path / "cache")
    assert (again.computed, again.cached) == (0, 6)
    assert comparable(again.rows) == comparable(serial.rows)
    by = {(r["run"], r["links.dram_l2bm.bytes_per_cycle"], r["n"]): r["cycles"] for r in serial.rows}
    assert by["saxpy", 256, 4096] <= by["saxpy", 128, 4096]       # more DRAM bandwidth, no slower


def test_a_changed_source_is_computed_again(tmp_path):
    kernel = tmp_path / "k.cl"
    kernel.write_text("__kernel void k(__global float *a) { a[get_global_id(0)] *= 2; }")
    spec = spec_file(tmp_path, textwrap.dedent("""
        [[run]]
        kind = "opencl"
        source = "k.cl"
        global = 64
        args = { a = "rand:64" }
        [axes]
        machine = ["tiny"]
        """))
    assert sw.sweep(spec, workers=0, where=tmp_path / "c").computed == 1
    assert sw.sweep(spec, workers=0, where=tmp_path / "c").computed == 0
    kernel.write_text("__kernel void k(__global float *a) { a[get_global_id(0)] *= 3; }")
    assert sw.sweep(spec, workers=0, where=tmp_path / "c").computed == 1


def test_a_worker_killed_mid_sweep_loses_nothing(tmp_path, client, monkeypatch):
    (tmp_path / "dying_point.py").write_text(DYING)
    monkeypatch.syspath_prepend(str(tmp_path))
    client.run(lambda p=str(tmp_path): __import__("sys").path.insert(0, p))
    marks = tmp_path / "marks"
    marks.mkdir()
    spec = spec_file(tmp_path, textwrap.dedent(f"""
        [[run]]
        name = "dying"
        kind = "python"
        entry = "dying_point:point"
        [axes]
        machine = ["tiny"]
        marks = ["{marks}"]
        i = [0, 1, 2, 3]
        """))
    result = sw.sweep(spec, client=client, cache=False)
    assert (marks / "1").exists(), result.rows                    # the worker did die
    assert [r["cycles"] for r in result.rows] == [0, 10, 20, 30]
    assert all(r["status"] == "ok" for r in result.rows)


def test_failing_points_are_recorded_and_the_sweep_goes_on(tmp_path):
    (tmp_path / "bad.cl").write_text("__kernel void k(__global float *a) { a[0] = nn; }")
    spec = spec_file(tmp_path, textwrap.dedent(f"""
        [[run]]
        name = "bad"
        kind = "opencl"
        source = "bad.cl"
        global = "64"
        args = {{ a = "rand:64" }}
        [[run]]
        name = "hello"
        kind = "vsm"
        source = "{EXAMPLES}/hello.vsm"
        [axes]
        machine = ["tiny"]
        """))
    bad, hello = sw.sweep(spec, workers=0, cache=False).rows
    assert bad["status"] == "failed" and "use of undeclared identifier 'nn'" in bad["error"]
    assert "bad.cl:1:" in bad["error"]
    assert hello["status"] == "ok" and hello["cycles"] == 16


@pytest.mark.parametrize("text, message", [
    ("[axes]\nn = [1]\n", "no [[run]] table"),
    ('[[run]]\nkind = "cuda"\n', "kind must be one of"),
    ('[[run]]\nkind = "vsm"\nsource = "nothere.vsm"\n', "cannot read"),
    (f'[[run]]\nkind = "vsm"\nsource = "{EXAMPLES}/hello.vsm"\nargs = {{ n = "{{m}}" }}\n', "{m} is not an axis"),
    (f'[[run]]\nkind = "vsm"\nsource = "{EXAMPLES}/hello.vsm"\n[axes]\n"links.dram_l2bm.speed" = [1]\n',
     "no field 'speed'"),
    (f'[[run]]\nkind = "vsm"\nsource = "{EXAMPLES}/hello.vsm"\n[axes]\nmachine = ["mncore9"]\n',
     "not a preset"),
    (f'[[run]]\nkind = "vsm"\nsource = "{EXAMPLES}/hello.vsm"\n[axes]\nn = []\n', "non-empty list"),
])
def test_bad_specs_say_what_is_wrong(tmp_path, text, message):
    with pytest.raises(sw.SpecError, match=message.replace("{", r"\{").replace("[", r"\[")):
        sw.expand(sw.load_spec(spec_file(tmp_path, text)))


def test_command_line_writes_the_table_and_the_plot(tmp_path):
    from mncl.cli import main
    spec = spec_file(tmp_path, SAXPY.format(examples=EXAMPLES))
    out, png = tmp_path / "r.csv", tmp_path / "r.png"
    r = CliRunner().invoke(main, ["sweep", str(spec), "--workers", "0", "-o", str(out), "--plot", str(png),
                                  "--no-cache"])
    assert r.exit_code == 0, r.output
    assert "8 points: 6 emulated, 0 from the cache, 0 failed" in r.output
    assert out.read_text().count("\n") == 9 and png.stat().st_size > 10_000
    r = CliRunner().invoke(main, ["sweep", str(spec), "-o", str(tmp_path / "r.xlsx")])
    assert r.exit_code == 2 and "write a .parquet or .csv file" in r.output


def test_a_point_past_the_timeout_fails_with_the_limit_in_its_error(tmp_path):
    (tmp_path / "spin.vsm").write_text(".loop %i = 0, 100000000\n    nop\n.endloop\n")
    spec = spec_file(tmp_path, '[sweep]\ntimeout = 0.5\n[[run]]\nkind = "vsm"\nsource = "spin.vsm"\n'
                               '[axes]\nmachine = ["tiny"]\n')
    row, = sw.sweep(spec, workers=0, cache=False).rows
    assert row["status"] == "failed" and "time limit of 0.5 s" in row["error"] and row["wall_s"] < 30


def test_an_npy_input_is_read_from_the_spec_folder_and_its_content_is_in_the_key(tmp_path):
    import numpy as np
    (tmp_path / "k.cl").write_text("__kernel void k(__global float *a) { a[get_global_id(0)] += 1; }")
    np.save(tmp_path / "a.npy", np.arange(64, dtype=np.float32))
    spec = spec_file(tmp_path, '[[run]]\nkind = "opencl"\nsource = "k.cl"\nglobal = 64\nargs = { a = "a.npy" }\n'
                               'reference = "cpu"\n[axes]\nmachine = ["tiny"]\n')
    first, = sw.sweep(spec, workers=0, where=tmp_path / "c").rows
    assert first["status"] == "ok" and first["passed"]
    assert sw.sweep(spec, workers=0, where=tmp_path / "c").computed == 0
    np.save(tmp_path / "a.npy", np.ones(64, dtype=np.float32))
    assert sw.sweep(spec, workers=0, where=tmp_path / "c").computed == 1


def test_local_cluster_workers_are_set_up_for_emulation(client):
    """No MALLOC_TRIM_THRESHOLD_ (Dask's default made each point 2-2.5x as long) and no profiler."""
    def setup():
        import os

        import dask
        return os.environ.get("MALLOC_TRIM_THRESHOLD_"), dask.config.get("distributed.worker.profile.enabled")
    assert set(client.run(setup).values()) == {(None, False)}
