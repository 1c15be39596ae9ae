"""Results files: the record kinds (schema.py), the writer and reader (store.py) and
the environment recorded with every case (environment.py). Imports no workload."""

from dbstand.results.schema import SCHEMA, CaseRecord, RunFooter, RunHeader

__all__ = ["SCHEMA", "CaseRecord", "RunFooter", "RunHeader"]
