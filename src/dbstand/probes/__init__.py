"""Probes: what a case costs beyond its wall time (methodology: "Server-side cost").

Each probe is sampled at the edges of the timed part of every counted iteration
(the engine calls `begin()`/`end()`; see engine/runner.py), accumulating over the
case: CPU (user + sys) of the client and of the database server's process tree,
the server's peak RSS, and statements by kind counted by the server. Probes that
would slow the timed loop itself (SQLite's trace callback) run during warm-up only.
"""

from dbstand.engine.runner import Probe

KINDS = ("select", "select_for_update", "insert", "update", "delete", "other")

__all__ = ["KINDS", "Probe"]
