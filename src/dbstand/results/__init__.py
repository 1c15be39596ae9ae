"""Results: one versioned JSON Lines schema, appended case by case."""

from dbstand.results.schema import SCHEMA, case_record
from dbstand.results.store import ResultsFile, ResultsWriter, read_results

__all__ = ["SCHEMA", "ResultsFile", "ResultsWriter", "case_record", "read_results"]
