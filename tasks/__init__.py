"""Prefect tasks: thin typed wrappers over the plain stage functions, one task per batch."""
