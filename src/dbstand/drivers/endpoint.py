"""Where a server target is: host, port, user, database and password, with the kind's
defaults, as the drivers need them (each names them its own way)."""

from __future__ import annotations

from dataclasses import dataclass, field

from dbstand.errors import TargetError
from dbstand.targets.kinds import get_kind
from dbstand.targets.url import TargetURL


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int
    user: str
    database: str
    password: str = field(repr=False, default="")


def endpoint(target: TargetURL, *, database_required: bool = False) -> Endpoint:
    """The target's endpoint; the password of a managed server is found when omitted.

    `database_required`: MySQL has no default database and dbstand never writes into
    one it was not given.
    """
    from dbstand.targets.managed import password_for

    kind = get_kind(target.kind)
    if database_required and not target.database:
        raise TargetError(f"{target.redacted()}: name a database, e.g. "
                          f"{kind.schemes[0]}://user@127.0.0.1:{kind.default_port}/test")
    user = target.user or kind.default_user or "root"
    return Endpoint(host=target.host or "127.0.0.1", port=target.port or kind.default_port or 0,
                    user=user, database=target.database or user,
                    password=target.password or password_for(target) or "")
