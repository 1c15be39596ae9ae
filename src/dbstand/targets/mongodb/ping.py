"""A trivial request to a MongoDB-wire server (the `ping` command) for the network
axis's RTT check (dbstand/network/route.py): a kind without a SQL admin stack keeps
its ping here."""

from __future__ import annotations

from typing import Any

from dbstand.targets.url import TargetURL


class MongoPinger:
    """One pymongo connection (no pool growth: one client, direct) sending `ping`."""

    def __init__(self, target: TargetURL):
        import pymongo

        self.client: Any = pymongo.MongoClient(
            target.secret(), directConnection=True, maxPoolSize=1,
            serverSelectionTimeoutMS=10_000, appname="dbstand-ping")
        self.client.admin.command("ping")

    def ping(self) -> None:
        self.client.admin.command("ping")

    def close(self) -> None:
        self.client.close()


def open_pinger(target: TargetURL) -> MongoPinger:
    return MongoPinger(target)
