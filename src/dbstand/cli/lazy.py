"""Subcommands imported only when invoked, so `dbstand --help` loads no driver.

A `LazyGroup` knows each subcommand by name, a one-line help and a `module:attr`
path (a Typer app, or a function that becomes a single command). Help listings use
the stored line; the module is imported when the command itself runs.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, ClassVar

import click
import typer
from typer.core import TyperGroup


@dataclass(frozen=True)
class LazyCommand:
    """Where a subcommand lives and what its help line says."""

    path: str   # "package.module:attr"
    help: str

    def load(self, name: str) -> click.Command:
        module_name, _, attr = self.path.partition(":")
        obj: Any = getattr(importlib.import_module(module_name), attr)
        if isinstance(obj, typer.Typer):
            command = typer.main.get_command(obj)
        elif isinstance(obj, click.Command):
            command = obj
        else:  # a plain function: a Typer app of one command
            single = typer.Typer(add_completion=False)
            single.command(name, help=obj.__doc__)(obj)
            command = typer.main.get_command(single)
        command.name = name
        return command


class LazyGroup(TyperGroup):
    """A Typer group whose subcommands come from `lazy_commands` on first use."""

    lazy_commands: ClassVar[dict[str, LazyCommand]] = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._loaded: dict[str, click.Command] = {}
        self._listing = False

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = self.lazy_commands.get(cmd_name)
        if entry is None:
            return super().get_command(ctx, cmd_name)
        if self._listing:  # a help listing needs the name and the line only
            return click.Command(cmd_name, help=entry.help, short_help=entry.help)
        if cmd_name not in self._loaded:
            self._loaded[cmd_name] = entry.load(cmd_name)
        return self._loaded[cmd_name]

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


def lazy_group(commands: dict[str, LazyCommand]) -> type[LazyGroup]:
    """A LazyGroup class bound to `commands` (Typer takes a class, not an instance)."""
    return type("LazyGroup", (LazyGroup,), {"lazy_commands": dict(commands)})
