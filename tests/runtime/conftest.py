"""Make the fake CUDA bindings importable (`--import-mode=importlib` adds no path)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
