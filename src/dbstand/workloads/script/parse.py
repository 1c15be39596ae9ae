"""pgbench's script language, read into commands dbstand's sessions run.

A script is SQL commands (each ending at a `;` outside quotes, possibly over several
lines) and meta commands (`\\set`, `\\sleep`, `\\if`/`\\elif`/`\\else`/`\\endif`, one
line each, `\\` at the end of a line continuing it). `:name` in SQL is a variable: it
becomes a bound parameter in the driver's paramstyle, never text pasted into the SQL.
BEGIN/END/COMMIT/ROLLBACK become the session's transaction calls, so a database
without `END` (MariaDB) runs the same script. Every mistake is one line naming the
file and line.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path

from dbstand.errors import UserError
from dbstand.workloads.script.expr import Expr, ExprError, parse_expr

#: statements that are transaction control, by their words (upper case, spaces single)
TX_CONTROL = {
    "BEGIN": "begin", "BEGIN TRANSACTION": "begin", "BEGIN WORK": "begin",
    "START TRANSACTION": "begin",
    "END": "commit", "END TRANSACTION": "commit", "END WORK": "commit",
    "COMMIT": "commit", "COMMIT TRANSACTION": "commit", "COMMIT WORK": "commit",
    "ROLLBACK": "rollback", "ROLLBACK TRANSACTION": "rollback", "ROLLBACK WORK": "rollback",
    "ABORT": "rollback",
}
_UNSUPPORTED = ("setshell", "shell", "gset", "aset", "startpipeline", "endpipeline",
                "syncpipeline")
_NAME = re.compile(r"[A-Za-z0-9_]+")
_WEIGHT = re.compile(r"^(?P<name>.+)@(?P<weight>\d+)$")
SLEEP_UNITS = {"us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


@dataclass(frozen=True)
class Command:
    """One command of a script; `text` is what the per-statement table shows."""

    line: int
    text: str
    kind: str                                # sql, set, sleep, if, elif, else, endif
    pieces: tuple[str, ...] = ()             # sql: the text around its variables
    params: tuple[str, ...] = ()             # sql: variable names, in order
    tx: str | None = None                    # sql: begin, commit or rollback
    var: str = ""                            # set: the variable assigned
    expr: Expr | None = None                 # set, if, elif, sleep: the expression
    unit_ns: int = 0                         # sleep: ns per unit
    next_arm: int = -1                       # if/elif: where to go when false
    end: int = -1                            # elif/else: the \endif, when reached in turn

    def sql(self, placeholder: list[str], escape_percent: bool) -> str:
        """The statement with the driver's placeholders (`placeholder[i]` for the i-th
        parameter); `%` doubled for drivers whose paramstyle uses it."""
        out = []
        for i, piece in enumerate(self.pieces):
            out.append(piece.replace("%", "%%") if escape_percent else piece)
            if i < len(self.params):
                out.append(placeholder[i])
        return "".join(out)


@dataclass(frozen=True)
class Script:
    name: str                   # file name or built-in name, as the user gave it
    weight: int
    commands: tuple[Command, ...]
    source: str = field(default="", compare=False)

    @property
    def statements(self) -> list[Command]:
        return [c for c in self.commands if c.kind == "sql"]


def split_weight(spec: str) -> tuple[str, int]:
    """`file.sql@3` -> (`file.sql`, 3); no `@N` is weight 1."""
    m = _WEIGHT.match(spec)
    if m is None:
        return spec, 1
    return m["name"], int(m["weight"])


def _sql_command(text: str, line: int, where: str) -> Command:
    """Split SQL text into pieces and variables (outside quotes; `::` is a cast)."""
    pieces: list[str] = []
    params: list[str] = []
    buf: list[str] = []
    i, n = 0, len(text)
    quote: str | None = None
    while i < n:
        c = text[i]
        if quote:
            buf.append(c)
            if c == quote:
                quote = None
            i += 1
            continue
        if c in ("'", '"'):
            quote = c
            buf.append(c)
            i += 1
            continue
        if c == ":" and i + 1 < n and text[i + 1] == ":":
            buf.append("::")
            i += 2
            continue
        if c == ":":
            m = _NAME.match(text, i + 1)
            if m:
                pieces.append("".join(buf))
                buf = []
                params.append(m.group())
                i = m.end()
                continue
        buf.append(c)
        i += 1
    pieces.append("".join(buf))
    shown = " ".join(text.split())
    words = " ".join(shown.rstrip(";").split()).upper()
    tx = TX_CONTROL.get(words)
    if tx and params:
        raise UserError(f"{where}:{line}: transaction control cannot take variables")
    return Command(line, shown, "sql", tuple(pieces), tuple(params), tx)


def _meta(body: str, line: int, where: str) -> Command:
    name, _, rest = body.partition(" ")
    name = name.lower()
    rest = rest.strip()
    try:
        if name == "set":
            var, _, expr = rest.partition(" ")
            if not var or not _NAME.fullmatch(var):
                raise UserError(f"{where}:{line}: \\set needs a variable name and an "
                                "expression")
            return Command(line, f"\\{body}", "set", var=var, expr=parse_expr(expr))
        if name == "sleep":
            words = rest.split()
            if not words or len(words) > 2:
                raise UserError(f"{where}:{line}: \\sleep takes a number or :variable and "
                                "an optional unit (us, ms, s)")
            unit = words[1].lower() if len(words) == 2 else "s"
            if unit not in SLEEP_UNITS:
                raise UserError(f"{where}:{line}: \\sleep unit must be us, ms or s, not "
                                f"{unit!r}")
            return Command(line, f"\\{body}", "sleep", expr=parse_expr(words[0]),
                           unit_ns=SLEEP_UNITS[unit])
        if name in ("if", "elif"):
            return Command(line, f"\\{body}", name, expr=parse_expr(rest))
        if name in ("else", "endif"):
            if rest:
                raise UserError(f"{where}:{line}: \\{name} takes no argument")
            return Command(line, f"\\{name}", name)
    except ExprError as exc:
        raise UserError(f"{where}:{line}: {exc}") from None
    if name in _UNSUPPORTED:
        raise UserError(f"{where}:{line}: \\{name} is not supported by dbstand's scripts "
                        "(supported: \\set, \\sleep, \\if, \\elif, \\else, \\endif)")
    raise UserError(f"{where}:{line}: unknown meta command \\{name}")


def _link(commands: list[Command], where: str) -> tuple[Command, ...]:
    """Fill in the jumps of \\if chains; unbalanced ones are one error line."""
    out = list(commands)
    stack: list[list[int]] = []  # per open \if: indexes of its arms
    for i, c in enumerate(out):
        if c.kind == "if":
            stack.append([i])
        elif c.kind in ("elif", "else", "endif"):
            if not stack:
                raise UserError(f"{where}:{c.line}: \\{c.kind} without \\if")
            arms = stack[-1]
            if out[arms[-1]].kind == "else" and c.kind != "endif":
                raise UserError(f"{where}:{c.line}: \\{c.kind} after \\else")
            if c.kind == "endif":
                stack.pop()
                arms.append(i)
                for a, b in itertools.pairwise(arms):
                    arm = out[a]
                    out[a] = Command(**{**arm.__dict__, "next_arm": b, "end": i})
            else:
                arms.append(i)
    if stack:
        raise UserError(f"{where}:{out[stack[-1][0]].line}: \\if without \\endif")
    return tuple(out)


def parse_script(text: str, name: str, weight: int = 1) -> Script:
    """Read pgbench script text; `name` is how errors name the file."""
    commands: list[Command] = []
    buf: list[str] = []   # the SQL command being read, character by character
    start = 0             # the line it starts on
    quote: str | None = None
    lines = text.splitlines()

    def flush() -> None:
        nonlocal start
        sql = "".join(buf).strip()
        if sql:
            commands.append(_sql_command(sql, start, name))
        buf.clear()
        start = 0

    i = 0
    while i < len(lines):
        raw = lines[i]
        number = i + 1
        i += 1
        if quote is None and not start and raw.lstrip().startswith("\\"):
            body = raw.strip()[1:]
            while body.endswith("\\") and i < len(lines):  # continued meta command
                body = body[:-1] + " " + lines[i].strip()
                i += 1
            commands.append(_meta(" ".join(body.split()), number, name))
            continue
        for j, c in enumerate(raw):
            if quote:
                if c == quote:
                    quote = None
            elif c in ("'", '"'):
                quote = c
            elif raw.startswith("--", j):
                break  # a comment to the end of the line
            elif c == ";":
                flush()
                continue
            if not start and not c.isspace():
                start = number
            buf.append(c)
        if start:
            buf.append("\n")
    if start:
        raise UserError(f"{name}:{start}: SQL command without a closing ';'")
    if not any(c.kind == "sql" for c in commands):
        raise UserError(f"{name}: no SQL command in the script")
    return Script(name, weight, _link(commands, name), text)


def load_script(spec: str, builtins: dict[str, str]) -> Script:
    """`file.sql[@W]` or a built-in's name `[@W]`: a missing file is one clear line."""
    name, weight = split_weight(spec)
    if name in builtins:
        return parse_script(builtins[name], name, weight)
    path = Path(name)
    if not path.is_file():
        known = ", ".join(builtins)
        raise UserError(f"--file {name}: no such file (or give a built-in: {known})")
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"--file {name}: cannot read it: {exc}") from None
    return parse_script(text, name, weight)
