"""The fact vocabulary: how dates, weekdays and numbers are read in Chinese and English (``dates``), what kind of
value a fact holds (``valuetypes``: a spec, a clock time, a version, a count ...), whose a phrase is (``people``: the
relation words of both languages) and which words name something (``content``). The digest, the memory extraction
and the supersession service share it; it imports only the kernel (tests/contract/test_layers.py)."""
