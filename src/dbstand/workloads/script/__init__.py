"""Workload `script`: pgbench-language scripts through every driver."""
