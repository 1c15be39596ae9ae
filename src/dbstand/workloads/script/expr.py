"""pgbench's `\\set` expressions: parsed once into closures, evaluated per transaction.

The language is pgbench's (its documentation, "Built-in Operators" and "Built-in
Functions"): integer and double literals, `:variables`, true/false/null, `+ - * / %`
with C's integer division and remainder, comparisons, `AND OR NOT`, bit operators,
`CASE WHEN ... THEN ... [ELSE ...] END` and the functions below. Random draws take
the session's own `random.Random`, so a seed gives the same stream on every run.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from typing import Any

Value = int | float | bool | None
Env = dict[str, Any]
Expr = Callable[[Env, random.Random], Value]


class ExprError(ValueError):
    """A malformed expression (at parse time) or a bad value (at run time)."""


_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<num>\d+\.\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|\d+)
  | (?P<var>:[A-Za-z0-9_]+)
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op><<|>>|<=|>=|<>|!=|[-+*/%()<>=,&|#~])
""", re.VERBOSE)

_KEYWORDS = {"and", "or", "not", "case", "when", "then", "else", "end", "true", "false",
             "null", "is", "isnull", "notnull"}


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ExprError(f"unexpected character {text[pos]!r} in expression")
        pos = m.end()
        kind = m.lastgroup or ""
        if kind == "space":
            continue
        value = m.group()
        if kind == "word" and value.lower() in _KEYWORDS:
            kind, value = "kw", value.lower()
        out.append((kind, value))
    out.append(("end", ""))
    return out


def _int(v: Value, what: str) -> int:
    if isinstance(v, bool) or v is None:
        raise ExprError(f"{what}: integer expected, got {v!r}")
    if isinstance(v, float):
        if not math.isfinite(v) or abs(v) > 2**63:
            raise ExprError(f"{what}: {v!r} out of integer range")
        return int(v)
    return v


def _num(v: Value, what: str) -> int | float:
    if isinstance(v, bool) or v is None:
        raise ExprError(f"{what}: number expected, got {v!r}")
    return v


def _truth(v: Value) -> bool:
    if v is None:
        return False
    return bool(v)


def _div(a: int | float, b: int | float) -> int | float:
    if b == 0:
        raise ExprError("division by zero")
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)  # C truncates toward zero
        return q if (a >= 0) == (b >= 0) else -q
    return a / b


def _mod(a: int | float, b: int | float) -> int:
    a, b = _int(a, "%"), _int(b, "%")
    if b == 0:
        raise ExprError("division by zero")
    return a - _int(_div(a, b), "%") * b


_ARITH: dict[str, Callable[[Any, Any], Value]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": _div, "%": _mod,
    "=": lambda a, b: a == b, "<>": lambda a, b: a != b, "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
    "&": lambda a, b: _int(a, "&") & _int(b, "&"), "|": lambda a, b: _int(a, "|") | _int(b, "|"),
    "#": lambda a, b: _int(a, "#") ^ _int(b, "#"),
    "<<": lambda a, b: _int(a, "<<") << _int(b, "<<"),
    ">>": lambda a, b: _int(a, ">>") >> _int(b, ">>"),
}

#: binary operators by precedence, loosest first
_LEVELS: tuple[tuple[str, ...], ...] = (
    ("or",), ("and",), ("=", "<>", "!="), ("<", "<=", ">", ">="), ("|", "#", "&"),
    ("<<", ">>"), ("+", "-"), ("*", "/", "%"),
)


# --- random draws (pgbench's documented distributions) ----------------------------
def _bounds(lb: Value, ub: Value, name: str) -> tuple[int, int]:
    lo, hi = _int(lb, name), _int(ub, name)
    if hi < lo:
        raise ExprError(f"{name}: upper bound {hi} is below lower bound {lo}")
    return lo, hi


def rand_uniform(rng: random.Random, lb: Value, ub: Value) -> int:
    lo, hi = _bounds(lb, ub, "random")
    return rng.randint(lo, hi)


def rand_exponential(rng: random.Random, lb: Value, ub: Value, param: Value) -> int:
    """Values near `lb` most often: the exponential distribution cut at exp(-param)."""
    lo, hi = _bounds(lb, ub, "random_exponential")
    p = float(_num(param, "random_exponential"))
    if p <= 0:
        raise ExprError("random_exponential: parameter must be greater than 0")
    cut = math.exp(-p)
    uniform = (1.0 - rng.random()) * (1.0 - cut) + cut  # in (cut, 1]
    fraction = -math.log(uniform) / p                    # in [0, 1)
    return lo + int((hi - lo + 1) * fraction)


