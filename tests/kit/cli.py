"""The ``agentos`` command line as a user runs it: the installed entry point as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

AGENTOS = [str(Path(sys.executable).with_name("agentos"))]


def agentos(*args, home, check=True, **env):
    """Run ``agentos *args`` with AGENTOS_HOME=home (and any extra environment); assert success unless check=False."""
    p = subprocess.run(AGENTOS + list(args), capture_output=True, text=True, timeout=300,
                       env={**os.environ, "AGENTOS_HOME": str(home), **env})
    if check:
        assert p.returncode == 0, p.stderr
    return p
