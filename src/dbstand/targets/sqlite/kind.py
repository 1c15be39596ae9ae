"""SQLite, embedded in the client process: no server, no port."""

from dbstand.targets.kinds import TargetKind

KIND = TargetKind(
    name="sqlite", dialect="sqlite", title="SQLite", schemes=("sqlite",), embedded=True,
    admin_stacks=("sqlite3",),
    run_lock="dbstand.targets.sqlite.lock:hold",
    paramstyle="qmark",
    default_stacks={"kv": ("sqlite3",), "batch": ("sqlite3",),
                    "python": ("sqlite3",), "script": ("sqlite3",)},
)
