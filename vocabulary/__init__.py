"""The fact vocabulary: how dates, weekdays and numbers are read in Chinese and English (``dates``) and what kind of
value a fact holds (``valuetypes``: a spec, a clock time, a version, a count ...). The digest, the memory extraction
and the supersession service share it; it imports only the kernel (tests/contract/test_layers.py)."""
