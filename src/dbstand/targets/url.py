"""Target URLs: parsing, validation and password redaction.

Every URL dbstand prints or stores goes through `TargetURL.redacted()`, so a
password given on the command line never reaches output, logs or results.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from dbstand.errors import TargetError
from dbstand.targets.kinds import schemes


@dataclass(frozen=True)
class TargetURL:
    """A parsed target URL. `kind` is the database family, whatever alias was typed."""

    kind: str
    scheme: str
    host: str | None = None
    port: int | None = None
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    database: str | None = None
    query: tuple[tuple[str, str], ...] = ()
    #: set when the URL's host and port are a proxy's in front of the database (the
    #: network axis, dbstand/network/): the database itself is `route.origin`
    route: Route | None = field(default=None, compare=False, repr=False)

    def direct(self) -> TargetURL:
        """The database itself: where probes and managed-server records look."""
        return self.route.origin if self.route is not None else self

    @property
    def dialect(self) -> str | None:
        """The SQL dialect the target speaks (its kind's descriptor), e.g. "postgresql"."""
        from dbstand.targets.kinds import get_kind

        return get_kind(self.kind).dialect

    @property
    def is_file(self) -> bool:
        """An embedded database in a file (SQLite): a path, no server to connect to."""
        from dbstand.targets.kinds import get_kind

        return get_kind(self.kind).embedded

    @property
    def is_memory(self) -> bool:
        """An in-memory SQLite database (`sqlite://` or `sqlite:///:memory:`)."""
        return self.kind == "sqlite" and self.database in (None, "", ":memory:")

    def option(self, name: str, default: str | None = None) -> str | None:
        """A `?name=value` option of the URL."""
        for key, value in self.query:
            if key == name:
                return value
        return default

    def with_password(self, password: str | None) -> TargetURL:
        return replace(self, password=password)

    def _render(self, password: str | None) -> str:
        if self.kind == "sqlite":
            text = "sqlite://" if self.is_memory else f"sqlite:///{self.database}"
        else:
            auth = ""
            if self.user:
                auth = quote(self.user, safe="")
                if password:
                    auth += ":" + password
                auth += "@"
            host = self.host or ""
            if ":" in host:
                host = f"[{host}]"
            port = f":{self.port}" if self.port else ""
            db = f"/{quote(self.database, safe='')}" if self.database else ""
            text = f"{self.scheme}://{auth}{host}{port}{db}"
        if self.query:
            text += "?" + "&".join(f"{k}={v}" for k, v in self.query)
        return text

    def redacted(self) -> str:
        """The URL as dbstand shows it: any password replaced by `***`."""
        return self._render("***" if self.password else None)

    def secret(self) -> str:
        """The URL with its real password, for drivers only: never print it."""
        return self._render(quote(self.password, safe="") if self.password else None)

    def __str__(self) -> str:
        return self.redacted()


@dataclass(frozen=True)
class Route:
    """How a routed target reaches its database: through the proxy process `proxy_pid`
    (whose CPU is measured apart, API on 127.0.0.1:`api_port`, proxy `proxy`) on the
    path labelled `label` ("0.5 ms")."""

    origin: TargetURL
    proxy_pid: int
    label: str
    api_host: str
    api_port: int
    proxy: str


def parse_target_url(text: str) -> TargetURL:
    """Parse a target URL, raising one clear `TargetError` when it is malformed."""
    if "://" not in text:
        raise TargetError(
            f"malformed target URL {_safe(text)!r}: expected SCHEME://..., "
            f"e.g. sqlite:///path/to.db or postgresql://user@host:5432/db"
        )
    scheme_text = text.split("://", 1)[0].lower()
    base_scheme = scheme_text.split("+", 1)[0]
    known = schemes()
    kind = known.get(base_scheme)
    if kind is None:
        raise TargetError(
            f"malformed target URL {_safe(text)!r}: unknown scheme {scheme_text!r} "
            f"(known: {', '.join(sorted(known))})"
        )
    if kind == "sqlite":
        return _parse_sqlite(text, base_scheme)
    _check_userinfo(text)
    try:
        parts = urlsplit(text)
    except ValueError:  # the only ValueError left: brackets around the host
        raise TargetError(f"malformed target URL {_safe(text)!r}: bad host "
                          "(an IPv6 address goes in [brackets])") from None
    port = _port(parts.netloc.rpartition("@")[2], text)
    if not parts.hostname:
        raise TargetError(f"malformed target URL {_safe(text)!r}: no host")
    database = unquote(parts.path.lstrip("/")) or None
    if database and "/" in database:
        raise TargetError(f"malformed target URL {_safe(text)!r}: bad database name")
    return TargetURL(
        kind=kind,
        scheme=base_scheme,
        host=parts.hostname,
        port=port,
        user=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password is not None else None,
        database=database,
        query=tuple(parse_qsl(parts.query)),
    )


_RESERVED_IN_USERINFO = "/?#[]"


def _check_userinfo(text: str) -> None:
    """A user or password holding a character that ends the URL's authority ("/", "?",
    "#") or starts an IPv6 host ("[", "]") would be split wrongly and its pieces shown
    as a host, port or path: ask for percent-encoding instead, showing no part of it.

    It is such a password when the URL's first segment (up to "/", "?" or "#") is
    `user:something` that is no port, or when an "@" shows up in the path."""
    rest = text.split("://", 1)[1]
    if "@" not in rest:
        return
    first = re.split(r"[/?#]", rest, maxsplit=1)[0]
    path = rest[len(first):]
    path = re.split(r"[?#]", path, maxsplit=1)[0]
    user_pass = ":" in first and not first.rpartition(":")[2].isdigit() \
        and "@" not in first and not first.startswith("[")
    if not (user_pass or "@" in path or "[" in first.partition("@")[0]):
        return
    userinfo = rest.rpartition("@")[0]
    shown = [ch for ch in _RESERVED_IN_USERINFO if ch in userinfo] or ["/"]
    codes = ", ".join(f"{ch} as %{ord(ch):02X}" for ch in shown)
    raise TargetError(f"malformed target URL {_safe(text)!r}: the user or password "
                      f"holds {' '.join(shown)}, which must be percent-encoded in a "
                      f"URL ({codes})")


def _port(hostport: str, text: str) -> int | None:
    """The port after the host, checked here so that no library message echoes it."""
    if hostport.startswith("["):
        tail = hostport.partition("]")[2]
        value = tail[1:] if tail.startswith(":") else None
    else:
        value = hostport.rpartition(":")[2] if ":" in hostport else None
    if value is None or value == "":
        return None
    if not value.isdigit() or not 1 <= int(value) <= 65535:
        raise TargetError(f"malformed target URL {_safe(text)!r}: the port must be a number "
                          "from 1 to 65535")
    return int(value)


def _parse_sqlite(text: str, scheme: str) -> TargetURL:
    rest = text.split("://", 1)[1]
    rest, _, query = rest.partition("?")
    if rest in ("", "/:memory:", ":memory:"):
        return TargetURL(kind="sqlite", scheme=scheme, database=None,
                         query=tuple(parse_qsl(query)))
    if not rest.startswith("/"):
        raise TargetError(
            f"malformed target URL {text!r}: use sqlite:///relative.db, "
            "sqlite:////absolute/path.db or sqlite:// for in-memory"
        )
    return TargetURL(kind="sqlite", scheme=scheme, database=unquote(rest[1:]),
                     query=tuple(parse_qsl(query)))


def _safe(text: str) -> str:
    """Strip a possible password from a URL that failed to parse, before echoing it.

    Everything between the user's ":" and the last "@" is the password as typed, even
    when it holds "/" or "?" (which would end the authority in a well-formed URL)."""
    if "://" in text and "@" in text:
        scheme, rest = text.split("://", 1)
        auth, _, host = rest.rpartition("@")
        if ":" in auth:
            return f"{scheme}://{auth.split(':', 1)[0]}:***@{host}"
    return text