def rand_gaussian(rng: random.Random, lb: Value, ub: Value, param: Value) -> int:
    """A normal distribution centred on the interval, cut at ±param deviations."""
    lo, hi = _bounds(lb, ub, "random_gaussian")
    p = float(_num(param, "random_gaussian"))
    if p < 2.0:
        raise ExprError("random_gaussian: parameter must be at least 2.0")
    while True:
        x = rng.gauss(0.0, 1.0)
        if -p <= x < p:
            break
    return lo + int((hi - lo + 1) * ((x + p) / (2.0 * p)))


def rand_zipfian(rng: random.Random, lb: Value, ub: Value, param: Value) -> int:
    """Zipf's law with exponent s over the interval (rank 1 = `lb` most often), drawn by
    rejection (Devroye, Non-Uniform Random Variate Generation, X.6)."""
    lo, hi = _bounds(lb, ub, "random_zipfian")
    s = float(_num(param, "random_zipfian"))
    if not 1.001 <= s <= 1000.0:
        raise ExprError("random_zipfian: parameter must be in [1.001, 1000]")
    n = hi - lo + 1
    b = 2.0 ** (s - 1.0)
    while True:
        u = 1.0 - rng.random()
        v = rng.random()
        x = math.floor(u ** (-1.0 / (s - 1.0)))
        t = (1.0 + 1.0 / x) ** (s - 1.0)
        if v * x * (t - 1.0) / (b - 1.0) <= t / b and x <= n:
            return lo + int(x) - 1


def _random(fn: Callable[..., Value], arity: int) -> tuple[Callable[..., Value], int, bool]:
    return fn, arity, True


def _least(*args: Value) -> Value:
    return min(_num(a, "least") for a in args)


def _greatest(*args: Value) -> Value:
    return max(_num(a, "greatest") for a in args)


def _sqrt(v: Value) -> float:
    x = float(_num(v, "sqrt"))
    if x < 0:
        raise ExprError("sqrt of a negative number")
    return math.sqrt(x)


def _ln(v: Value) -> float:
    x = float(_num(v, "ln"))
    if x <= 0:
        raise ExprError("ln of a number that is not positive")
    return math.log(x)


#: name -> (function, arity or None for variadic, takes the rng first)
FUNCTIONS: dict[str, tuple[Callable[..., Value], int | None, bool]] = {
    "abs": (lambda v: abs(_num(v, "abs")), 1, False),
    "double": (lambda v: float(_num(v, "double")), 1, False),
    "int": (lambda v: _int(v, "int"), 1, False),
    "exp": (lambda v: math.exp(_num(v, "exp")), 1, False),
    "ln": (_ln, 1, False),
    "sqrt": (_sqrt, 1, False),
    "pi": (lambda: math.pi, 0, False),
    "pow": (lambda a, b: float(_num(a, "pow")) ** float(_num(b, "pow")), 2, False),
    "power": (lambda a, b: float(_num(a, "pow")) ** float(_num(b, "pow")), 2, False),
    "mod": (lambda a, b: _mod(_num(a, "mod"), _num(b, "mod")), 2, False),
    "least": (_least, None, False),
    "greatest": (_greatest, None, False),
    "random": _random(rand_uniform, 2),
    "random_exponential": _random(rand_exponential, 3),
    "random_gaussian": _random(rand_gaussian, 3),
    "random_zipfian": _random(rand_zipfian, 3),
}


