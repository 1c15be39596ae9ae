"""Workload `webtech`: server technologies on the same small pages (specs/webtech.md,
seed 001), each stack a manifest folder under stacks/."""
