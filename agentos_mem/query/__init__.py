"""The thin read path (layered retrieval). Nothing here imports Prefect."""
