"""dbstand docquery stack: Tornado 6 + Motor, the asynchronous driver of the study.

`async def get` awaits the query, so the loop serves other requests meanwhile.
Motor 3 wraps pymongo: each blocking pymongo call runs on a worker thread and its
result comes back to the asyncio loop, which is how the study's Motor worked too.
(MongoDB has deprecated Motor in favour of pymongo's own async API: see the
docquery-tornado-pymongo-async stack.) Everything comes from the DBSTAND_*
environment (docs/stack-manifest.md).
"""

from __future__ import annotations

import asyncio

import docquery_tornado as dq
from motor.motor_asyncio import AsyncIOMotorClient


async def serve() -> None:
    await dq.serve_awaited(AsyncIOMotorClient(**dq.mongo_options()))


if __name__ == "__main__":
    asyncio.run(serve())
