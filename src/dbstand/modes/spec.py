"""Mode names as users type them: sync, threads:N, asyncio:N, processes:P[xasyncio:N].

`--mode asyncio:1,5,10` is a sweep: a bare number continues the previous kind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dbstand.errors import UserError

_MODE = re.compile(r"^(sync|threads:(\d+)|asyncio:(\d+)|processes:(\d+)(?:x(?:asyncio:)?(\d+))?)$",
                   re.IGNORECASE)
MAX_WORKERS = 1024

#: the default sweep levels per kind (methodology: "Concurrency sweeps")
DEFAULT_SWEEPS = {
    "asyncio": (1, 2, 5, 10, 25, 50, 100),
    "threads": (1, 2, 4, 8, 16, 32),
    "processes": (1, 2, 4),
}


@dataclass(frozen=True)
class ModeSpec:
    """A parsed mode. `coroutines` > 0 means asyncio (inside each process if processes)."""

    kind: str              # sync | threads | asyncio | processes
    workers: int = 1       # threads, coroutines (asyncio) or processes
    coroutines: int = 0    # per process, for processes:PxAsyncio:N
    shared: bool = False   # coroutines share one multiplexed connection

    @property
    def name(self) -> str:
        base = {"sync": "sync", "threads": f"threads:{self.workers}",
                "asyncio": f"asyncio:{self.workers}"}.get(self.kind)
        if base is None:
            base = f"processes:{self.workers}"
            if self.coroutines:
                base += f"xasyncio:{self.coroutines}"
        return base + ("+shared" if self.shared else "")

    @property
    def is_async(self) -> bool:
        return self.kind == "asyncio" or self.coroutines > 0

    @property
    def concurrency(self) -> int:
        """Operations in flight at once."""
        if self.kind == "processes":
            return self.workers * max(1, self.coroutines)
        return self.workers

    @property
    def connections(self) -> int:
        if self.shared:
            return self.workers if self.kind == "processes" else 1
        return self.concurrency


def parse_mode(text: str) -> ModeSpec:
    """Parse one mode; `+shared` asks coroutines to share one connection."""
    raw = text.strip()
    shared = raw.lower().endswith("+shared")
    body = raw[: -len("+shared")] if shared else raw
    m = _MODE.match(body)
    if not m:
        raise UserError(f"unknown mode {text!r} (use sync, threads:N, asyncio:N, processes:P "
                        "or processes:PxAsyncio:N; add +shared to share one connection)")
    if m.group(1).lower() == "sync":
        spec = ModeSpec("sync")
    elif m.group(2):
        spec = ModeSpec("threads", int(m.group(2)))
    elif m.group(3):
        spec = ModeSpec("asyncio", int(m.group(3)))
    else:
        spec = ModeSpec("processes", int(m.group(4)), int(m.group(5) or 0))
    numbers = [spec.workers] + ([spec.coroutines] if spec.coroutines else [])
    if any(n < 1 or n > MAX_WORKERS for n in numbers):
        raise UserError(f"mode {text!r}: worker counts must be between 1 and {MAX_WORKERS}")
    if shared and not spec.is_async:
        raise UserError(f"mode {text!r}: +shared applies to asyncio coroutines only")
    return ModeSpec(spec.kind, spec.workers, spec.coroutines, shared)


def expand_modes(items: list[str]) -> list[ModeSpec]:
    """`["asyncio:1", "5", "10", "threads:4"]` -> asyncio:1, asyncio:5, asyncio:10, threads:4."""
    out: list[ModeSpec] = []
    for item in items:
        if item.strip().isdigit():
            if not out or out[-1].kind not in ("asyncio", "threads", "processes"):
                raise UserError(f"mode {item!r}: a bare number must follow asyncio:N, "
                                "threads:N or processes:N")
            prev = out[-1]
            n = int(item)
            if prev.kind == "processes" and prev.coroutines:
                spec = parse_mode(f"processes:{prev.workers}xasyncio:{n}")
            else:
                spec = parse_mode(f"{prev.kind}:{n}")
            out.append(ModeSpec(spec.kind, spec.workers, spec.coroutines, prev.shared))
        else:
            out.append(parse_mode(item))
    return out


def default_sweep(kind: str) -> list[ModeSpec]:
    if kind not in DEFAULT_SWEEPS:
        raise UserError(f"no default sweep for {kind!r} (known: {', '.join(DEFAULT_SWEEPS)})")
    return [parse_mode(f"{kind}:{n}") for n in DEFAULT_SWEEPS[kind]]
