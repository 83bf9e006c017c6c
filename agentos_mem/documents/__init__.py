"""Documents: the structure of a knowledge document (``outline``: the Markdown heading tree with stable anchors,
line ranges and sizes) that the knowledge store, the knowledge pipeline and the read path share. It imports only
the kernel (tests/contract/test_layers.py)."""
