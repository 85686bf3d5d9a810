"""Checker: judge what is on disk (submission trees, result tables, claims)."""
