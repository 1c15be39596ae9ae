"""dbstand: a test stand for the code between an application and its database."""

__version__ = "0.1.0"
