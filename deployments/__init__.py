"""Deployment definitions (prefect.yaml) and ``agentos serve``, the embedded default."""