class _Parser:
    def __init__(self, text: str):
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> tuple[str, str]:
        return self.toks[self.i]

    def take(self) -> tuple[str, str]:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def expect(self, value: str) -> None:
        _kind, got = self.take()
        if got != value:
            raise ExprError(f"expected {value!r}, found {got or 'the end'!r}")

    def parse(self) -> Expr:
        expr = self.binary(0)
        if self.peek()[0] != "end":
            raise ExprError(f"unexpected {self.peek()[1]!r} after the expression")
        return expr

    def binary(self, level: int) -> Expr:
        if level == len(_LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek()[1] in _LEVELS[level]:
            op = self.take()[1]
            right = self.binary(level + 1)
            left = _combine(op, left, right)
        return left

    def unary(self) -> Expr:
        _kind, value = self.peek()
        if value in ("-", "+", "~", "not"):
            self.take()
            inner = self.unary() if value != "not" else self.binary(2)
            if value == "-":
                return lambda env, rng: -_num(inner(env, rng), "-")
            if value == "~":
                return lambda env, rng: ~_int(inner(env, rng), "~")
            if value == "not":
                return lambda env, rng: not _truth(inner(env, rng))
            return inner
        return self.postfix(self.primary())

    def postfix(self, expr: Expr) -> Expr:
        _kind, value = self.peek()
        if value in ("isnull", "notnull"):
            self.take()
            want_null = value == "isnull"
            return lambda env, rng: (expr(env, rng) is None) == want_null
        if value == "is":
            self.take()
            negate = self.peek()[1] == "not"
            if negate:
                self.take()
            _kind, what = self.take()
            if what not in ("null", "true", "false"):
                raise ExprError("IS must be followed by NULL, TRUE or FALSE")
            target = {"null": None, "true": True, "false": False}[what]

            def is_(env: Env, rng: random.Random) -> bool:
                v = expr(env, rng)
                same = v is None if target is None else (v is not None and
                                                        _truth(v) == target)
                return same != negate
            return is_
        return expr

    def primary(self) -> Expr:
        kind, value = self.take()
        if kind == "num":
            number: Value = float(value) if any(c in value for c in ".eE") else int(value)
            return lambda env, rng: number
        if kind == "var":
            name = value[1:]

            def var(env: Env, rng: random.Random) -> Value:
                try:
                    v: Value = env[name]
                except KeyError:
                    raise ExprError(f"undefined variable :{name}") from None
                return v
            return var
        if kind == "kw" and value in ("true", "false", "null"):
            const = {"true": True, "false": False, "null": None}[value]
            return lambda env, rng: const
        if kind == "kw" and value == "case":
            return self.case()
        if value == "(":
            inner = self.binary(0)
            self.expect(")")
            return inner
        if kind == "word":
            return self.call(value.lower())
        raise ExprError(f"unexpected {value or 'end of expression'!r}")

    def case(self) -> Expr:
        arms: list[tuple[Expr, Expr]] = []
        while self.peek()[1] == "when":
            self.take()
            cond = self.binary(0)
            self.expect("then")
            arms.append((cond, self.binary(0)))
        if not arms:
            raise ExprError("CASE needs at least one WHEN")
        default: Expr = lambda env, rng: None  # noqa: E731
        if self.peek()[1] == "else":
            self.take()
            default = self.binary(0)
        self.expect("end")

        def case(env: Env, rng: random.Random) -> Value:
            for cond, then in arms:
                if _truth(cond(env, rng)):
                    return then(env, rng)
            return default(env, rng)
        return case

    def call(self, name: str) -> Expr:
        if name not in FUNCTIONS:
            raise ExprError(f"unknown function {name}() (known: {', '.join(FUNCTIONS)})")
        fn, arity, takes_rng = FUNCTIONS[name]
        self.expect("(")
        args: list[Expr] = []
        if self.peek()[1] != ")":
            args.append(self.binary(0))
            while self.peek()[1] == ",":
                self.take()
                args.append(self.binary(0))
        self.expect(")")
        if arity is not None and len(args) != arity:
            raise ExprError(f"{name}() takes {arity} argument(s), got {len(args)}")
        if arity is None and not args:
            raise ExprError(f"{name}() needs at least one argument")
        if takes_rng:
            return lambda env, rng: fn(rng, *(a(env, rng) for a in args))
        return lambda env, rng: fn(*(a(env, rng) for a in args))


def _combine(op: str, left: Expr, right: Expr) -> Expr:
    if op == "and":
        return lambda env, rng: _truth(left(env, rng)) and _truth(right(env, rng))
    if op == "or":
        return lambda env, rng: _truth(left(env, rng)) or _truth(right(env, rng))
    fn = _ARITH[op]

    def apply(env: Env, rng: random.Random) -> Value:
        a, b = left(env, rng), right(env, rng)
        if a is None or b is None:
            return None
        return fn(a, b)
    return apply


def parse_expr(text: str) -> Expr:
    """The closure computing `text` from variables and an rng; ExprError if malformed."""
    if not text.strip():
        raise ExprError("empty expression")
    return _Parser(text).parse()
