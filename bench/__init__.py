"""``agentos bench``: runners over public datasets, through the same flows and query path users run.

A runner is one small module with ``run(args) -> dict`` (the JSON object) and ``render(result) -> str``
(the readable table); ``metrics`` holds the arithmetic they share.
"""
