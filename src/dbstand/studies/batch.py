"""Study batch (seed 002): psycopg2's four batch APIs, insert, update, delete.

PostgreSQL (started for the study) stands in for openGauss; psycopg2 is the seed's
driver, with its page size of 100. Every API runs with the correct key binding;
the cells where the seed's script bound integer keys to its text key column run a
second time with `--key-predicate cast` (the key compared through a cast no index
serves), which is how the seed's superlinear cells came about. Its three tables are
printed beside both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dbstand.network.rtt import DIRECT, path_of
from dbstand.report.model import Block, Column, Table
from dbstand.results.store import ResultsFile
from dbstand.studies.base import Study, StudyOptions, as_list, finite, started
from dbstand.studies.claims import Judged, Outcome
from dbstand.studies.verdict import REPRODUCED, Estimate, combine, ordering, ratio

if TYPE_CHECKING:
    from dbstand.workloads.batch.options import BatchOptions

STACK = "psycopg2"
OPS = ("insert", "update", "delete")
#: sizes with the correct binding, and with the cast key per op: a row statement under
#: the cast scans the table once per row (N^2: small sizes), a page statement once per
#: page of 100 rows (larger sizes before the scans outweigh the round trips)
QUICK = {"rows": [2_000, 4_000, 10_000],
         "cast_rows": {"update": [2_000, 4_000, 10_000, 20_000],
                       "delete": [1_000, 2_000, 4_000]},
         "large_rows": 10_000, "max_iterations": 8, "max_time_s": 10.0}
FULL = {"rows": [10_000, 20_000, 50_000, 100_000],
        "cast_rows": {"update": [10_000, 20_000, 50_000, 100_000],
                      "delete": [5_000, 10_000, 20_000]},
        "large_rows": 50_000, "max_iterations": 30, "max_time_s": 120.0}
CORRECT, SEED = "correct", "seed"
#: the RTTs the study's insert runs again at (plus the proxy alone: "0 ms")
RTTS = "0.2ms,1ms"



class BatchStudy(Study):
    name = "batch"
    quick_plan, full_plan = QUICK, FULL

    @property
    def apis(self) -> list[str]:
        return list(self.data["source"]["apis"])

    @property
    def integer_keys(self) -> dict[str, list[str]]:
        return dict(self.data["source"]["integer_keys"])

    def describe(self, quick: bool) -> str:
        p = self.plan(quick)
        cells = "; ".join(f"{op}: {', '.join(apis)}" for op, apis in self.integer_keys.items())
        sizes = "; ".join(f"{op} {', '.join(f'{n:,}' for n in rows)} rows"
                          for op, rows in p["cast_rows"].items())
        return (f"a PostgreSQL started for the study; psycopg2's {', '.join(self.apis)} "
                f"(page size {self.data['source']['page_size']}) for insert, update and delete "
                f"of {', '.join(f'{n:,}' for n in p['rows'])} rows with the correct key "
                f"binding, plus the limit rows (one server-side statement; psql \\copy); the "
                f"cells where the seed bound integer keys ({cells}) again with the key "
                f"compared through a cast (--key-predicate cast), at {sizes}; from "
                f"{p['large_rows']:,} rows a cell repeats 3 times, below under the 95% CI "
                f"stop rule; insert of {p['rows'][-1]:,} rows again through a managed "
                f"Toxiproxy at RTT 0 (the proxy alone), {RTTS.replace(',', ' and ')} "
                "(docs/network.md).")

    def cases(self, target: Any, quick: bool) -> list[Any]:
        """The matrix through `run batch`'s own build_cases: all cells bound correctly
        (with the limit rows), then the seed's integer-key cells with the cast key."""
        from dbstand.workloads.batch.workload import build_cases
        from dbstand.workloads.network_axis import db_paths, with_paths

        p = self.plan(quick)
        options = self.options(quick)
        cases = build_cases([target], [STACK], self.apis, list(OPS), p["rows"], options,
                            limits=True)
        for op, apis in self.integer_keys.items():
            cases += build_cases([target], [STACK], apis, [op], p["cast_rows"][op], options,
                                 limits=False, key_predicates=["cast"])
        # the seed states no RTT: insert again at each of RTTS (and through the proxy
        # alone), so no single value is picked to fit a verdict
        cases += with_paths(build_cases([target], [STACK], self.apis, ["insert"],
                                        [p["rows"][-1]], options, limits=False),
                            db_paths(RTTS, [target]))
        return cases

    def options(self, quick: bool) -> BatchOptions:
        """The run's batch options: the seed's page size, executemany the baseline."""
        from dbstand.workloads.batch.options import BatchOptions

        return BatchOptions(page_size=int(self.data["source"]["page_size"]),
                            large_rows=self.plan(quick)["large_rows"], large_repeats=3,
                            baseline="executemany")

    def measure(self, p: Mapping[str, Any], options: StudyOptions) -> ResultsFile:
        from dbstand.engine.config import EngineConfig
        from dbstand.targets.postgresql.managed import ManagedPostgres
        from dbstand.workloads.batch.workload import BatchWorkload

        config = EngineConfig(revs=1, min_iterations=min(5, p["max_iterations"]),
                              max_iterations=p["max_iterations"],
                              max_time_s=p["max_time_s"], latency="off")
        workload = BatchWorkload(self.options(options.quick))
        with started(ManagedPostgres(), "a PostgreSQL (openGauss's stand-in)") as rec:
            cases = self.cases(rec.target(), options.quick)
            return self.execute(workload, cases, config, options)

    # --- lookups ----------------------------------------------------------------------
    def lines(self, records: list[dict[str, Any]]) -> dict[tuple[str, str, str], Any]:
        """(op, api, key predicate) -> the batch report's Line (cells, fit)."""
        from dbstand.workloads.batch.report import sections

        out: dict[tuple[str, str, str], Any] = {}
        for section in sections(records):
            if section.path not in ("", DIRECT):
                continue  # the claims and the seed's tables are judged on loopback
            for line in section.apis:
                if line.stack == STACK:
                    out[(line.op, line.api, line.predicate)] = line
        return out

    def line(self, lines: dict[tuple[str, str, str], Any], op: str, api: str,
             binding: str) -> Any:
        """A line as the binding has it: `seed` takes the cast line where the seed bound
        integers, the correct one elsewhere."""
        cast = binding == SEED and api in self.integer_keys.get(op, [])
        return lines.get((op, api, "cast" if cast else "index"))

    @staticmethod
    def cell(line: Any, rows: int) -> dict[str, Any] | None:
        return None if line is None else line.ok(rows)

    def sizes(self, lines: dict[tuple[str, str, str], Any], op: str, binding: str) -> list[int]:
        """Sizes where every api of the binding was measured."""
        found: set[int] | None = None
        for api in self.apis:
            line = self.line(lines, op, api, binding)
            have = {n for n in (line.cells if line else {}) if line.ok(n)}
            found = have if found is None else found & have
        return sorted(found or set())

    # --- published beside measured ----------------------------------------------------
    def published(self, records: list[dict[str, Any]]) -> list[Block]:
        lines = self.lines(records)
        blocks: list[Block] = [
            "Seconds per batch, COMMIT included (↓ lower is better). Each cell: the "
            "seconds, then in brackets the time over executemany's in the same row. The "
            "seed's rows first, then this run's at the sizes standing for them (the same "
            "sizes in the full variant; smaller ones, by position, in the quick one), with "
            "the correct key binding, then with the seed's binding (cast key, marked *, "
            "where the seed's script bound integers to its text key)."]
        for op in OPS:
            blocks.append(self._op_table(op, lines))
        if (paths := self._rtt_table(records)) is not None:
            blocks.append(paths)
        return blocks

    def _rtt_table(self, records: list[dict[str, Any]]) -> Table | None:
        """insert at the RTT runs' size on each path: seconds and the speed-up over
        executemany, the seed's speed-ups (its largest size) beside; each path's RTT as
        measured before its cases."""
        from dbstand.workloads.batch.report import sections

        insert = [s for s in sections(records) if s.op == "insert" and s.predicate == "index"]
        if not any(s.path for s in insert):
            return None
        n = max(size for s in insert for size in s.sizes)
        seed = self.data["tables"]["insert"]
        columns = [Column("path", "path"), Column("rtt", "RTT measured ms", True),
                   *(Column(api, api, True) for api in self.apis)]
        rows = [{"path": f"seed (openGauss, {seed['rows'][-1]:,} rows)", "rtt": "-",
                 **{api: f"{seed[api][-1]:.3g} s ({seed['executemany'][-1] / seed[api][-1]:.1f}"
                         "x)" for api in self.apis}}]
        for section in sorted(insert, key=lambda s: path_of(s.path).rtt_us or -1):
            cells = {line.api: line.ok(n) for line in section.apis}
            base = cells.get("executemany")
            measured = [c["network"]["measured_rtt_ms"] for c in cells.values()
                        if c and isinstance(c.get("network"), dict)
                        and c["network"].get("measured_rtt_ms") is not None]
            row = {"path": path_of(section.path).title,
                   "rtt": f"{sorted(measured)[len(measured) // 2]:.3f}" if measured else "-"}
            for api in self.apis:
                cell = cells.get(api)
                text = "-" if not cell else f"{cell['seconds']:.3g} s"
                if cell and base:
                    text += f" ({base['seconds'] / cell['seconds']:.1f}x)"
                row[api] = text
            rows.append(row)
        return Table(f"insert of {n:,} rows on each network path: seconds per batch "
                     "(↓ lower is better), in brackets executemany's time over the api's "
                     "(the speed-up), the seed's beside", columns, rows, anchor="seed-rtt")

    def _op_table(self, op: str, lines: dict[tuple[str, str, str], Any]) -> Table:
        seed = self.data["tables"][op]
        columns = [Column("rows", "rows"), Column("source", "source"),
                   *(Column(api, api, True) for api in self.apis)]
        out, styles = [], []

        def row(label: str, n: int, values: dict[str, tuple[float | None, bool]],
                style: str | None = None) -> None:
            base = values.get("executemany", (None, False))[0]
            cells: dict[str, str] = {"rows": f"{n:,}", "source": label}
            for api in self.apis:
                value, cast = values.get(api, (None, False))
                text = "-" if value is None else f"{value:.3g} s"
                if value is not None and base:
                    text += f" ({value / base:.2f}x)"
                cells[api] = text + (" *" if cast and value is not None else "")
            out.append(cells)
            styles.append(style)

        here = self.sizes(lines, op, CORRECT)
        exact = all(n in here for n in seed["rows"])  # the full variant: the seed's sizes
        for i, n in enumerate(seed["rows"]):
            row("seed (openGauss)", n, {api: (seed[api][i], False) for api in self.apis},
                "limit")
            m = n if exact else (here[i] if i < len(here) else None)
            if m is not None:
                row("here, correct binding" + ("" if m == n else " (scaled)"), m,
                    {api: (self._seconds(lines, op, api, CORRECT, m), False)
                     for api in self.apis})
        if op in self.integer_keys:
            for m in self.sizes(lines, op, SEED):
                row("here, seed's binding", m,
                    {api: (self._seconds(lines, op, api, SEED, m),
                           api in self.integer_keys[op]) for api in self.apis})
        return Table(f"{op}: seconds per batch, seed beside this run", columns, out, styles,
                     anchor=f"seed-{op}")

    def _seconds(self, lines: dict[tuple[str, str, str], Any], op: str, api: str,
                 binding: str, rows: int) -> float | None:
        cell = self.cell(self.line(lines, op, api, binding), rows)
        return finite(cell.get("seconds")) if cell else None

    # --- the claims ----------------------------------------------------------------------
    def stand_in(self, claim: Mapping[str, Any]) -> str:
        return "PostgreSQL for openGauss (psycopg2 as in the seed)"

    def _missing_sizes(self, op: str, sizes: list[int]) -> str:
        """The seed's sizes of `op` this run did not measure (the quick variant's are
        smaller; the full one leaves out delete's 50,000 under the cast key, hours of
        N^2 scans)."""
        absent = [n for n in self.data["tables"][op]["rows"] if n not in sizes]
        return f" (the seed's {', '.join(f'{n:,}' for n in absent)} rows not measured " \
               "here)" if absent else ""

    def check_order(self, records: list[dict[str, Any]], claim: Mapping[str, Any]) -> Outcome:
        """The seed's order (slowest first) at every size measured: every adjacent
        pair's ratio of seconds must lie above 1 at every size."""
        lines = self.lines(records)
        op, binding = str(claim["op"]), str(claim.get("binding", CORRECT))
        sizes = self.sizes(lines, op, binding)
        if not sizes:
            return f"the {op} cells with the {binding} binding did not all run"
        expected = [str(api) for api in claim["order"]]
        verdicts, parts, why = [], [], []
        for n in sizes:
            figures = [(api, self._estimate(self.cell(self.line(lines, op, api, binding), n)
                                            or {})) for api in expected]
            verdict, pairs = ordering(figures)
            verdicts.append(verdict)
            parts.append(f"{n:,}: " + ", ".join(f"{name} {r.text()}"
                                                   for name, r, _, _ in pairs))
            wrong = [f"{name} ({v}: {reason})" for name, _, v, reason in pairs
                     if v != REPRODUCED]
            if wrong:
                why.append(f"at {n:,} rows " + "; ".join(wrong))
        binding_text = "the seed's binding (cast key where it bound integers)" \
            if binding == SEED else "correct binding"
        verdict = combine(verdicts)
        reason = "; ".join(why[:3]) if why else \
            f"every adjacent pair above 1 at {', '.join(f'{n:,}' for n in sizes)} rows"
        return Judged(verdict, "; ".join(parts) + f" ({binding_text}; seconds over the "
                      "next api's)", reason + self._missing_sizes(op, sizes))

    def check_speedup(self, records: list[dict[str, Any]], claim: Mapping[str, Any]) -> Outcome:
        """The slow api's seconds over the fast one's, at every size measured."""
        lines = self.lines(records)
        out: list[tuple[str, Estimate]] = []
        for op in as_list(claim["op"]):
            for n in self.sizes(lines, op, CORRECT):
                slow = self.cell(self.line(lines, op, claim["slow"], CORRECT), n)
                fast = self.cell(self.line(lines, op, claim["fast"], CORRECT), n)
                if slow and fast:
                    out.append((f"{op} at {n:,} rows", ratio(self._estimate(slow),
                                                             self._estimate(fast))))
        return out

    @staticmethod
    def _estimate(cell: dict[str, Any]) -> Estimate:
        return Estimate(float(cell.get("seconds") or math.nan), finite(cell.get("ci95_pct")),
                        bool(cell.get("unstable")))

    def exponent(self, line: Any) -> tuple[str, Estimate] | None:
        """The growth exponent from the smallest to the largest size measured, with
        its interval from the two cells' (Fieller's on the seconds' ratio): 1 is
        linear."""
        sizes = sorted(n for n in line.cells if line.ok(n))
        if len(sizes) < 2:
            return None
        small, large = sizes[0], sizes[-1]
        r = ratio(self._estimate(line.ok(large)), self._estimate(line.ok(small)))
        k = math.log(large / small)

        def exp(x: float) -> float:
            return math.log(x) / k if x > 0 else -math.inf

        bounds = (exp(r.low), exp(r.high)) if r.has_interval and not r.exact else None
        cast = "cast key" if line.predicate != "index" else "correct binding"
        return (f"{line.api} {line.op} ({cast}, {small:,}-{large:,} rows)",
                Estimate(exp(r.value), shaky=r.shaky, bounds=bounds))

    def check_scaling(self, records: list[dict[str, Any]], claim: Mapping[str, Any]) -> Outcome:
        """Superlinear: the exponent's whole interval above 1; linear: within 1 ±20%
        (the "about" band), so sublinear growth is not linear."""
        lines = self.lines(records)
        op, binding = str(claim["op"]), str(claim.get("binding", CORRECT))
        out: list[tuple[str, Estimate]] = []
        for api in as_list(claim["api"]):
            line = self.line(lines, op, api, binding)
            found = self.exponent(line) if line is not None else None
            if found is None:
                return f"{api} {op} ran at fewer than two sizes"
            out.append(found)
        return out

    def check_all_linear(self, records: list[dict[str, Any]],
                         claim: Mapping[str, Any]) -> Outcome:
        """Every api bound correctly grows linearly: each line's exponent within 1
        ±20%."""
        lines = self.lines(records)
        found = [self.exponent(line) for key, line in sorted(lines.items())
                 if key[2] == "index"]
        out = [f for f in found if f is not None]
        if not out:
            return "no api ran at two sizes or more"
        return out

    def claim_unit(self, claim: Mapping[str, Any]) -> str:
        return "" if claim.get("check") in ("scaling", "all_linear") else "x"

STUDY = BatchStudy
