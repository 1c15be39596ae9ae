"""PostgreSQL: libpq's URL schemes, port 5432, managed from the server binaries."""

from dbstand.targets.kinds import TargetKind

KIND = TargetKind(
    name="postgresql", dialect="postgresql", title="PostgreSQL",
    schemes=("postgresql", "postgres", "pg"),
    default_port=5432, default_user="postgres",
    admin_stacks=("psycopg", "psycopg2", "pg8000"),
    managed="dbstand.targets.postgresql.managed:ManagedPostgres",
    statements="pg_stat_statements",
    run_lock="dbstand.targets.postgresql.lock:hold",
    paramstyle="format",
    default_stacks={"kv": ("psycopg",), "batch": ("psycopg2", "psycopg", "asyncpg"),
                    "python": ("psycopg",), "script": ("psycopg", "pgbench")},
)
