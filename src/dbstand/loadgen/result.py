"""Typed results of a load run, built from the native engine's dict.

Latencies travel as one HDR histogram (HdrHistogram V2, compressed, base64,
values in nanoseconds): the same format and bounds as the rest of dbstand, so
results from several runs or machines merge exactly instead of averaging
percentiles.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Literal

from dbstand.engine.histogram import LatencyHistogram
from dbstand.loadgen.series import Series, per_second

Mode = Literal["closed", "open", "scenario"]


@dataclass(frozen=True)
class ErrorCounts:
    """Requests that got no usable answer, by cause; never counted as successes."""

    connect: int = 0
    read: int = 0
    write: int = 0
    timeout: int = 0
    parse: int = 0
    """The server sent something that is not HTTP/1.x."""

    @property
    def total(self) -> int:
        return self.connect + self.read + self.write + self.timeout + self.parse

    def __add__(self, other: ErrorCounts) -> ErrorCounts:
        return ErrorCounts(**{f.name: getattr(self, f.name) + getattr(other, f.name)
                              for f in fields(self)})


def _add_counts(a: Mapping[int, int], b: Mapping[int, int]) -> dict[int, int]:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return dict(sorted(out.items()))


def _merge_hdr(encoded: Iterable[str | None]) -> str:
    merged = LatencyHistogram()
    for t in encoded:
        if t:
            merged.merge(LatencyHistogram.decode(t))
    return merged.encode()


@dataclass(frozen=True)
class Counts:
    """What a set of requests produced (a whole run, or one scenario step)."""

    requests: int
    """Requests started: answered ones plus failed ones."""
    successes: int
    """2xx answers that passed every check."""
    status_counts: dict[int, int]
    errors: ErrorCounts
    check_failed: int
    """2xx answers that failed a scenario check or capture."""
    bytes: int
    """Bytes read from sockets (heads, bodies, chunk framing)."""
    body_bytes: int
    histogram: str
    """HDR histogram of answered requests' latencies (ns), V2 compressed base64."""
    handshakes: int = 0
    """TLS connections set up (0 for http://); each one's time is also part of the
    latency of the request that opened it, as in ab and wrk."""
    handshakes_resumed: int = 0
    """Of those, resumed sessions (abbreviated handshakes)."""
    handshake_histogram: str | None = None
    """HDR histogram (ns) of TLS connection set-up: TCP connect plus handshake."""

    @property
    def responses(self) -> int:
        return sum(self.status_counts.values())

    @property
    def failed(self) -> int:
        """Everything that is not a success: non-2xx, failed checks, socket errors."""
        return self.requests - self.successes

    @property
    def non_2xx(self) -> int:
        return sum(n for code, n in self.status_counts.items() if not 200 <= code < 300)

    def handshake_latency(self) -> LatencyHistogram:
        """TLS set-up times (ns), decoded; empty for plain HTTP."""
        if not self.handshake_histogram:
            return LatencyHistogram()
        return LatencyHistogram.decode(self.handshake_histogram)

    def latency(self) -> LatencyHistogram:
        """The latency histogram, decoded (values in ns)."""
        return LatencyHistogram.decode(self.histogram)

    def percentiles_ms(self, percentiles: Iterable[float]) -> dict[float, float]:
        wanted = list(percentiles)
        values = self.latency().percentiles(wanted)
        return {p: v / 1e6 for p, v in zip(wanted, values, strict=True)}

    @staticmethod
    def _fields_from(d: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "requests": int(d["requests"]),
            "successes": int(d["successes"]),
            "status_counts": {int(k): int(v) for k, v in dict(d["status"]).items()},
            "errors": ErrorCounts(**{k: int(v) for k, v in dict(d["errors"]).items()}),
            "check_failed": int(d["check_failed"]),
            "bytes": int(d["bytes"]),
            "body_bytes": int(d["body_bytes"]),
            "histogram": str(d["histogram"]),
            "handshakes": int(d.get("handshakes", 0)),
            "handshakes_resumed": int(d.get("handshakes_resumed", 0)),
            "handshake_histogram": d.get("handshake_histogram") if d.get("handshakes") else None,
        }


