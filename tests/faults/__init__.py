"""Fault-injection tests (marker `faults`)."""
