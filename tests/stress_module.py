"""``bench/stress.py`` as a module, loaded once: its case generators and fixtures serve the suite too."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _load():
    if "jsbx_stress" in sys.modules:
        return sys.modules["jsbx_stress"]
    spec = importlib.util.spec_from_file_location("jsbx_stress", ROOT / "bench" / "stress" / "__main__.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["jsbx_stress"] = module
    spec.loader.exec_module(module)
    return module


stress = _load()
