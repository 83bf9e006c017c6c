"""Retrieval helpers the index rebuild and the read path share: ``bilingual``, the Chinese-English word bridge
(CC-CEDICT) that lets a question in one language meet memory in the other. It imports only the kernel
(tests/contract/test_layers.py)."""
