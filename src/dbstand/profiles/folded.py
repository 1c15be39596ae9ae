"""Folded stacks ("frame;frame;frame count" lines): shares, perf's samples, flame graphs."""

from __future__ import annotations

import subprocess
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dbstand.profiles import tools

UNKNOWN = "[unknown]"


def read(path: Path) -> Counter[str]:
    stacks: Counter[str] = Counter()
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            stacks[stack] += int(count)
    return stacks


def write(stacks: Counter[str], path: Path) -> None:
    path.write_text("".join(f"{s} {n}\n" for s, n in sorted(stacks.items())))


def summary(stacks: Counter[str], top: int = 8) -> dict[str, Any]:
    """Samples, the share whose unwinding stopped short (an `[unknown]` frame), the share
    whose innermost frame has no symbol (`[mariadbd]`: a stripped function), and the
    frames holding the largest inclusive shares (each frame counted once per stack)."""
    total = sum(stacks.values())
    if not total:
        return {"samples": 0}
    unknown = sum(n for s, n in stacks.items() if UNKNOWN in s.split(";"))
    unnamed = sum(n for s, n in stacks.items() if s.rsplit(";", 1)[-1].startswith("["))
    inclusive: Counter[str] = Counter()
    for stack, n in stacks.items():
        for frame in set(stack.split(";")[1:]):   # the first frame is the process
            if not frame.startswith("["):
                inclusive[frame] += n
    return {"samples": total, "unknown_share": round(unknown / total, 4),
            "unnamed_leaf_share": round(unnamed / total, 4),
            "top_frames": [{"frame": f, "share": round(n / total, 4)}
                           for f, n in inclusive.most_common(top)]}


def share_of(stacks: Counter[str], needle: str) -> float:
    """Share of samples with a frame containing `needle` (own code's share)."""
    total = sum(stacks.values())
    hit = sum(n for s, n in stacks.items() if any(needle in f for f in s.split(";")))
    return hit / total if total else 0.0


def from_perf_script(script: str, inferno_collapse: str) -> Counter[str]:
    done = subprocess.run([inferno_collapse, "--all"], input=script, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"inferno-collapse-perf failed: {done.stderr.strip()[:200]}")
    stacks: Counter[str] = Counter()
    for line in done.stdout.splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            stacks[stack] += int(count)
    return stacks


def flamegraph(stacks: Counter[str], svg: Path, title: str) -> None:
    """An SVG flame graph drawn by inferno (CDDL-1.0)."""
    lines: Iterable[str] = (f"{s} {n}" for s, n in sorted(stacks.items()))
    done = subprocess.run([tools.inferno("inferno-flamegraph"), "--title", title],
                          input="\n".join(lines) + "\n", capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"inferno-flamegraph failed: {done.stderr.strip()[:200]}")
    svg.write_text(done.stdout)
