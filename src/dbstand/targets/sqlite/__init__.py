"""SQLite: the embedded default target."""
