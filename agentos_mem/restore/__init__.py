"""A machine's derived stores made again from agent-sync: the journal's decisions replayed (``replay``), the
knowledge registry read back from its documents (``registry``), and ``agentos restore`` (``run``)."""
