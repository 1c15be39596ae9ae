"""Rendering results: terminal tables, Markdown, CSV, JSON, HTML."""
