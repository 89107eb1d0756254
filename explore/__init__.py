"""Exploration: parallel explorers, gates and synthesis (not built yet)."""

__all__: list[str] = []
