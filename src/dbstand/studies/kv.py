"""Study kv (seed 004): Tarantool connectors, sync, coroutines, threads, processes.

The seed's PHP connectors become Python's: tarantool-python (pure Python, sync) and
asynctnt (Cython, asyncio), each through the binary protocol and SQL, on a managed
Tarantool with the seed's settings (memtx, WAL off, 1 MiB read-ahead, temporary
space). Modes as the seed's: sync, coroutines (two event loops standing in for its
two coroutine runtimes), threads, two processes of coroutines, with the sweeps that
find the best coroutine and thread counts. The seed published charts only, so the
comparison is of its claims and its settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbstand.network.rtt import DIRECT, path_of
from dbstand.report.model import Block, Column, Table
from dbstand.results.store import ResultsFile
from dbstand.studies.base import Study, StudyOptions, ok, started, throughput
from dbstand.studies.claims import Judged, Outcome
from dbstand.studies.verdict import REPRODUCED, Estimate, combine, judge, ratio

#: the stand-ins for the seed's connectors (stack names, each named after its driver):
#: the pure-Python one and the C-level one
PURE_STACK, C_LEVEL_STACK = STACKS = ("tarantool", "asynctnt")
SYNC_MODES = ["sync", "threads:16"]
ASYNC_MODES = ["asyncio:1", "asyncio:25", "processes:2xasyncio:25"]
LOOPS = ["asyncio", "uvloop"]
#: quick: two ops, 2,000 operations an iteration, no pause, a short cap
QUICK = {"ops": ["select", "update"], "revs": 2_000, "pause_s": 0.0, "max_iterations": 10,
         "max_time_s": 8.0, "asyncio_sweep": [2, 5, 10, 50, 100], "threads_sweep": [1, 2, 4, 8, 32]}
#: full: every op, the seed's 10,000 revolutions and 1 s pause, the default sweeps; a cap
#: of 60 iterations (pyperf's default count of values): two client processes and the
#: server on two CPUs vary by about 10% an iteration, and need 40-50 to narrow to ±3%
FULL = {"ops": ["select", "insert", "update", "upsert", "replace", "delete"], "revs": 10_000,
        "pause_s": 1.0, "max_iterations": 60, "max_time_s": 120.0,
        "asyncio_sweep": [2, 5, 10, 50, 100], "threads_sweep": [1, 2, 4, 8, 32]}
BASELINE = "tarantool[binary]@sync"
#: the RTTs select runs again at (plus the proxy alone), and the coroutine mode it runs in
RTTS = "0.2ms,1ms"
RTT_ASYNC = "asyncio:25"
ROWS = 10_000



def _label(record: dict[str, Any]) -> str:
    from dbstand.workloads.kv.table import stack_label

    return stack_label(record)


def _loop(record: dict[str, Any]) -> str:
    from dbstand.workloads.kv.table import loop_of

    return loop_of(record)


def find(records: list[dict[str, Any]], selector: Mapping[str, Any],
         op: str) -> dict[str, Any] | None:
    """The measured case a claim's side names: stack label, mode, loop (asyncio modes:
    the default loop unless named), op."""
    for r in loopback(ok(records)):
        if r.get("op") != op or _label(r) != selector["stack"] or \
                r.get("mode") != selector["mode"]:
            continue
        loop = _loop(r)
        if loop and loop != selector.get("loop", "asyncio"):
            continue
        return r
    return None


def loopback(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The cases on the direct path: the claims are judged there (the RTT runs are
    shown beside them, docs/network.md)."""
    return [r for r in records if (r.get("params") or {}).get("db_rtt") in (None, DIRECT)]


def pins_of(records: list[dict[str, Any]]) -> str:
    for r in records:
        pin = ((r.get("environment") or {}).get("server") or {}).get("cpu_pinning") or {}
        if pin.get("enabled"):
            return f"{pin.get('client_cpus')}, server CPU {pin.get('server_cpus')}"
    return "-"


def estimate(record: dict[str, Any]) -> Estimate:
    from dbstand.workloads.kv.table import bimodal_of

    return throughput(record, shaky=bimodal_of(record) is not None)


