"""Make the fake CUDA bindings and the shared GPU workloads importable
(`--import-mode=importlib` adds no path)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "tir" / "gpu"))
