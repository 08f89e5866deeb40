"""Fixtures of the browser end-to-end tests: isolated Jupyter servers and fresh Debian Chromium pages.

Servers are session-scoped and shared by configuration (app, theme, settings): every test writes its own notebook
and opens it in its own Lab workspace and browser profile, and its kernel is shut down when it ends. So a test
sees no tabs, kernels or browser state of another, at one server start per configuration.

Needs /usr/bin/chromium (``scripts/browser_setup.sh``) and the ``e2e`` extra (jupyterlab, notebook, playwright,
psutil). Without them the tests are skipped, unless ``AIW_E2E_REQUIRED=1`` makes that a failure.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # jupyter_e2e, without making tests/e2e a package

REPO = HERE.parent.parent
ARTIFACTS = REPO / "test-artifacts" / "e2e"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "e2e: browser end-to-end test (JupyterLab/Notebook 7 in headless Chromium)")


def _missing() -> str | None:
    for module in ("playwright", "jupyterlab", "notebook", "psutil"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (pip install -e '.[e2e]')"
    chromium = os.environ.get("E2E_CHROMIUM", "/usr/bin/chromium")
    if not os.path.exists(chromium):
        return f"{chromium} is missing (run scripts/browser_setup.sh)"
    return None


@pytest.fixture(scope="session")
def e2e_ready() -> None:
    reason = _missing()
    if reason:
        if os.environ.get("AIW_E2E_REQUIRED") == "1":
            pytest.fail(reason)
        pytest.skip(reason)


@pytest.fixture(scope="session")
def servers(e2e_ready):
    """A factory of running servers, one per configuration, all stopped at the end of the session."""
    import jupyter_e2e as J

    running: dict[str, J.JupyterServer] = {}

    def get(app: str = "lab", theme: str | None = None, settings: dict | None = None) -> J.JupyterServer:
        key = json.dumps([app, theme, settings], sort_keys=True)
        if key not in running:
            running[key] = J.JupyterServer(app, [], theme=theme, settings=settings)
        return running[key]

    yield get
    for server in running.values():
        server.cleanup()
    left = J.leftover_processes()
    for p in left:  # only processes carrying this run's unique temp-dir tag
        with contextlib.suppress(Exception):
            p.kill()
    assert not left, f"leftover processes: {[(p.pid, p.name()) for p in left]}"


@pytest.fixture(scope="session")
def pw(e2e_ready):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


def _test_id(request: pytest.FixtureRequest) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name).strip("-")


@pytest.fixture
def artifacts(request) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture
def chromium_page(pw, request, artifacts):
    """A page in Debian Chromium with a brand-new profile. On failure: a full-page screenshot; always: the
    console log."""
    import jupyter_e2e as J

    profile = J._mkdtemp("chrome")
    ctx = J.launch_chromium(pw, str(profile))
    page = ctx.pages[0] if ctx.pages else ctx.new_page()
    page.set_default_timeout(20_000)
    messages: list[str] = []
    page.on("console", lambda m: messages.append(f"console.{m.type}: {m.text}"))
    page.on("pageerror", lambda e: messages.append(f"pageerror: {e}"))
    page.e2e_messages = messages  # type: ignore[attr-defined]
    yield page
    name = _test_id(request)
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        with contextlib.suppress(Exception):
            page.screenshot(path=str(artifacts / f"FAILED-{name}.png"), full_page=True)
    (artifacts / f"{name}.console.txt").write_text("\n".join(messages))
    ctx.close()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def notebook_name(request) -> str:
    """This test's notebook (and Lab workspace) name."""
    return f"{_test_id(request)}.ipynb"


@pytest.fixture
def server(servers, notebook_name, request):
    """``server(app="lab", theme=None, settings=None)``: a running server; this test's kernels on it are shut
    down when the test ends (the server itself lives on for other tests)."""
    used = []

    def get(app: str = "lab", theme: str | None = None, settings: dict | None = None):
        s = servers(app, theme, settings)
        used.append(s)
        return s

    yield get
    rep = getattr(request.node, "rep_call", None)
    for s in used:
        if rep is not None and rep.failed:
            print(f"\n--- {s.app} server log (tail) ---\n{s.log_tail(80)}")
        try:
            s.shutdown_kernels(notebook_name)
        except Exception as exc:  # the server may be gone; the session teardown reports leftovers
            print(f"could not shut down the kernel of {notebook_name}: {exc}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)
