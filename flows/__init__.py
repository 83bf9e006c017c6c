"""Prefect flows: orchestration only. Each reads as its list of stages; the work is in tasks/."""
