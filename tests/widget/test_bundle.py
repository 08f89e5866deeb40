"""The loader each view carries instead of the front-end code, run in Node with a widget manager that resolves
model references as JupyterLab's does: it imports the bundle model's code once for every view, renders with it,
and says so in the view when the bundle model is missing. The code is shared per kernel and made again when closed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from ai_widgets.widget._bundle import LOADER, shared_bundle

NODE = shutil.which("node")

# The page: Blob and object URLs as data: URLs (Node imports those), a manager holding one bundle model whose code
# counts its imports, three views rendered with the loader, and one whose bundle model is not there.
PAGE = """
import assert from "node:assert/strict";
globalThis.Blob = class { constructor(parts) { this.text = parts.join(""); } };
URL.createObjectURL = (blob) => "data:text/javascript;base64," + Buffer.from(blob.text).toString("base64");
const code = "globalThis.imports = (globalThis.imports ?? 0) + 1;" +
  "export default { render({ model, el }) { el.textContent = 'rendered ' + model.get('name'); return () => {}; } };";
const holder = { attributes: { code }, get(key) { return this.attributes[key]; } };
const manager = { async get_model(id) { if (id === "bundle") return holder; throw new Error("no model " + id); } };
const model = (name, bundle) => ({ get: (key) => ({ name, _bundle_model: bundle })[key], widget_manager: manager });
const loader = await import("data:text/javascript;base64," + Buffer.from(LOADER).toString("base64"));
const shown = [];
for (const name of ["chat", "turn 1", "turn 2"]) {
  const el = { textContent: "" };
  const cleanup = await loader.default.render({ model: model(name, "bundle"), el });
  assert.equal(typeof cleanup, "function");
  shown.push(el.textContent);
}
const missing = { textContent: "" };
await loader.default.render({ model: model("old", "gone"), el: missing });
console.log(JSON.stringify({ shown, imports: globalThis.imports, missing: missing.textContent }));
"""


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_views_import_the_shared_code_once(tmp_path: Path) -> None:
    page = tmp_path / "page.mjs"
    page.write_text(PAGE.replace("LOADER", json.dumps(LOADER)), encoding="utf-8")
    assert NODE is not None
    done = subprocess.run([NODE, str(page)], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["shown"] == ["rendered chat", "rendered turn 1", "rendered turn 2"]
    assert result["imports"] == 1
    assert "front-end code of this notebook is missing" in result["missing"]
    assert "no model gone" in result["missing"]


def test_one_bundle_model_per_kernel_made_again_when_closed() -> None:
    first = shared_bundle("export default {};\n", "/* a */\n")
    assert shared_bundle("export default {};\n", "/* a */\n") is first
    rebuilt = shared_bundle("export default { render() {} };\n", "/* a */\n")
    assert rebuilt is not first  # a rebuilt bundle: its own model
    rebuilt.close()
    again = shared_bundle("export default { render() {} };\n", "/* a */\n")
    assert again is not rebuilt
    assert again.code == "export default { render() {} };\n"
    assert again._css == "/* a */\n"
    again.close()
    first.close()
