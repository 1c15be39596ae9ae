"""Workload `http` (run http --scenario): a user's HTTP scenario on the native engine."""
