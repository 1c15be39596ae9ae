"""`--cluster` values: which Dask cluster carries the load (parsed without importing Dask).

    local:N                         a LocalCluster of N worker processes on this host,
                                    every listener on 127.0.0.1
    tcp://HOST[:PORT]               a running scheduler on a trusted network
    tls://HOST[:PORT]?ca=..&cert=..&key=..
                                    a running scheduler over TLS (mutual: the scheduler
                                    checks our certificate, we check its); without the
                                    three files, Dask's own config (distributed.comm.tls.*)

Remote forms take `workers=N` (wait for N workers, use those N; default: every worker
present) and `timeout=S` (seconds to connect and to wait for workers, default 30).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from dbstand.errors import UserError

DEFAULT_PORT = 8786
MAX_LOCAL_WORKERS = 256
DEFAULT_TIMEOUT_S = 30.0
_REMOTE_OPTIONS = ("workers", "timeout", "ca", "cert", "key")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")


@dataclass(frozen=True)
class ClusterSpec:
    """A parsed `--cluster` value."""

    kind: str                       # "local" or "remote"
    workers: int | None = None      # local: how many; remote: how many to wait for
    address: str | None = None      # remote: tcp://host:port or tls://host:port
    tls_ca: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S

    @property
    def label(self) -> str:
        """What results record: the cluster's form, never a file path or secret."""
        if self.kind == "local":
            return f"local:{self.workers}"
        text = str(self.address)
        return f"{text}?workers={self.workers}" if self.workers else text

    @property
    def uses_tls(self) -> bool:
        return bool(self.address and self.address.startswith("tls://"))

    @property
    def on_loopback(self) -> bool:
        if self.kind == "local":
            return True
        host = urlsplit(str(self.address)).hostname or ""
        return host in LOOPBACK_HOSTS or host.startswith("127.")


def _positive_int(value: str, what: str, text: str) -> int:
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise UserError(f"--cluster {text!r}: {what} must be a whole number of at least 1")
    return n


def parse_cluster(text: str) -> ClusterSpec:
    """Parse `local:N`, `tcp://HOST[:PORT]` or `tls://HOST[:PORT]` (see module doc)."""
    raw = text.strip()
    if raw.lower().startswith("local:"):
        n = _positive_int(raw.split(":", 1)[1], "the number of workers", text)
        if n > MAX_LOCAL_WORKERS:
            raise UserError(f"--cluster {text!r}: at most {MAX_LOCAL_WORKERS} local workers")
        return ClusterSpec("local", workers=n)
    parts = urlsplit(raw)
    scheme = parts.scheme.lower()
    if scheme not in ("tcp", "tls") or not parts.hostname:
        raise UserError(f"--cluster {text!r}: use local:N, tcp://HOST[:PORT] or "
                        "tls://HOST[:PORT]?ca=FILE&cert=FILE&key=FILE")
    if parts.path not in ("", "/") or parts.username or parts.password:
        raise UserError(f"--cluster {text!r}: a scheduler address has no path or user")
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError:
        raise UserError(f"--cluster {text!r}: bad port") from None
    options = dict(parse_qsl(parts.query, keep_blank_values=True))
    unknown = sorted(set(options) - set(_REMOTE_OPTIONS))
    if unknown:
        raise UserError(f"--cluster {text!r}: unknown option(s) {', '.join(unknown)} "
                        f"(known: {', '.join(_REMOTE_OPTIONS)})")
    files = {k: options.get(k) for k in ("ca", "cert", "key")}
    given = [k for k, v in files.items() if v]
    if given and scheme != "tls":
        raise UserError(f"--cluster {text!r}: certificates ({', '.join(given)}) need tls://")
    if given and len(given) != 3:
        raise UserError(f"--cluster {text!r}: give all of ca, cert and key, or none (then "
                        "Dask's distributed.comm.tls settings apply)")
    for key, path in files.items():
        if path and not Path(path).expanduser().is_file():
            raise UserError(f"--cluster: {key} file {path} does not exist")
    timeout = DEFAULT_TIMEOUT_S
    if "timeout" in options:
        try:
            timeout = float(options["timeout"])
        except ValueError:
            timeout = 0.0
        if timeout <= 0:
            raise UserError(f"--cluster {text!r}: timeout must be a positive number of seconds")
    workers = (_positive_int(options["workers"], "workers", text)
               if "workers" in options else None)
    host = parts.hostname
    host = f"[{host}]" if ":" in host else host
    return ClusterSpec(
        "remote", workers=workers, address=f"{scheme}://{host}:{port}",
        tls_ca=_expand(files["ca"]), tls_cert=_expand(files["cert"]),
        tls_key=_expand(files["key"]), timeout_s=timeout)


def _expand(path: str | None) -> str | None:
    return str(Path(path).expanduser()) if path else None
