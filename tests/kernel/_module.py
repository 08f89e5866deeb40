"""Loads ``ai_widgets/widget/_kernel.py`` on its own, without the widget layer (which needs the front-end bundle)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

PATH = Path(__file__).resolve().parents[2] / "ai_widgets" / "widget" / "_kernel.py"


def load_kernel_module(name: str = "aiw_kernel_under_test") -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, PATH)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
