"""The `utcgen` console script of the environment running the tests: commands run as a user runs them."""

from __future__ import annotations

import sys
from pathlib import Path

UTCGEN = str(Path(sys.executable).with_name("utcgen"))
