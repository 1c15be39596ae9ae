"""Workload docquery: a page of documents behind one Tornado endpoint (seed 003)."""
