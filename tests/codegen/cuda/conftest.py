"""Make the shared GPU workloads (tests/tir/gpu) importable."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "tir" / "gpu"))
