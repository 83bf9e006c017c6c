"""The stores, each behind a narrow interface. Nothing here imports Prefect."""
