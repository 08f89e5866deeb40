"""The front-end code sent and saved once per kernel, not once per widget: one hidden model holds the bundle, and
each view's ``_esm`` is a small loader that imports it from that model.

anywidget ships a widget's code as its ``_esm`` trait, so every model (and every saved widget state) carries its
own copy. A widget manager that resolves references to other models (JupyterLab, Notebook 7, VS Code, and the
HTML manager of a page exported with widget state) lets the views share one copy; a host that does not (marimo)
gets the code in each widget as before, as does anywidget's hot reload (``ANYWIDGET_HMR=1``).
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any

import anywidget
import traitlets

__all__ = ["LOADER", "FrontEndBundle", "loader_traits", "shared_bundle"]

#: Each view's ``_esm`` (small: every view saves its copy): imports the code its ``_bundle_model`` holds, once per
#: page whatever the number of views (the import is kept on that model's front-end object), and renders with it;
#: says so in the view when that model cannot be found.
LOADER = (
    "export default{async render(r){let m=r.model,h;try{h=await m.widget_manager.get_model(m.get('_bundle_model'));"
    "h.c??=import(URL.createObjectURL(new Blob([h.get('code')],{type:'text/javascript'})))}"
    "catch(e){r.el.textContent='ai_widgets: the front-end code of this notebook is missing ('+e+')';return}"
    "return(await h.c).default.render(r)}}\n"
)


class FrontEndBundle(anywidget.AnyWidget):
    """The model that holds the front-end bundle (``code``) and its style sheet (``_css``, which anywidget applies
    to the page when the model is created). Never displayed itself."""

    _esm = "export default {};\n"
    _css = "/* set per bundle */\n"
    code = traitlets.Unicode("").tag(sync=True)

    def __init__(self, *, code: str, css: str) -> None:
        super().__init__(code=code, _css=css)
        #: Which code and style it holds: a rebuilt bundle gets a model of its own.
        self.key = key(code, css)


def key(code: str, css: str) -> str:
    return hashlib.sha256((code + "\0" + css).encode("utf-8", "surrogatepass")).hexdigest()


lock = threading.Lock()
shared: FrontEndBundle | None = None


def shared_bundle(code: str, css: str) -> FrontEndBundle:
    """The kernel's bundle model for this code and style, made on first use and again after it was closed (a
    ``Widget.close_all()``, or a rebuilt bundle)."""
    global shared
    with lock:
        if shared is None or shared.comm is None or shared.key != key(code, css):
            shared = FrontEndBundle(code=code, css=css)
        return shared


def loader_traits(bundle: FrontEndBundle) -> dict[str, Any]:
    """What a view that loads its code from ``bundle`` starts with (its layout the bundle's, one model for all)."""
    return {
        "_esm": LOADER,
        "_css": "",
        "_bundle_model": bundle.model_id,
        "layout": bundle.layout,
    }
