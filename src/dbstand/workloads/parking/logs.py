"""The service log: off writes nothing per request; on writes every request, every
answer and every SQL statement with its parameters to one file.

SQL comes from each stack's own statement logging where it has one (SQLAlchemy's
`sqlalchemy.engine` INFO records, i.e. what echo=True prints; Peewee's `peewee`
DEBUG records) and from the raw implementation's cursor otherwise.
"""

from __future__ import annotations

import logging

#: loggers written when logging is on, with the level that makes them speak
LOGGERS = {"dbstand.workloads.parking": logging.INFO, "sqlalchemy.engine.Engine": logging.INFO,
           "peewee": logging.DEBUG}


def configure(log_path: str | None) -> None:
    """Route the service's loggers to `log_path`, or keep them quiet (errors only)."""
    handler: logging.Handler | None = None
    if log_path:
        handler = logging.FileHandler(log_path, encoding="utf-8")
        handler.setFormatter(logging.Formatter(
            "%(asctime)s %(process)d %(threadName)s %(name)s %(levelname)s %(message)s"))
    for name, level in LOGGERS.items():
        logger = logging.getLogger(name)
        for old in list(logger.handlers):
            logger.removeHandler(old)
        if handler is not None:
            logger.setLevel(level)
            logger.addHandler(handler)
            logger.propagate = False
        else:
            logger.setLevel(logging.WARNING)
            logger.propagate = True
