"""psycopg2 (libpq; parameters interpolated client-side)."""

from __future__ import annotations

from dbstand.drivers import psycopg2 as psycopg2_driver
from dbstand.workloads.kv.dbapi import DbApiKvClient


class Psycopg2Kv(DbApiKvClient):
    stack = "psycopg2"
    paramstyle = "format"
    driver = psycopg2_driver
