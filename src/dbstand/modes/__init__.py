"""Modes: how operations are issued (sync, threads, asyncio, processes) and sweeps."""

from dbstand.modes.spec import ModeSpec, expand_modes, parse_mode

__all__ = ["ModeSpec", "expand_modes", "parse_mode"]
