"""Study webtech (seed 001): the 2002 server technologies on six small pages.

Each of the seed's technologies gets its stand-in of today (specs/webtech.md): Tomcat
and Jetty for the servlet containers with their own web server (a servlet for the
seed's Servlet test, a JSP page for its Hello test), Apache in front of Tomcat for
the containers behind Apache, mod_php, mod_perl, CGI Perl, ASP.NET on Mono for ASP,
Node.js for Resin's server-side JavaScript, nginx as the static limit. A MariaDB is
started for the db and cache pages, as the seed used MySQL. One user, and four
concurrent keep-alive users, as the seed's two parts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbstand.report.model import Block, Column, Table
from dbstand.results.store import ResultsFile
from dbstand.studies.base import Study, StudyOptions, as_list, finite, ok, started, throughput
from dbstand.studies.claims import Judged, Outcome
from dbstand.studies.verdict import INCONCLUSIVE, REPRODUCED, Estimate, combine, judge, ratio

LIMIT = "static-nginx"
#: the quick variant leaves Jetty out (Tomcat stands for the same family) and runs
#: the four-user level on the tests its claims need
QUICK = {"duration_s": None, "repeats": 5, "requests": 1_000, "load": "steady",
         "skip_stacks": ("java-jetty-servlet", "java-jetty-jsp"),
         "four_user_tests": ("file", "hello", "db")}
FULL = {"duration_s": None, "repeats": 5, "requests": 1_000, "load": "steady",
        "skip_stacks": (),
        "four_user_tests": ("file", "hello", "loop", "big", "db", "cache")}
TESTS = ("file", "hello", "loop", "big", "db", "cache")



def find(records: list[dict[str, Any]], stack: str, test: str,
         clients: int) -> dict[str, Any] | None:
    for r in ok(records):
        if r.get("stack") == stack and r.get("op") == test and \
                r.get("mode") == f"clients:{clients}":
            return r
    return None


class WebtechStudy(Study):
    name = "webtech"
    quick_plan, full_plan = QUICK, FULL

    def stacks(self, quick: bool) -> list[str]:
        found: list[str] = [LIMIT]
        for entry in self.data["stand_ins"].values():
            for key in ("stack", "hello"):
                name = entry.get(key) or ""
                if name and name not in found and name not in self.plan(quick)["skip_stacks"]:
                    found.append(name)
        return found

    def describe(self, quick: bool) -> str:
        p = self.plan(quick)
        load = ("the steady load: each case warms up until its throughput is steady, "
                f"then runs of at least 1 s and at least the seed's {p['requests']:,} "
                f"requests per client, at least {p['repeats']} of them, until the 95% CI "
                "is within ±3% (at most 30 runs: unstable beyond); client, stacks and "
                "database placed by the one placement table (docs/placement.md)"
                if p["load"] == "steady" else
                f"the seed's literal load: {p['requests']:,} requests per client per run, "
                f"{p['repeats']} runs")
        return (f"a MariaDB started for the db and cache pages; stacks "
                f"{', '.join(self.stacks(quick))}; tests {', '.join(TESTS)} with 1 user, "
                f"and {', '.join(p['four_user_tests'])} with 4 keep-alive users; {load} "
                "(mean and 95% CI); every stack's answers "
                "verified before it is measured.")

    def measure(self, p: Mapping[str, Any], options: StudyOptions) -> ResultsFile:
        from dbstand.targets.mysql.managed import ManagedMariaDB
        from dbstand.workloads.http_load import served_config
        from dbstand.workloads.webtech.options import WebtechOptions
        from dbstand.workloads.webtech.workload import WebtechWorkload, build_cases, check_request

        web = WebtechOptions(requests=p["requests"], repeats=p["repeats"],
                             duration_s=p["duration_s"], load=p["load"])
        stacks = self.stacks(options.quick)
        check_request(stacks, list(TESTS), [1, 4], web)
        config = served_config(p["load"], p["repeats"], 3.0)
        with started(ManagedMariaDB(), "a MariaDB (the seed's MySQL)") as rec:
            cases = [c for c in build_cases(rec.target(), stacks, list(TESTS), [1, 4], False,
                                            web)
                     if c.mode == "clients:1" or c.op in p["four_user_tests"]]
            return self.execute(WebtechWorkload(web), cases, config, options)

    # --- published beside measured ---------------------------------------------------
    def measured(self, records: list[dict[str, Any]], tech: str, test: str,
                 clients: int) -> float | None:
        """The stand-in's figure for the seed's (technology, test): its Servlet test is
        the servlet stack's hello page."""
        stack = self._stand_in_stack(tech, test)
        page = "hello" if test == "servlet" else test
        r = find(records, stack, page, clients) if stack else None
        return finite(r.get("ops_per_s")) if r else None

    def published(self, records: list[dict[str, Any]]) -> list[Block]:
        reference = str(self.data["source"]["reference"])
        blocks: list[Block] = [
            f"Requests per second (↑ higher is better). Each cell: the seed's figure | this "
            f"run's stand-in; in brackets, the figure over {reference}'s in the same column "
            f"(its Hello for the Servlet column), the only comparison that survives a change "
            f"of machine."]
        for table in self.data["tables"]:
            blocks.append(self._table(records, table, reference))
        return blocks

    def _table(self, records: list[dict[str, Any]], table: Mapping[str, Any],
               reference: str) -> Table:
        tests, clients = list(table["tests"]), int(table["clients"])
        ref_row = next(r for r in table["rows"] if r["tech"] == reference)

        def ref_test(test: str) -> str:
            return "hello" if test == "servlet" else test

        columns = [Column("tech", "seed's technology"), Column("stand_in", "stand-in"),
                   *(Column(t, t, True) for t in tests)]
        rows, styles = [], []
        for seed_row in table["rows"]:
            tech = seed_row["tech"]
            cells = {"tech": tech, "stand_in": self._stand_in_stack(tech, "file") or "(none)"}
            for test in tests:
                seed_value = seed_row.get(test)
                seed_ref = ref_row.get(ref_test(test))
                # a cell the seed left blank (no Servlet test for PHP, Perl, CGI; no db
                # figure for ASP) stays blank here: its stand-in's hello is not it
                here = None if seed_value is None else \
                    self.measured(records, tech, test, clients)
                here_ref = self.measured(records, reference, ref_test(test), clients)
                cells[test] = f"{_fmt(seed_value, seed_ref)} | {_fmt(here, here_ref)}"
            rows.append(cells)
            styles.append("limit" if tech == reference else None)
        return Table(f"{table['name']}: requests/s, seed | here",
                     columns, rows, styles, caption=str(table.get("note", "")),
                     anchor=f"seed-{table['name'].lower().replace(' ', '-').replace(',', '')}")

    # --- the claims ----------------------------------------------------------------------
    def _stacks_for(self, records: list[dict[str, Any]], name: str) -> list[str]:
        if name != "*":
            return [name]
        return [s for s in dict.fromkeys(str(r.get("stack")) for r in ok(records))
                if s != LIMIT and not s.startswith("static-")]

    def check_ratio(self, records: list[dict[str, Any]], claim: Mapping[str, Any]) -> Outcome:
        top, bottom = claim["top"], claim["bottom"]
        out: list[tuple[str, Estimate]] = []
        stacks = self._stacks_for(records, str(top["stack"]))
        for stack in stacks:
            other = stack if bottom["stack"] == "*" else str(bottom["stack"])
            for test_top, test_bottom in zip(as_list(top["test"]), as_list(bottom["test"]),
                                             strict=True):
                for n in as_list(top.get("clients", 1)):
                    a, b = find(records, stack, test_top, n), find(records, other,
                                                                    test_bottom, n)
                    if a and b:
                        who = stack if len(stacks) > 1 else ""
                        same = test_top == test_bottom
                        label = " ".join(x for x in (
                            who, test_top if same else f"{test_top}/{test_bottom}",
                            f"{n} user{'s' if n > 1 else ''}") if x)
                        out.append((label, ratio(throughput(a), throughput(b))))
        return out

    def check_clients(self, records: list[dict[str, Any]],
                      claim: Mapping[str, Any]) -> Outcome:
        out: list[tuple[str, Estimate]] = []
        stacks = self._stacks_for(records, str(claim["stack"]))
        for stack in stacks:
            for test in as_list(claim["test"]):
                four, one = find(records, stack, test, 4), find(records, stack, test, 1)
                if four and one:
                    label = f"{stack} {test}" if len(stacks) > 1 else test
                    out.append((label, ratio(throughput(four), throughput(one))))
        return out

    def stand_in(self, claim: Mapping[str, Any]) -> str:
        """The stacks a claim's verdict comes from and the technologies they stand in for."""
        names: list[str] = []
        for side in (claim.get("top"), claim.get("bottom"), claim):
            if isinstance(side, Mapping) and side.get("stack"):
                names += [str(x) for x in as_list(side["stack"])]
        techs: dict[str, list[str]] = {}
        for tech, entry in self.data["stand_ins"].items():
            for key in ("stack", "hello"):
                if entry.get(key):
                    techs.setdefault(str(entry[key]), []).append(tech)
        parts = [f"{n} for {', '.join(dict.fromkeys(techs.get(n, ['?'])))}"
                 for n in dict.fromkeys(names) if n != "*"]
        if "*" in names:
            parts.append("every stand-in that ran")
        tests = {str(t) for side in (claim.get("top"), claim) if isinstance(side, Mapping)
                 for t in as_list(side.get("test"))}
        if tests & {"db", "cache"}:
            parts.append("MariaDB for MySQL")
        return "; ".join(parts)

    def check_pairs(self, records: list[dict[str, Any]], claim: Mapping[str, Any]) -> Outcome:
        """Every stack of one group over every stack of another, per test and users."""
        out: list[tuple[str, Estimate]] = []
        for test in as_list(claim["test"]):
            for n in as_list(claim.get("clients", 1)):
                for top in as_list(claim["top"]["stack"]):
                    for bottom in as_list(claim["bottom"]["stack"]):
                        a, b = find(records, top, test, n), find(records, bottom, test, n)
                        if a and b:
                            out.append((f"{test} {top}/{bottom}" + (f" {n} users" if n > 1
                                                                    else ""),
                                        ratio(throughput(a), throughput(b))))
        return out

    def check_leads(self, records: list[dict[str, Any]], claim: Mapping[str, Any]) -> Outcome:
        """A stack first (or last) on a test among the stand-ins of one of the seed's
        tables: its ratio over every rival (or every rival's over it) above 1."""
        table = next(t for t in self.data["tables"] if t["name"] == claim["table"])
        clients = int(table["clients"])
        stack = str(claim["stack"])
        verdicts, parts, why = [], [], []
        for test in as_list(claim["test"]):
            page = "hello" if test == "servlet" else test
            rivals = []
            for row in table["rows"]:
                if row.get(test) is None:
                    continue
                other = self._stand_in_stack(row["tech"], test)
                if other and other != stack and other not in rivals:
                    rivals.append(other)
            mine = find(records, stack, page, clients)
            found = [(o, rec) for o in rivals if (rec := find(records, o, page, clients))]
            if not mine or not found:
                verdicts.append(INCONCLUSIVE)
                why.append(f"{test}: not measured")
                continue
            last = claim.get("place", "first") == "last"
            ratios = [(o, ratio(throughput(r), throughput(mine)) if last else
                       ratio(throughput(mine), throughput(r))) for o, r in found]
            judged = [(o, r, *judge(r, {"expect": "greater", "than": 1.0}))
                      for o, r in ratios]
            unmeasured = [x for x in rivals if x not in dict(found)]
            verdict = combine([v for _, _, v, _ in judged] + [INCONCLUSIVE] * bool(unmeasured))
            verdicts.append(verdict)
            o, r, _, _ = min(judged, key=lambda j: j[1].value)
            parts.append(f"{test}: closest {o} {r.text()}" + (
                f" (of {len(judged)} rivals)" if len(judged) > 1 else ""))
            why += [f"{test} vs {o}: {v} ({reason})" for o, _, v, reason in judged
                    if v != REPRODUCED][:2]
            if unmeasured:
                why.append(f"{test}: rivals {', '.join(unmeasured)} not measured")
        if not parts:
            return []
        where = "last" if claim.get("place") == "last" else "first"
        reason = "; ".join(why[:4]) if why else \
            f"{where} beyond every rival's interval on every test judged"
        return Judged(combine(verdicts), "; ".join(parts) + " (the ratio shown is over "
                      "the closest rival" + (", rival over it" if where == "last" else "")
                      + ")", reason)

    def _stand_in_stack(self, tech: str, test: str) -> str:
        entry = self.data["stand_ins"].get(tech) or {}
        if test == "hello" and entry.get("hello"):
            return str(entry["hello"])
        return str(entry.get("stack") or "")


def _fmt(value: float | None, ref: float | None) -> str:
    if value is None:
        return "-"
    text = f"{value:,.0f}" if value >= 10 else f"{value:.1f}"
    return text + (f" ({value / ref:.2f}x)" if ref else "")


STUDY = WebtechStudy
