"""Study docquery (seed 003): PyMongo, PyMongo + gevent, Motor and MongoEngine behind
one single-threaded Tornado endpoint, under ApacheBench's two tests.

FerretDB on its SQLite backend (built and started for the study) stands in for
MongoDB, which Debian does not ship. The seed's stacks run as dbstand's docquery
stacks; PyMongo 2.8 has no stand-in. Test 1 is 10,000 requests at concurrency 100,
test 2 is 100 at 10, each request on a new connection as ab sends them; the quick
variant scales test 1 down to fewer requests (named so in its label) and the
collection to fewer documents.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbstand.report.model import Block, Column, Table
from dbstand.results.store import ResultsFile
from dbstand.studies.base import Study, StudyOptions, ok, started, throughput
from dbstand.studies.claims import Outcome
from dbstand.studies.verdict import Estimate, ratio

#: the steady load (http_load.py): the test's requests and concurrency shape each run
#: (at least that many requests, at least 1 s), at least `repeats` runs, more until the
#: 95% CI is within ±3% (at most 30)
QUICK = {"size": 10_000, "repeats": 5, "test1_requests": 2_000, "load": "steady"}
FULL = {"size": 1_000_000, "repeats": 5, "test1_requests": 10_000, "load": "steady"}



def find(records: list[dict[str, Any]], stack: str, test: str) -> dict[str, Any] | None:
    for r in ok(records):
        if r.get("stack") == stack and r.get("op") == test and r.get("mode") == "new":
            return r
    return None


class DocqueryStudy(Study):
    name = "docquery"
    quick_plan, full_plan = QUICK, FULL

    def stacks(self) -> list[str]:
        return [s for s in self.data["stand_ins"].values() if s]

    def describe(self, quick: bool) -> str:
        p = self.plan(quick)
        return (f"FerretDB (SQLite backend) started for the study with {p['size']:,} "
                f"documents; stacks {', '.join(self.stacks())}; test 1 "
                f"({p['test1_requests']:,} requests at concurrency 100"
                + (", scaled down from the seed's 10,000" if p["test1_requests"] != 10_000
                   else "") + ") and test 2 (100 requests at concurrency 10), a new "
                "connection per request as ab sends them; "
                + ("the steady load: a warm-up until steady, then runs of at least 1 s and "
                   "the test's request count, each ending when every request is answered "
                   f"(as ab's -n), at least {p['repeats']}, until the 95% CI is "
                   "within ±3% (at most 30); client, stack and database placed by the one "
                   "placement table (docs/placement.md)." if p["load"] == "steady" else
                   f"the seed's literal load, {p['repeats']} runs per case."))

    def measure(self, p: Mapping[str, Any], options: StudyOptions) -> ResultsFile:
        from dbstand.targets.mongodb.managed import ManagedFerretDB
        from dbstand.workloads.docquery.options import DocqueryOptions
        from dbstand.workloads.docquery.workload import DocqueryWorkload, build_cases
        from dbstand.workloads.http_load import served_config

        doc = DocqueryOptions(size=p["size"], repeats=p["repeats"], load=p["load"])
        workload = DocqueryWorkload(doc)
        config = served_config(p["load"], p["repeats"], 3.0)
        with started(ManagedFerretDB(), "FerretDB (MongoDB's stand-in)") as rec:
            url = rec.target()
            server = str(rec.settings.get("server", "FerretDB"))
            cases = build_cases([(url, server)], self.stacks(), ["test1", "test2"], ["new"],
                                False, doc)
            for case in cases:
                if case.op == "test1":
                    case.params["requests"] = p["test1_requests"]
            workload.use_targets({url.redacted(): [rec.pid]})
            return self.execute(workload, cases, config, options)

    # --- published beside measured ---------------------------------------------------
    def published(self, records: list[dict[str, Any]]) -> list[Block]:
        t = self.data["tables"]["percentiles"]
        stack = self.data["stand_ins"][t["stack"]]
        r = find(records, stack, t["test"])
        here = ((r or {}).get("ab") or {}).get("percentiles_ms", {}).get("50")
        requests = (r or {}).get("params", {}).get("requests") if r else None
        table = Table("The one figure in the seed's text: 50% of requests served within (ms, "
                      "↓ lower is better)", [Column("stack", "stack"), Column("test", "test"),
                                              Column("seed", "seed", True),
                                              Column("here", "here", True)],
                      [{"stack": f"{t['stack']} | {stack}",
                        "test": f"{t['test']} (c=100" + (f", {requests:,} requests)"
                                                         if requests else ")"),
                        "seed": f"{t['p50_ms']} ms",
                        "here": "-" if here is None else f"{here:g} ms"}],
                      caption="Another machine, network and server: for reference only.",
                      anchor="seed-p50")
        rows = []
        ref = self.data["stand_ins"]["PyMongo 3.0"]
        for name, stack in self.data["stand_ins"].items():
            cells = {"seed": name, "stack": stack or "(none)"}
            for test in ("test1", "test2"):
                rec, base = find(records, stack, test), find(records, ref, test)
                if rec is None:
                    cells[test] = "-"
                    continue
                text = f"{rec['ops_per_s']:,.0f}"
                if base and base.get("ops_per_s"):
                    text += f" ({rec['ops_per_s'] / base['ops_per_s']:.2f}x)"
                cells[test] = text
            rows.append(cells)
        measured = Table("The seed's stacks here: requests/s (↑), in brackets over PyMongo's "
                         "(the seed charted these, with no figures in its text)",
                         [Column("seed", "seed's stack"), Column("stack", "stand-in"),
                          Column("test1", "test 1 req/s", True),
                          Column("test2", "test 2 req/s", True)], rows, anchor="seed-stacks")
        return [table, measured]

    # --- the claims ----------------------------------------------------------------------
    def check_ratio(self, records: list[dict[str, Any]], claim: Mapping[str, Any]) -> Outcome:
        top = find(records, claim["top"]["stack"], claim["top"]["test"])
        bottom = find(records, claim["bottom"]["stack"], claim["bottom"]["test"])
        if not top or not bottom:
            return []
        return [(f"{claim['top']['test']} req/s", ratio(throughput(top), throughput(bottom)))]

    def check_latency(self, records: list[dict[str, Any]],
                      claim: Mapping[str, Any]) -> Outcome:
        key = str(claim.get("percentile", "50"))
        top = find(records, claim["top"]["stack"], claim["top"]["test"])
        bottom = find(records, claim["bottom"]["stack"], claim["bottom"]["test"])
        if not top or not bottom:
            return []
        a = ((top.get("ab") or {}).get("percentiles_ms") or {}).get(key)
        b = ((bottom.get("ab") or {}).get("percentiles_ms") or {}).get(key)
        if not a or not b:
            return "no latency percentiles recorded"
        return [(f"p{key} {a:g} ms vs {b:g} ms", Estimate(float(a) / float(b)))]


STUDY = DocqueryStudy
