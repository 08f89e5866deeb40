"""Hatch build hook: builds the TypeScript front end into ai_widgets/static/ (the bundle is not kept in git)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

ROOT = Path(__file__).parent
STATIC = ROOT / "ai_widgets" / "static"
JS = ROOT / "js"


class FrontEndBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    """Runs ``npm ci`` and ``npm run build`` in ``js/`` unless the bundle is already there and up to date."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if os.environ.get("AI_WIDGETS_SKIP_JS_BUILD") == "1" or not JS.is_dir():
            return
        bundle = STATIC / "widget.js"
        sources = [p for p in (JS / "src").rglob("*") if p.is_file()]
        if bundle.is_file() and sources and bundle.stat().st_mtime >= max(p.stat().st_mtime for p in sources):
            return
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError("building ai_widgets needs npm (Node.js 18+) to bundle its front end in js/")
        if not (JS / "node_modules").is_dir():
            subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=JS, check=True)
        subprocess.run([npm, "run", "build"], cwd=JS, check=True)
