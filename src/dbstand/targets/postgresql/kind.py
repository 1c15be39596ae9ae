"""PostgreSQL: libpq's URL schemes, port 5432, managed from the server binaries."""

from dbstand.targets.kinds import TargetKind

KIND = TargetKind(
    name="postgresql", dialect="postgresql", title="PostgreSQL",
    schemes=("postgresql", "postgres", "pg"),
    default_port=5432, default_user="postgres",
    admin_stacks=("psycopg", "psycopg2", "pg8000"),
    managed="dbstand.targets.postgresql.managed:ManagedPostgres",
    statements="dbstand.probes.statements:PgStatStatements",
)
