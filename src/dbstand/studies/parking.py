"""Study parking (seed 000): one OLTP service in Python + SQLAlchemy and in C++ with an
ORM over SOCI (native and ODBC backends), one HTTP suite, logging on and off.

MariaDB (started for the study) stands in for the seed's MySQL 5.5 / InnoDB. The
stacks: python-sqlalchemy (CPython + SQLAlchemy), cpp-parking-soci-orm (C++ ORM on
SOCI's native MySQL backend) and cpp-parking-soci-orm-odbc (the same over ODBC).
The seed's PyPy configuration has no stand-in. Passes run one after another, as
the seed's suite did, in batches of passes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbstand.report.model import Block, Column, Table
from dbstand.results.store import ResultsFile
from dbstand.studies.base import Study, StudyOptions, finite, ok, started
from dbstand.studies.claims import Judged, Outcome
from dbstand.studies.verdict import (
    INCONCLUSIVE,
    REPRODUCED,
    Estimate,
    combine,
    judge,
    ordering,
    ratio,
)

STACKS = ("python-sqlalchemy", "pypy-sqlalchemy", "cpp-parking-soci-orm",
          "cpp-parking-soci-orm-odbc")
#: the seed's five statement kinds (table 2); the counters' "other" is not one of them
KINDS = ("select", "select_for_update", "update", "insert", "delete")
#: each figure's interval in the record (the pass time's is the run's own)
INTERVALS = {"ms_per_pass": "ci95_pct", "app_cpu_ms_per_pass": "app_cpu_ci95_pct",
             "db_cpu_ms_per_pass": "db_cpu_ci95_pct",
             "log_bytes_per_pass": "log_bytes_ci95_pct"}
#: the seed's 20 passes x 5 batches as the least; more batches until the 95% CI is
#: within ±3% (the steady load of every served workload), the cap flagging it unstable
QUICK = {"passes": 10, "batches": 4, "warmup": 1, "max_batches": 15}
FULL = {"passes": 20, "batches": 5, "warmup": 1, "max_batches": 30}



def find(records: list[dict[str, Any]], stack: str, logging: str) -> dict[str, Any] | None:
    for r in ok(records):
        if r.get("stack") == stack and str(r.get("logging")) == logging and \
                int((r.get("params") or {}).get("users", 1)) == 1:
            return r
    return None


class ParkingStudy(Study):
    name = "parking"
    quick_plan, full_plan = QUICK, FULL

    def describe(self, quick: bool) -> str:
        p = self.plan(quick)
        return (f"a MariaDB started for the study; {', '.join(STACKS)}; logging on and off; "
                f"one user running suite passes one after another, {p['passes']} passes a "
                f"batch, at least {p['batches']} counted batches (the seed: 20 x 5), more "
                f"until the 95% CI is within ±3% (at most {p['max_batches']}), after warm-up "
                "batches until two agree; the conformance suite passes before a stack is "
                "measured.")

    def measure(self, p: Mapping[str, Any], options: StudyOptions) -> ResultsFile:
        from dbstand.engine.config import EngineConfig
        from dbstand.targets.mysql.managed import ManagedMariaDB
        from dbstand.workloads.parking.options import ParkingOptions
        from dbstand.workloads.parking.workload import ParkingWorkload, build_cases

        parking = ParkingOptions(passes=p["passes"], batches=p["batches"])
        config = EngineConfig(revs=p["passes"], warmup=p["warmup"], steady_warmup=True,
                              min_iterations=p["batches"], max_iterations=p["max_batches"],
                              max_time_s=120.0, latency="all")
        with started(ManagedMariaDB(), "a MariaDB (MySQL's stand-in)") as rec:
            cases = build_cases([rec.target()], list(STACKS), ["on", "off"], [1], parking)
            return self.execute(ParkingWorkload(parking), cases, config, options)

    # --- published beside measured ---------------------------------------------------
    def configs(self) -> dict[str, str]:
        return dict(self.data["configs"])

    def published(self, records: list[dict[str, Any]]) -> list[Block]:
        return [self._functions(records), self._statements(records), self._logs(records),
                self._gain(records),
                "Stand-ins: " + "; ".join(f"{k}: {v or 'none (not measured)'}"
                                          for k, v in self.configs().items()) + "."]

    def _functions(self, records: list[dict[str, Any]]) -> Table:
        t = self.data["tables"]["functions"]
        ref = find(records, "cpp-parking-soci-orm", "on") or \
            next(iter(ok(records)), None)
        funcs = (ref or {}).get("functions") or {}
        passes = (ref or {}).get("iterations", 0) * (ref or {}).get("revs", 0)
        total = sum(f.get("calls", 0) * f.get("mean_us", 0) for f in funcs.values()) or None
        rows = []
        for name, calls, pct in zip(t["names"], t["calls"], t["time_pct"], strict=True):
            f = funcs.get(name) or {}
            here_calls = f.get("calls", 0) / passes if passes and f else None
            share = finite(f.get("share_pct")) if f else None
            if share is None and total and f:  # a record from before per-batch shares
                share = f.get("calls", 0) * f.get("mean_us", 0) / total * 100
            rows.append({"function": name, "calls": f"{calls} | "
                         + ("-" if here_calls is None else f"{here_calls:g}"),
                         "share": f"{pct:.2f} | " + ("-" if share is None else f"{share:.2f}")})
        who = f"{ref.get('stack')} logging {ref.get('logging')}" if ref else "-"
        return Table(f"Table 1: calls per suite pass and share of the pass's time, % (seed: "
                     f"YB.ORM + SOCI | here: {who})",
                     [Column("function", "function"), Column("calls", "calls/pass", True),
                      Column("share", "time share %", True)], rows, anchor="seed-table1")

    def _statements(self, records: list[dict[str, Any]]) -> Table:
        t = self.data["tables"]["statements"]
        columns = [Column("kind", "statement"), Column("sa", "seed SQLAlchemy", True),
                   Column("yb", "seed YB.ORM", True)]
        measured = [(s, find(records, s, "off") or find(records, s, "on")) for s in STACKS]
        columns += [Column(s, f"here {s}", True) for s, _ in measured]
        rows = []
        for i, kind in enumerate(t["kinds"]):
            row = {"kind": kind.replace("_", " ").upper(), "sa": str(t["sqlalchemy"][i]),
                   "yb": str(t["yborm"][i])}
            for stack, r in measured:
                value = ((r or {}).get("statements_per_pass") or {}).get(kind)
                into = folded_into(r, kind)
                row[stack] = "-" if value is None else f"{value:g}" + (
                    f" (with {' '.join(into).replace('_', ' ').upper()})" if into else "")
            rows.append(row)
        rows.append({"kind": "TOTAL (the five kinds)", "sa": str(sum(t["sqlalchemy"])),
                     "yb": str(sum(t["yborm"])),
                     **{s: (f"{sum((per.get(k) or 0) for k in KINDS):g}"
                            if (per := (r or {}).get("statements_per_pass")) else "-")
                        for s, r in measured}})
        note = next((str(r["statements_note"]) for _, r in measured
                     if r and r.get("statements_note")), "")
        total = ("TOTAL adds the seed's five kinds; the counters' other statements are left "
                 "out, as in the seed.")
        return Table("Table 2: SQL statements per suite pass", columns, rows,
                     caption=(note.rstrip(".") + ". " if note else "") + total,
                     anchor="seed-table2")

    def _logs(self, records: list[dict[str, Any]]) -> Table:
        t = self.data["tables"]["logs"]
        rows = []
        for config, mb, lines in zip(t["configs"], t["mb"], t["thousand_lines"], strict=True):
            stack = self.configs().get(config, "")
            r = find(records, stack, "on") if stack else None
            here_mb = r["log_bytes_per_pass"] * 100 / 1e6 if r and \
                r.get("log_bytes_per_pass") is not None else None
            here_lines = r["log_lines_per_pass"] * 100 / 1e3 if r and \
                r.get("log_lines_per_pass") is not None else None
            rows.append({"config": f"{config} | {stack or '-'}",
                         "mb": f"{mb:.2f} | " + ("-" if here_mb is None else f"{here_mb:.2f}"),
                         "lines": f"{lines:.1f} | "
                                  + ("-" if here_lines is None else f"{here_lines:.1f}")})
        return Table("Table 3: the log after 100 passes, logging on (seed | here)",
                     [Column("config", "configuration (seed | here)"),
                      Column("mb", "MB", True), Column("lines", "thousand lines", True)],
                     rows, anchor="seed-table3")

    def gain(self, records: list[dict[str, Any]], stack: str, metric: str) -> float | None:
        """% saved by turning logging off: (on - off) / on, as the seed's table 4."""
        on, off = find(records, stack, "on"), find(records, stack, "off")
        a = finite((on or {}).get(metric))
        b = finite((off or {}).get(metric))
        return (a - b) / a * 100 if a and b is not None else None

    def _gain(self, records: list[dict[str, Any]]) -> Table:
        t = self.data["tables"]["logging_gain"]
        rows = []
        for i, config in enumerate(t["configs"]):
            stack = self.configs().get(config, "")
            time = self.gain(records, stack, "ms_per_pass") if stack else None
            cpu = self.gain(records, stack, "app_cpu_ms_per_pass") if stack else None
            rows.append({"config": f"{config} | {stack or '-'}",
                         "client": f"{t['client_time_pct'][i]:.1f} | "
                                   + ("-" if time is None else f"{time:.1f}"),
                         "cpu": f"{t['server_cpu_pct'][i]:.1f} | "
                                + ("-" if cpu is None else f"{cpu:.1f}")})
        return Table("Table 4: % gained by turning logging off (seed | here; ↑ a bigger "
                     "share saved)", [Column("config", "configuration (seed | here)"),
                                      Column("client", "client time %", True),
                                      Column("cpu", "server CPU %", True)], rows,
                     anchor="seed-table4")

    # --- the claims ----------------------------------------------------------------------
    def stand_in(self, claim: Mapping[str, Any]) -> str:
        """The stacks a claim's verdict comes from, and MariaDB for MySQL 5.5."""
        seed_of = {v: k for k, v in self.configs().items() if v}
        names = [str(x["stack"] if isinstance(x, Mapping) else x) for x in
                 (claim.get("top"), claim.get("bottom"), claim.get("stack")) if x]
        parts = [f"{n} for {seed_of.get(n, '?')}" for n in dict.fromkeys(names)]
        return "; ".join([*parts, "MariaDB for MySQL 5.5"])

    @staticmethod
    def _estimate(record: dict[str, Any], metric: str) -> Estimate | None:
        """A per-pass figure with its interval; only the pass time, a timing, carries
        the unstable tag of its case (CPU and log volume are not what the stop rule
        watched)."""
        value = finite(record.get(metric))
        if not value:
            return None
        ci = finite(record.get(INTERVALS.get(metric, "")))
        return Estimate(value, ci, metric == "ms_per_pass" and bool(record.get("unstable")))

    def check_ratio(self, records: list[dict[str, Any]], claim: Mapping[str, Any]) -> Outcome:
        top = find(records, claim["top"]["stack"], claim["top"].get("logging", "on"))
        bottom = find(records, claim["bottom"]["stack"], claim["bottom"].get("logging", "on"))
        if not top or not bottom:
            return []
        a, b = self._estimate(top, claim["metric"]), self._estimate(bottom, claim["metric"])
        if a is None or b is None:
            return f"{claim['metric']} was not measured for both stacks"
        return [(claim["metric"].replace("_", " "), ratio(a, b))]

    def check_logging_gain(self, records: list[dict[str, Any]],
                           claim: Mapping[str, Any]) -> Outcome:
        """% saved by turning logging off, 100 (1 - off/on), its interval from the
        ratio's."""
        on, off = find(records, claim["stack"], "on"), find(records, claim["stack"], "off")
        if not on or not off:
            return []
        a, b = self._estimate(off, claim["metric"]), self._estimate(on, claim["metric"])
        if a is None or b is None:
            return f"{claim['metric']} missing with logging on or off"
        r = ratio(a, b)
        gain = Estimate((1 - r.value) * 100, shaky=r.shaky, exact=r.exact,
                        bounds=None if not r.has_interval or r.exact else
                        ((1 - r.high) * 100, (1 - r.low) * 100))
        return [(f"{claim['stack']} saves", gain)]

    def check_statements(self, records: list[dict[str, Any]],
                         claim: Mapping[str, Any]) -> Outcome:
        """Statements per pass are counts (exact); a kind the server's counter cannot
        tell apart from another (MariaDB counts SELECT ... FOR UPDATE as SELECT) gives
        no verdict on that kind."""
        kind = str(claim["kind"])
        found = {s: find(records, s, "off") or find(records, s, "on")
                 for s in (claim["top"], claim["bottom"])}
        counts = {s: finite(((r or {}).get("statements_per_pass") or {}).get(kind))
                  for s, r in found.items()}
        if any(v is None for v in counts.values()):
            return f"{kind} statements were not counted for both stacks"
        a, b = counts[claim["top"]], counts[claim["bottom"]]
        assert a is not None and b is not None
        folded = sorted({k for r in found.values() for k in folded_into(r, kind)})
        if folded:
            merged = " + ".join(k.replace("_", " ").upper() for k in (kind, *folded))
            return Judged(INCONCLUSIVE, f"{merged} per pass {a:g} vs {b:g} ({a / b:.2f}x)",
                          f"the server's counter counts {merged} as one kind, so plain "
                          f"{kind.upper()} cannot be told apart here")
        return [(f"{kind} per pass {a:g} vs {b:g}", Estimate(a / b, exact=True))]

    def check_shares(self, records: list[dict[str, Any]], claim: Mapping[str, Any]) -> Outcome:
        """The named functions lead the shares of a batch's time in the claim's order,
        and the last of them is above every other function: an ordering, each adjacent
        pair's ratio above 1 (shares with their interval over batches)."""
        r = find(records, str(claim["stack"]), str(claim.get("logging", "on")))
        if r is None:
            return []
        funcs = r.get("functions") or {}
        shares = {name: Estimate(float(f["share_pct"]), finite(f.get("share_ci95_pct")))
                  for name, f in funcs.items() if finite(f.get("share_pct"))}
        order = [str(x) for x in claim["order"]]
        if any(name not in shares for name in order):
            return "per-batch shares of the named functions were not recorded"
        verdict, pairs = ordering([(name, shares[name]) for name in order])
        rest = [n for n in shares if n not in order]
        below = [(f"{order[-1]}/{n}", ratio(shares[order[-1]], shares[n])) for n in rest]
        judged = [(label, est, *judge(est, {"expect": "greater", "than": 1.0}))
                  for label, est in below]
        verdict = combine([verdict, *(v for *_, v, _ in judged)])
        top = sorted(shares.items(), key=lambda kv: -kv[1].value)[:4]
        measured = ", ".join(f"{n} {e.text('%', 1)}" for n, e in top) + "; " + \
            ", ".join(f"{label} {est.text()}" for label, est, _, _ in pairs)
        if judged:
            label, est, *_ = min(judged, key=lambda j: j[1].value)
            measured += f"; closest below: {label} {est.text()}"
        wrong = [f"{label}: {v} ({why})" for label, _, v, why in
                 [*pairs, *judged] if v != REPRODUCED]
        return Judged(verdict, measured, "; ".join(wrong[:3]) if wrong else
                      "every adjacent pair's interval above 1")

    def claim_unit(self, claim: Mapping[str, Any]) -> str:
        return "%" if claim.get("check") == "logging_gain" else "x"


def folded_into(record: dict[str, Any] | None, kind: str) -> list[str]:
    """The kinds the record's counter counted as `kind` (not told apart)."""
    folded = (record or {}).get("statements_uncounted") or {}
    return sorted(k for k, into in folded.items() if into == kind)


STUDY = ParkingStudy