class KvStudy(Study):
    name = "kv"
    quick_plan, full_plan = QUICK, FULL

    def describe(self, quick: bool) -> str:
        p = self.plan(quick)
        return (f"a Tarantool started for the study (memtx, wal_mode none, readahead 1 MiB, "
                f"temporary space, {ROWS:,} rows); tarantool-python ({', '.join(SYNC_MODES)}) "
                f"and asynctnt ({', '.join(ASYNC_MODES)}, on asyncio and uvloop), binary and "
                f"SQL; sweeps asyncio:{','.join(map(str, p['asyncio_sweep']))} and "
                f"threads:{','.join(map(str, p['threads_sweep']))} of the binary protocol; "
                f"ops {', '.join(p['ops'])}; {p['revs']:,} operations an iteration, "
                f"{p['pause_s']:g} s pause, dbstand's 95% CI stop rule (±3%, at most "
                f"{p['max_iterations']} iterations, warm-up until two iterations agree); "
                "CPU placement: every case, sync and concurrent alike, by the one "
                "placement table (client and Tarantool on one CPU; docs/placement.md; "
                "`--pin-cpus separate`: one each, `--no-pin`: none pinned); select again, sync and "
                f"{RTT_ASYNC}, through a managed Toxiproxy at RTT 0 (the proxy alone), "
                f"{RTTS.replace(',', ' and ')} (docs/network.md).")

    def cases(self, target: Any, quick: bool) -> list[Any]:
        """The matrix through `run kv`'s own functions: the main grid, then the sweeps
        (binary protocol: the seed swept once per runtime) and the loop comparison."""
        from dbstand.workloads.kv.cli import kv_cases
        from dbstand.workloads.kv.options import KvOptions
        from dbstand.workloads.network_axis import db_paths, with_paths
        from dbstand.workloads.protocols import expand_protocols, with_probes

        p = self.plan(quick)
        revs = p["revs"]
        options = KvOptions(rows=ROWS)

        def grid(stacks: list[str], modes: list[str], ops: list[str], loops: list[str],
                 protocols: list[str]) -> list[Any]:
            cases = kv_cases([target], stacks, ops, modes, revs, options, False, loops)
            return with_probes(expand_protocols(cases, protocols), True)

        ops = list(p["ops"])
        out = grid(["tarantool"], SYNC_MODES, ops, ["asyncio"], [])
        out += grid(["asynctnt"], ASYNC_MODES, ops, ["asyncio"], [])
        # the second coroutine runtime: every asyncio mode of the binary protocol
        out += grid(["asynctnt"], ASYNC_MODES, ops, ["uvloop"], ["binary"])
        # the sweeps, on select: one CPU's worth of levels beyond the grid's
        out += grid(["asynctnt"], [f"asyncio:{n}" for n in p["asyncio_sweep"]], ["select"],
                    ["asyncio"], ["binary"])
        out += grid(["tarantool"], [f"threads:{n}" for n in p["threads_sweep"]], ["select"],
                    ["asyncio"], ["binary"])
        # the seed states no RTT: select again, blocking and with coroutines, at each of
        # RTTS (and through the proxy alone), the database that far away
        out += with_paths(grid(["tarantool"], ["sync"], ["select"], ["asyncio"], ["binary"])
                          + grid(["asynctnt"], [RTT_ASYNC], ["select"], ["asyncio"],
                                 ["binary"]), db_paths(RTTS, [target]))
        return out

    def measure(self, p: Mapping[str, Any], options: StudyOptions) -> ResultsFile:
        from dbstand.engine.config import EngineConfig
        from dbstand.targets.tarantool.managed import ManagedTarantool
        from dbstand.workloads.kv.options import KvOptions
        from dbstand.workloads.kv.workload import KvWorkload

        config = EngineConfig(revs=p["revs"], pause_s=p["pause_s"], steady_warmup=True,
                              min_iterations=min(5, p["max_iterations"]),
                              max_iterations=p["max_iterations"], max_time_s=p["max_time_s"])
        kv = KvOptions(rows=ROWS, baseline=BASELINE, pin=options.pin,
                       pin_cpus=options.pin_cpus)
        kv.check()
        workload = KvWorkload(kv)
        with started(ManagedTarantool(), "a Tarantool (the seed's settings)") as rec:
            cases = self.cases(rec.target(), options.quick)
            return self.execute(workload, cases, config, options)

    # --- published beside measured ---------------------------------------------------
    def published(self, records: list[dict[str, Any]]) -> list[Block]:
        s = self.data["settings"]
        here = self._settings(records)
        rows = [
            ("operations per iteration (revolutions)", f"{s['revolutions']:,}",
             here.get("revs", "-")),
            ("stop rule", s["iterations"], here.get("rule", "-")),
            ("pause between iterations", f"{s['pause_s']:g} s", here.get("pause", "-")),
            ("write-ahead log", s["wal_mode"], here.get("wal_mode", "-")),
            ("network read-ahead", f"{s['readahead']:,} B", here.get("readahead", "-")),
            ("space", s["space"], here.get("space", "-")),
            ("rows before each op", f"{s['rows']:,}", f"{ROWS:,}"),
            ("CPU placement", "not stated", here.get("pinning", "-")),
        ]
        table = Table("Settings: the seed's and this run's", [
            Column("what", "setting"), Column("seed", "seed"), Column("here", "this run")],
            [{"what": a, "seed": b, "here": c} for a, b, c in rows], anchor="settings")
        stand = self.data["stand_ins"]
        rtt = self._rtt_table(records)
        blocks: list[Block] = [
            f"The seed published no figures to set beside the measured ones "
            f"({self.data['source']['published']}), so its claims are checked below as "
            "ratios within this run (on the direct path).", table]
        if rtt is not None:
            blocks.append(rtt)
        blocks.append("Stand-ins: " + "; ".join(f"{k.replace('_', ' ')}: {v}"
                                                for k, v in stand.items()) + ".")
        return blocks

    def _rtt_table(self, records: list[dict[str, Any]]) -> Table | None:
        """select on each network path: blocking and coroutines, ops/s and their ratio
        (the coroutines' gain grows with the RTT a blocking client waits out)."""
        from dbstand.workloads.kv.table import case_label

        paths = [r for r in ok(records) if r.get("op") == "select"
                 and (r.get("params") or {}).get("db_rtt") is not None]
        if not paths:
            return None
        by = {(str(r["params"]["db_rtt"]), r.get("mode")): r for r in paths}
        labels = sorted({label for label, _ in by}, key=lambda x: path_of(x).rtt_us or -1)
        rows = []
        for label in labels:
            sync, coro = by.get((label, "sync")), by.get((label, RTT_ASYNC))
            net = (coro or sync or {}).get("network") or {}
            rtt = net.get("measured_rtt_ms")
            gain = ratio(throughput(coro), throughput(sync)) if sync and coro else None
            rows.append({
                "path": path_of(label).title,
                "rtt": "-" if rtt is None else f"{rtt:.3f}",
                "sync": f"{sync['ops_per_s']:,.0f}" if sync else "-",
                "coro": f"{coro['ops_per_s']:,.0f}" if coro else "-",
                "ratio": "-" if gain is None else gain.text()})
        names = {m: case_label(r) for (_, m), r in by.items()}
        return Table("select on each network path: ops/s (↑ higher is better) of "
                     f"{names.get('sync', 'sync')} and {names.get(RTT_ASYNC, RTT_ASYNC)}, and "
                     "their ratio (the coroutines' gain)", [
                         Column("path", "path"), Column("rtt", "RTT measured ms", True),
                         Column("sync", "sync ops/s", True),
                         Column("coro", f"{RTT_ASYNC} ops/s", True),
                         Column("ratio", "coroutines / sync", True)], rows, anchor="rtt")

    def _settings(self, records: list[dict[str, Any]]) -> dict[str, str]:
        done = ok(records)
        if not done:
            return {}
        first = done[0]
        engine = first.get("engine") or {}
        server = (first.get("environment") or {}).get("server") or {}
        pins = [((r.get("environment") or {}).get("server") or {}).get("cpu_pinning") or {}
                for r in done]
        pinned = sum(1 for p in pins if p.get("enabled"))
        placement = next((str(p.get("placement")) for p in pins if p.get("enabled")), "")
        return {
            "revs": f"{engine.get('revs', 0):,}",
            "rule": (f"95% CI within ±{engine.get('target_ci_pct', 3):g}% of the mean, "
                     f"{engine.get('min_iterations', 5)} to {engine.get('max_iterations')} "
                     "iterations, all kept" if engine.get("stop_rule") == "ci"
                     else str(engine.get("stop_rule"))),
            "pause": f"{engine.get('pause_s', 0):g} s",
            "wal_mode": str(server.get("wal_mode", "-")),
            "readahead": f"{server.get('readahead', 0):,} B",
            "space": f"{server.get('space_engine', '?')}, temporary: "
                     f"{server.get('space_temporary', '?')}",
            "pinning": f"{pinned} of {len(done)} cases pinned"
                       + (f" ({placement}: client CPU {pins_of(done)})" if pinned else "")
                       + ("" if pinned == len(done) else "; the others ran --no-pin"),
        }

    # --- the claims ----------------------------------------------------------------------
    def check_ratio(self, records: list[dict[str, Any]], claim: Mapping[str, Any]) -> Outcome:
        out: list[tuple[str, Estimate]] = []
        ops = list(dict.fromkeys(str(r.get("op")) for r in ok(records)))
        for op in ops:
            top, bottom = find(records, claim["top"], op), find(records, claim["bottom"], op)
            if top and bottom:
                out.append((op, ratio(estimate(top), estimate(bottom))))
        return out

    def check_sweep(self, records: list[dict[str, Any]], claim: Mapping[str, Any]) -> Outcome:
        """"Level L is the best": L's throughput over every other level's, each ratio's
        whole interval above 1 (an ordering with L first); a plateau holding L is
        inconclusive, a level beyond L's interval contradicts it."""
        want = claim["sweep"]
        level, family = int(claim["level"]), str(want["family"])
        points: dict[int, dict[str, Any]] = {}
        for r in loopback(ok(records)):
            mode = str(r.get("mode", ""))
            if r.get("op") != want["op"] or _label(r) != want["stack"] or \
                    not mode.startswith(family) or not mode[len(family):].isdigit():
                continue
            if _loop(r) and _loop(r) != want.get("loop", "asyncio"):
                continue
            points.setdefault(int(mode[len(family):]), r)
        if level not in points or len(points) < 2:
            return f"the sweep did not run at {family}{level} and another level"
        mine = throughput(points[level])
        judged = []
        for n, r in sorted(points.items()):
            if n != level:
                rr = ratio(mine, throughput(r))
                judged.append((n, rr, *judge(rr, {"expect": "greater", "than": 1.0})))
        curve = ", ".join(f"{n}: {p['ops_per_s']:,.0f}" for n, p in sorted(points.items()))
        measured = f"{curve} ops/s; {family}{level} over " + ", ".join(
            f"{n}: {rr.text()}" for n, rr, _, _ in judged)
        verdict = combine([v for *_, v, _ in judged])
        if verdict == REPRODUCED:
            reason = f"{level} beyond every other level's interval"
        else:
            reason = "; ".join(f"over {n}: {v} ({why})" for n, _, v, why in judged
                               if v != REPRODUCED)
        return Judged(verdict, measured, reason)

    def stand_in(self, claim: Mapping[str, Any]) -> str:
        stand = self.data["stand_ins"]
        sides = [claim.get("top"), claim.get("bottom"), claim.get("sweep")]
        stacks = {str(s["stack"]) for s in sides if isinstance(s, Mapping)}
        modes = {str(s.get("mode", s.get("family", ""))) for s in sides
                 if isinstance(s, Mapping)}
        loops = {str(s.get("loop", "")) for s in sides if isinstance(s, Mapping)}
        parts = []
        if any(s.startswith(C_LEVEL_STACK) for s in stacks):
            parts.append(stand["c_extension"] if "asyncio:1" in modes else
                         "asynctnt (Cython, asyncio) for the seed's connectors under coroutines")
        if any(s.startswith(PURE_STACK) for s in stacks):
            parts.append(stand["pure"])
        if any(m.startswith("threads") for m in modes):
            parts.append(stand["threads"])
        if "uvloop" in loops:
            parts.append(stand["runtimes"])
        return "; ".join(parts)


STUDY = KvStudy
