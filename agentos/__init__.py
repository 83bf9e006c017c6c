"""AgentOS Memory: the shared kernel (settings, domain types, text tooling, CLI).

The layered packages live beside this one: ``flows`` (Prefect orchestration), ``tasks`` (Prefect
tasks over plain functions), ``storage`` (the stores) and ``query`` (the read path).
"""

__version__ = "0.1.0"
