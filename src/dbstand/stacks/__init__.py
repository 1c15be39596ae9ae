"""Stacks: adapters for the client code under test, declared in one registry."""

from dbstand.stacks.catalog import STACKS, StackSpec, get_stack

__all__ = ["STACKS", "StackSpec", "get_stack"]
