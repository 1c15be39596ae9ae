"""`dbstand run python --file bench.py`: the user's own function on dbstand's
connections, in every mode; a bad file is one line naming the file and line."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg

from dbstand.targets.managed import ServerRecord

FAST = ["--revs", "200", "--min-iterations", "2", "--max-iterations", "3", "--ci", "50",
        "--max-time", "5"]

SYNC = '''
def setup(conn):
    cur = conn.cursor()
    cur.execute("CREATE TABLE demo (id INTEGER PRIMARY KEY, hits INTEGER)")
    cur.executemany("INSERT INTO demo VALUES (?, 0)", [(i,) for i in range(1, 101)])


def operation(conn, rng):
    conn.cursor().execute("UPDATE demo SET hits = hits + 1 WHERE id = ?",
                          (rng.randint(1, 100),))


def teardown(conn):
    cur = conn.cursor()
    cur.execute("SELECT sum(hits) FROM demo")
    with open(__file__ + ".hits", "a") as f:
        f.write(f"{cur.fetchone()[0]}\\n")
    cur.execute("DROP TABLE demo")
'''

ASYNC = '''
async def setup(conn):
    await conn.execute("CREATE TABLE py_demo (id int PRIMARY KEY, hits int)")
    await conn.execute("INSERT INTO py_demo SELECT i, 0 FROM generate_series(1, 100) i")


async def operation(conn, rng):
    await conn.execute("UPDATE py_demo SET hits = hits + 1 WHERE id = $1",
                       rng.randint(1, 100))


async def teardown(conn):
    hits = await conn.fetchval("SELECT sum(hits) FROM py_demo")
    with open(__file__ + ".hits", "a") as f:
        f.write(f"{hits}\\n")
    await conn.execute("DROP TABLE py_demo")
'''


def cases(path: Path) -> list[dict]:
    return [r for r in map(json.loads, path.read_text().splitlines()) if r["type"] == "case"]


def _done(rec: dict) -> int:
    return (rec["iterations"] + rec["warmup_iterations"]) * 200


def test_sync_bench_file_in_every_mode(cli, tmp_path: Path) -> None:
    bench = tmp_path / "bench.py"
    bench.write_text(SYNC)
    out = tmp_path / "r.jsonl"
    res = cli("run", "python", "-f", str(bench), "--target", f"sqlite:///{tmp_path / 'b.db'}",
              "--mode", "sync,threads:2,processes:2", "-o", str(out), *FAST)
    assert res.code == 0, res.stderr + res.stdout
    recs = cases(out)
    assert [r["mode"] for r in recs] == ["sync", "threads:2", "processes:2"]
    hits = [int(x) for x in (tmp_path / "bench.py.hits").read_text().split()]
    for rec, n in zip(recs, hits, strict=True):
        assert rec["status"] == "ok" and rec["ops_per_s"] > 0
        assert rec["bench_file"] == str(bench)
        assert n >= _done(rec)  # one call is one operation: every update landed
        # (calibration may add a few calls beyond the counted and warm-up ones)


def test_async_bench_file_on_postgresql(cli, pg: ServerRecord, pg_url: str,
                                        tmp_path: Path) -> None:
    bench = tmp_path / "abench.py"
    bench.write_text(ASYNC)
    out = tmp_path / "r.jsonl"
    res = cli("run", "python", "-f", str(bench), "--target", pg_url, "--stack", "asyncpg",
              "--mode", "asyncio:4", "-o", str(out), *FAST)
    assert res.code == 0, res.stderr + res.stdout
    (rec,) = cases(out)
    assert rec["status"] == "ok" and rec["probes"]["statements_per_op"]
    (hits,) = [int(x) for x in (tmp_path / "abench.py.hits").read_text().split()]
    assert hits >= _done(rec)
    t = pg.target()
    with psycopg.connect(host=t.host, port=t.port, user=t.user, dbname=t.database,
                         password=pg.password) as conn:
        assert conn.execute("SELECT to_regclass('py_demo')").fetchone() == (None,)


def test_bad_bench_files_are_one_line(cli_in_process, tmp_path: Path) -> None:
    bad = {"syntax.py": ("def operation(conn, rng)\n    pass\n", "syntax.py:1: syntax error"),
           "none.py": ("x = 1\n", "none.py: no function operation(conn, rng)"),
           "args.py": ("def operation(conn):\n    pass\n", "args.py:1: operation must take 2"),
           "mixed.py": ("async def operation(conn, rng):\n    pass\n\n\ndef setup(conn):\n"
                        "    pass\n", "mixed.py:5: setup must be async def"),
           "boom.py": ("import no_such_module_here\n", "boom.py:1: importing it raised "
                                                       "ModuleNotFoundError")}
    for name, (text, message) in bad.items():
        (tmp_path / name).write_text(text)
        res = cli_in_process("run", "python", "-f", str(tmp_path / name),
                             "-o", str(tmp_path / f"{name}.jsonl"))
        assert res.code == 2 and message in res.stderr, (name, res.stderr)
        assert "Traceback" not in res.stderr
        assert not (tmp_path / f"{name}.jsonl").exists()
    # an exception inside operation: the case failed, naming file and line
    (tmp_path / "fails.py").write_text("def operation(conn, rng):\n    x = 1\n"
                                       "    conn.execute('SELECT * FROM nowhere')\n")
    out = tmp_path / "fails.jsonl"
    res = cli_in_process("run", "python", "-f", str(tmp_path / "fails.py"), "-o", str(out),
                         *FAST)
    assert res.code != 0
    (rec,) = cases(out)
    assert rec["status"] == "failed"
    assert rec["error"].endswith(f"{tmp_path / 'fails.py'}:3: OperationalError: no such "
                                 "table: nowhere")
