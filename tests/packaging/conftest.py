"""The packaging scripts live in packaging/, a folder of scripts (never an importable package: a top-level
`packaging` would shadow PyPA's). Tests import them as plain modules from that folder."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "packaging"
if str(SCRIPTS) not in sys.path:
    sys.path.append(str(SCRIPTS))  # appended: nothing there may shadow an installed module
