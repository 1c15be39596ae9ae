"""Workload `python`: the user's own functions, given connections by dbstand."""
