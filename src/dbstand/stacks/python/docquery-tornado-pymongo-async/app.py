"""dbstand docquery stack: Tornado 6 + pymongo's native asyncio API.

`AsyncMongoClient` (pymongo >= 4.10) speaks to the server on the asyncio loop itself,
without Motor's worker threads; MongoDB deprecated Motor in its favour. `async def
get` awaits the query, so the loop serves other requests meanwhile. Everything comes
from the DBSTAND_* environment (docs/stack-manifest.md).
"""

from __future__ import annotations

import asyncio

import docquery_tornado as dq
from pymongo import AsyncMongoClient


async def serve() -> None:
    await dq.serve_awaited(AsyncMongoClient(**dq.mongo_options()))


if __name__ == "__main__":
    asyncio.run(serve())