@dataclass(frozen=True)
class StepResult(Counts):
    """One scenario step, timed in its own histogram."""

    name: str = ""

    @classmethod
    def from_native(cls, d: Mapping[str, Any]) -> StepResult:
        return cls(name=str(d["name"]), **Counts._fields_from(d))


@dataclass(frozen=True)
class LoadResult(Counts):
    """A whole run: counts, rates, cost, and the settings that produced them."""

    mode: Mode = "closed"
    url: str = ""
    connections: int = 0
    threads: int = 0
    keepalive: bool = True
    timeout_s: float = 0.0
    rate: float | None = None
    """Open loop: the target rate in requests/s."""
    http2: bool = False
    """Spoken HTTP/2 (h2 over TLS, or h2c); `bytes` then counts bodies only."""
    streams: int = 1
    """HTTP/2: requests in flight per connection."""
    elapsed_s: float = 0.0
    cpu_s: float = 0.0
    """CPU seconds (user + system) of the engine's worker threads."""
    process_cpu_s: float = 0.0
    """CPU seconds of the whole process during the run (getrusage RUSAGE_SELF)."""
    missed: int = 0
    """Open loop: intended sends given up because an overloaded run ran out of time."""
    late_sends: int = 0
    """Open loop: sends the generator itself made late (idle connection, > 2 ms)."""
    server: str | None = None
    """The `Server` header of the first good answer."""
    document_length: int | None = None
    """Body bytes of the first good answer."""
    steps: tuple[StepResult, ...] = ()
    iterations_ok: int = 0
    iterations_failed: int = 0
    iterations_histogram: str | None = None
    """Scenario: latency of whole successful iterations (ns)."""
    first_check_error: str | None = None
    failures_exceeded: bool = False
    """The run's failures passed its `max_failures`: it was stopped there."""
    run_id: str = ""
    io: str = ""
    """The engine's I/O loop: "io_uring" (closed loop where the kernel allows it)
    or "epoll"."""
    series: Series | None = None
    """Per-interval successes, failures and latency (None: `interval_s=0`)."""

    @property
    def requests_per_s(self) -> float:
        return per_second(self.requests, self.elapsed_s)

    @property
    def successes_per_s(self) -> float:
        return per_second(self.successes, self.elapsed_s)

    @property
    def bytes_per_s(self) -> float:
        return per_second(self.bytes, self.elapsed_s)

    @property
    def requests_per_cpu_s(self) -> float:
        """What one CPU-second of the generator buys: its efficiency."""
        return per_second(self.requests, self.cpu_s)

    @classmethod
    def from_native(cls, d: Mapping[str, Any], **settings: Any) -> LoadResult:
        iterations = d.get("iterations")
        return cls(
            **Counts._fields_from(d),
            **settings,
            elapsed_s=float(d["elapsed_s"]),
            cpu_s=float(d["cpu_s"]),
            threads=int(d["threads"]),
            connections=int(d["connections"]),
            missed=int(d["missed"]),
            late_sends=int(d.get("late_sends", 0)),
            server=d.get("server"),
            document_length=d.get("doc_len"),
            steps=tuple(StepResult.from_native(s) for s in d.get("steps", ())),
            iterations_ok=int(iterations["ok"]) if iterations else 0,
            iterations_failed=int(iterations["failed"]) if iterations else 0,
            iterations_histogram=iterations["histogram"] if iterations else None,
            first_check_error=d.get("first_check_error"),
            failures_exceeded=bool(d.get("failures_exceeded", False)),
            run_id=str(d.get("run_id", "")),
            io=str(d.get("io", "")),
            series=Series.from_native(d.get("series"), d.get("started_at")),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (status codes become string keys, as JSON requires)."""
        out = asdict(self)
        out["status_counts"] = {str(k): v for k, v in self.status_counts.items()}
        for s in out["steps"]:
            s["status_counts"] = {str(k): v for k, v in s["status_counts"].items()}
        out["requests_per_s"] = self.requests_per_s
        out["bytes_per_s"] = self.bytes_per_s
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> LoadResult:
        """Inverse of `to_dict` (for results read back from disk or another node)."""
        data = {f.name: d[f.name] for f in fields(cls) if f.name in d}
        data["status_counts"] = {int(k): v for k, v in d["status_counts"].items()}
        data["errors"] = ErrorCounts(**d["errors"])
        data["series"] = Series.from_dict(d.get("series"))
        data["steps"] = tuple(
            StepResult(**{**s, "status_counts": {int(k): v for k, v in s["status_counts"].items()},
                          "errors": ErrorCounts(**s["errors"])})
            for s in d.get("steps", ())
        )
        return cls(**data)

    @classmethod
    def merge(cls, results: Iterable[LoadResult]) -> LoadResult:
        """Combine shards of one case run at the same time (e.g. on several nodes).

        Counts and histograms add up exactly; elapsed is the longest shard, so
        rates are those of the combined load over the common window. Time series
        merge by interval index (the shards started together); if any shard kept
        none, neither does the merge.
        """
        parts = list(results)
        if not parts:
            raise ValueError("nothing to merge")
        first = parts[0]
        shard_series = [p.series for p in parts]
        series = (Series.merge(s for s in shard_series if s is not None)
                  if all(s is not None for s in shard_series) else None)
        status: dict[int, int] = {}
        errors = ErrorCounts()
        for p in parts:
            status = _add_counts(status, p.status_counts)
            errors = errors + p.errors
        steps = tuple(
            replace(
                group[0],
                requests=sum(s.requests for s in group),
                successes=sum(s.successes for s in group),
                status_counts=_merged_status(group),
                errors=sum((s.errors for s in group), ErrorCounts()),
                check_failed=sum(s.check_failed for s in group),
                bytes=sum(s.bytes for s in group),
                body_bytes=sum(s.body_bytes for s in group),
                histogram=_merge_hdr(s.histogram for s in group),
                **_merged_handshakes(group),
            )
            for group in zip(*(p.steps for p in parts), strict=True)
        )
        return replace(
            first,
            requests=sum(p.requests for p in parts),
            successes=sum(p.successes for p in parts),
            status_counts=status,
            errors=errors,
            check_failed=sum(p.check_failed for p in parts),
            bytes=sum(p.bytes for p in parts),
            body_bytes=sum(p.body_bytes for p in parts),
            histogram=_merge_hdr(p.histogram for p in parts),
            **_merged_handshakes(parts),
            connections=sum(p.connections for p in parts),
            threads=sum(p.threads for p in parts),
            rate=sum(p.rate for p in parts if p.rate) or None,
            elapsed_s=max(p.elapsed_s for p in parts),
            cpu_s=sum(p.cpu_s for p in parts),
            process_cpu_s=sum(p.process_cpu_s for p in parts),
            missed=sum(p.missed for p in parts),
            late_sends=sum(p.late_sends for p in parts),
            failures_exceeded=any(p.failures_exceeded for p in parts),
            steps=steps,
            iterations_ok=sum(p.iterations_ok for p in parts),
            iterations_failed=sum(p.iterations_failed for p in parts),
            iterations_histogram=(_merge_hdr(p.iterations_histogram for p in parts)
                                  if first.iterations_histogram else None),
            series=series,
        )


def _merged_status(group: Iterable[Counts]) -> dict[int, int]:
    out: dict[int, int] = {}
    for s in group:
        out = _add_counts(out, s.status_counts)
    return out


def _merged_handshakes(group: Iterable[Counts]) -> dict[str, Any]:
    parts = list(group)
    shakes = sum(p.handshakes for p in parts)
    return {"handshakes": shakes,
            "handshakes_resumed": sum(p.handshakes_resumed for p in parts),
            "handshake_histogram": (_merge_hdr(p.handshake_histogram for p in parts)
                                    if shakes else None)}
