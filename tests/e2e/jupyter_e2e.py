"""Helpers for the browser end-to-end tests of ai_widgets (no Galata).

Adapted from the team's e2e recipe (JupyterLab 4 / Notebook 7 in Debian's headless Chromium, driven by
Python Playwright). The pitfalls it guards against are noted where they bite.

* ``JupyterServer`` starts ``jupyter lab`` or ``jupyter notebook`` (7) on
  127.0.0.1, a free port and a fixed token, fully isolated from the user's
  Jupyter config/data/settings/workspaces, waits until it answers, and shuts
  it down cleanly (REST shutdown first, then signals to the PIDs it started).
* Page helpers open a notebook, wait for the kernel, run all cells the way a
  user would (the "Run" menu), and read values back from the kernel over ZMQ.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil

TOKEN = "e2e-fixed-token"
HOST = "127.0.0.1"
# Every temp dir of a test run starts with this, so a leak check can find
# any process still referring to it (server root, kernel connection file,
# chromium profile) and nothing else.
RUN_TAG = f"jpe2e-{os.getpid()}-"


def _mkdtemp(kind: str) -> Path:
    """Temp dirs go under $E2E_TMPDIR (conftest points it into the project) or
    the system temp dir."""
    root = os.environ.get("E2E_TMPDIR") or None
    if root:
        os.makedirs(root, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{RUN_TAG}{kind}-", dir=root))


CHROMIUM = os.environ.get("E2E_CHROMIUM", "/usr/bin/chromium")
CHROME_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    # Hermetic: nothing but the local server resolves. "MAP *" also catches IP
    # literals, hence the EXCLUDEs.
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1 , EXCLUDE localhost",
]

# JupyterLab user settings written into a fresh JUPYTERLAB_SETTINGS_DIR.
BASE_SETTINGS = {
    # No "Would you like to receive official Jupyter news?" toast, no update check.
    "@jupyterlab/apputils-extension/notification": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    "@jupyterlab/notebook-extension/tracker": {
        # Never show the "Select Kernel" dialog for notebooks without kernelspec.
        "autoStartDefaultKernel": True,
        # Attach every cell to the DOM (default windowing detaches off-screen cells).
        "windowingMode": "none",
    },
}

APPS = {
    # name: (python -m module, Application class for traitlets, notebook URL prefix)
    "lab": ("jupyterlab", "LabApp", "/lab/tree/"),
    "notebook": ("notebook", "JupyterNotebookApp", "/notebooks/"),
}


def _die_with_parent() -> None:
    """preexec_fn: SIGTERM this child when the process that started it dies,
    even by SIGKILL (Linux prctl PR_SET_PDEATHSIG). Without it a killed or
    timed-out pytest leaves `jupyter lab` running forever, because the server
    lives in its own session (start_new_session=True) by design."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except Exception:
        pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class ServerStartError(RuntimeError):
    pass


class JupyterServer:
    """One isolated Jupyter server process (and the kernels it starts)."""

    def __init__(
        self,
        app: str,
        files: list[Path],
        theme: str | None = None,
        settings: dict | None = None,
        startup_timeout: float = 90,
    ):
        if app not in APPS:
            raise ValueError(app)
        self.app = app
        self.base = _mkdtemp(app)
        self.root = self.base / "root"
        self.runtime_dir = self.base / "runtime"
        self.settings_dir = self.base / "lab-settings"
        self.log_path = self.base / "server.log"
        for d in (self.root, self.runtime_dir, self.settings_dir):
            d.mkdir(parents=True)
        for f in files:
            shutil.copy(f, self.root / Path(f).name)
        all_settings = {k: dict(v) for k, v in BASE_SETTINGS.items()}
        if theme:
            all_settings["@jupyterlab/apputils-extension/themes"] = {"theme": theme}
        for key, value in (settings or {}).items():
            all_settings.setdefault(key, {}).update(value)
        for key, value in all_settings.items():
            pkg, plugin = key.rsplit("/", 1)
            p = self.settings_dir / pkg / f"{plugin}.jupyterlab-settings"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(json.dumps(value, indent=2))
        self.proc: subprocess.Popen | None = None
        self.port = 0
        self._kernel_pids: set[int] = set()
        self._start(startup_timeout)

    # ------------------------------------------------------------------ start
    def _env(self) -> dict:
        env = os.environ.copy()
        for k in ("JUPYTER_TOKEN", "JUPYTER_PATH", "JUPYTER_CONFIG_PATH"):
            env.pop(k, None)
        env.update(
            JUPYTER_CONFIG_DIR=str(self.base / "config"),  # no ~/.jupyter config
            JUPYTER_DATA_DIR=str(self.base / "data"),  # no user kernelspecs
            JUPYTER_RUNTIME_DIR=str(self.runtime_dir),  # kernel-<id>.json lands here
            JUPYTERLAB_SETTINGS_DIR=str(self.settings_dir),  # our settings only
            JUPYTERLAB_WORKSPACES_DIR=str(self.base / "workspaces"),  # no restore
            IPYTHONDIR=str(self.base / "ipython"),
            JUPYTER_PLATFORM_DIRS="1",
            PYTHONUNBUFFERED="1",
        )
        return env

    def _cmd(self) -> list[str]:
        module, appcls, _ = APPS[self.app]
        cmd = [
            sys.executable,
            "-m",
            module,
            "--no-browser",
            f"--ip={HOST}",
            f"--port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={TOKEN}",
            f"--ServerApp.root_dir={self.root}",
            # window.jupyterapp: used only for optional diagnostics / command runs.
            f"--{appcls}.expose_app_in_browser=True",
        ]
        if self.app == "lab":
            # Server never fetches the news feed. NOTE: this alone does NOT stop
            # the "Would you like to get notified about official Jupyter news?"
            # toast in Lab 4.6; the fetchNews="false" user setting does.
            cmd.append("--LabApp.news_url=None")
        if os.geteuid() == 0:  # CI containers: the server refuses root otherwise
            cmd.append("--ServerApp.allow_root=True")
        return cmd

    def _start(self, timeout: float) -> None:
        last_err = ""
        for _attempt in range(3):  # a free port can be taken between probe and bind
            self.port = free_port()
            with open(self.log_path, "ab") as log:  # the child keeps its own copy of the descriptor
                self.proc = subprocess.Popen(
                    self._cmd(),
                    cwd=self.root,
                    env=self._env(),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,  # own process group, ours to signal
                    preexec_fn=_die_with_parent if sys.platform == "linux" else None,
                )
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    last_err = f"server exited with {self.proc.returncode}"
                    if "already in use" in self.log_tail(20):
                        break  # port race: retry on a new port
                    raise ServerStartError(f"{last_err}\n--- log ---\n{self.log_tail()}")
                try:
                    self.api("GET", "/api/status", timeout=2)
                    return
                except (urllib.error.URLError, ConnectionError, OSError):
                    time.sleep(0.25)
            else:
                last_err = f"server did not answer within {timeout}s"
                self._terminate()
                break
        raise ServerStartError(f"{last_err}\n--- log ---\n{self.log_tail()}")

    # ---------------------------------------------------------------- access
    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def notebook_url(self, nb: str, workspace: str | None = None) -> str:
        """The notebook's page. In Lab, ``workspace`` names a fresh workspace, so a shared server never
        restores the tabs (and kernels) an earlier test left open (pitfall 5)."""
        prefix = APPS[self.app][2]
        if self.app == "lab" and workspace:
            prefix = f"/lab/workspaces/{workspace}/tree/"
        return f"{self.base_url}{prefix}{nb}?token={TOKEN}"

    def write_notebook(self, name: str, cells: list[str]) -> str:
        """Writes a notebook of code cells (no outputs, kernelspec set: pitfalls 3 and 8) into the root."""
        (self.root / name).write_text(json.dumps(notebook_json(cells), indent=1))
        return name

    def shutdown_kernels(self, nb_path: str | None = None) -> None:
        """Deletes the sessions (and so the kernels) of ``nb_path``, or of every notebook."""
        for s in self.api("GET", "/api/sessions"):
            if nb_path is None or s.get("path") == nb_path:
                with contextlib.suppress(urllib.error.HTTPError):
                    self.api("DELETE", f"/api/sessions/{s['id']}", timeout=20)

    def api(self, method: str, path: str, body=None, timeout: float = 10):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self.base_url + path,
            data=data,
            method=method,
            headers={"Authorization": f"token {TOKEN}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=timeout) as r:
            raw = r.read()
        return json.loads(raw) if raw else None

    def log_tail(self, n: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""

    # --------------------------------------------------------------- kernels
    def kernel_id_for(self, nb_path: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for s in self.api("GET", "/api/sessions"):
                if s.get("path") == nb_path and s.get("kernel"):
                    return s["kernel"]["id"]
            time.sleep(0.25)
        raise TimeoutError(f"no kernel session for {nb_path}")

    def kernel_json(self, nb_path: str, expr: str, timeout: float = 15):
        """``expr`` evaluated in the notebook's kernel, through JSON (``default=str``)."""
        import ast

        text = self.kernel_eval(nb_path, f"__import__('json').dumps({expr}, default=str)", timeout)
        return json.loads(ast.literal_eval(text))

    def kernel_wait(self, nb_path: str, expr: str, predicate, timeout: float = 20):
        """Polls ``expr`` (via :meth:`kernel_json`) until ``predicate(value)`` holds; returns the value.
        A click's comm message may still be in flight when we first ask (pitfall 10)."""
        deadline = time.monotonic() + timeout
        value = None
        while True:
            value = self.kernel_json(nb_path, expr)
            if predicate(value):
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"kernel: {expr} = {value!r}, condition not met in {timeout}s")
            time.sleep(0.2)

    def kernel_eval(self, nb_path: str, expr: str, timeout: float = 15) -> str:
        """Evaluate ``expr`` in the notebook's kernel (silently, via ZMQ) and
        return its ``text/plain`` repr ("" for a value that shows nothing, such as what ``chat.send`` returns).
        Nothing shows up in the notebook."""
        from jupyter_client import BlockingKernelClient

        kid = self.kernel_id_for(nb_path)
        kc = BlockingKernelClient(connection_file=str(self.runtime_dir / f"kernel-{kid}.json"))
        kc.load_connection_file()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=timeout)
            reply = kc.execute(
                "", silent=True, store_history=False, user_expressions={"v": expr}, reply=True, timeout=timeout
            )
            res = reply["content"]["user_expressions"]["v"]
            if res["status"] != "ok":
                raise RuntimeError(f"{res.get('ename')}: {res.get('evalue')}")
            return res["data"].get("text/plain", "")
        finally:
            kc.stop_channels()

    def _remember_children(self) -> None:
        if self.proc and self.proc.poll() is None:
            try:
                for c in psutil.Process(self.proc.pid).children(recursive=True):
                    self._kernel_pids.add(c.pid)
            except psutil.NoSuchProcess:
                pass

    # ------------------------------------------------------------------ stop
    def stop(self) -> None:
        if self.proc is None:
            return
        self._remember_children()  # kernels run in their own sessions
        if self.proc.poll() is None:
            with contextlib.suppress(Exception):  # clean: shuts kernels down, then the server exits 0
                self.api("POST", "/api/shutdown", timeout=5)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._terminate()
        self._reap_kernels()
        self.proc = None

    def _terminate(self) -> None:
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
            if self.proc.poll() is not None:
                return
            try:
                os.killpg(self.proc.pid, sig)  # the group we created, nothing else
            except ProcessLookupError:
                return
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=wait)

    def _reap_kernels(self, grace: float = 10) -> None:
        procs = []
        for pid in self._kernel_pids:
            with contextlib.suppress(psutil.NoSuchProcess):
                procs.append(psutil.Process(pid))
        _, alive = psutil.wait_procs(procs, timeout=grace)
        for p in alive:  # only PIDs that were children of our server
            with contextlib.suppress(psutil.NoSuchProcess):
                p.kill()

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.base, ignore_errors=True)


def notebook_json(cells: list[str]) -> dict:
    """A notebook of code cells with no outputs and the Python kernel named (pitfalls 3 and 8), as JSON data."""
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {
            "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "cells": [
            {
                "cell_type": "code",
                "id": f"cell-{i}",
                "metadata": {},
                "execution_count": None,
                "outputs": [],
                "source": source,
            }
            for i, source in enumerate(cells)
        ],
    }


def stop_process_group(proc: subprocess.Popen) -> None:
    """Stops a server started in a process group of its own (``start_new_session``): SIGTERM to the group, then
    SIGKILL to whatever of it (kernels included) is left; only processes this server started."""
    try:
        family = [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        family = []
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=wait)
    _, alive = psutil.wait_procs(family, timeout=5)
    for p in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.kill()


def log_tail(path: Path, n: int = 60) -> str:
    """The last ``n`` lines of a server's log file (empty when there is none yet)."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


def leftover_processes() -> list[psutil.Process]:
    """Processes whose command line mentions one of this run's temp dirs."""
    found = []
    me = os.getpid()
    for p in psutil.process_iter(["pid", "cmdline"]):
        if p.info["pid"] == me:
            continue
        cmd = " ".join(p.info["cmdline"] or [])
        if RUN_TAG in cmd:
            found.append(p)
    return found


# ---------------------------------------------------------------- page helpers
def launch_chromium(pw, profile_dir: str, **kw):
    """Fresh-profile Debian Chromium through Playwright (no `playwright install`)."""
    return pw.chromium.launch_persistent_context(
        profile_dir,
        executable_path=CHROMIUM,
        headless=True,
        args=CHROME_ARGS,
        viewport={"width": 1280, "height": 1000},
        **kw,
    )


def open_notebook(page, server: JupyterServer, nb: str, timeout: float = 60_000, workspace: str | None = None) -> None:
    page.goto(server.notebook_url(nb, workspace), wait_until="domcontentloaded")
    page.locator(".jp-NotebookPanel").first.wait_for(state="visible", timeout=timeout)
    # At least one cell is on the page: the document model has loaded.
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(state="visible", timeout=timeout)
    wait_kernel_ready(page, server, nb, timeout)


def wait_kernel_ready(page, server: JupyterServer, nb: str, timeout: float = 60_000) -> None:
    """The notebook's kernel exists, the browser is attached to it, and it is idle.

    PITFALL: the toolbar's execution indicator (``.jp-Notebook-ExecutionIndicator``)
    reads ``data-status="idle"`` for a moment *before any kernel exists* ("No
    Kernel"). A "Run All" clicked then is silently dropped (cells get no
    prompt number), so the indicator alone is not a readiness signal.
    """
    deadline = time.monotonic() + timeout / 1000
    # 1) server side: a session for this notebook, a websocket from the page,
    #    kernel idle. Once the page has a websocket it has a kernel object, and
    #    JupyterLab queues execute requests until the connection is up.
    kid = server.kernel_id_for(nb, timeout / 1000)
    while True:
        k = server.api("GET", f"/api/kernels/{kid}")
        if k.get("connections", 0) >= 1 and k.get("execution_state") == "idle":
            break
        if time.monotonic() > deadline:
            raise TimeoutError(f"kernel not ready: {k}")
        time.sleep(0.1)
    # 2) client side: the page agrees (app API when exposed, else the toolbar).
    page.wait_for_function(
        """() => {
          const app = window.jupyterapp;
          const w = app && app.shell && app.shell.currentWidget;
          if (w && w.sessionContext) {
            const k = w.sessionContext.session && w.sessionContext.session.kernel;
            return w.sessionContext.isReady && !!k && k.status === 'idle'
                   && k.connectionStatus === 'connected';
          }
          const ind = document.querySelector('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator');
          return !!ind && ind.getAttribute('data-status') === 'idle';
        }""",
        timeout=max(1000, (deadline - time.monotonic()) * 1000),
    )


def click_menu(page, *path: str) -> None:
    """Click a Lumino main-menu path, e.g. click_menu(page, 'Run', 'Run All Cells')."""
    page.locator(f".lm-MenuBar-item:has(.lm-MenuBar-itemLabel:text-is('{path[0]}'))").first.click()
    for label in path[1:]:
        page.locator(f".lm-Menu:visible .lm-Menu-item:has(.lm-Menu-itemLabel:text-is('{label}'))").last.click()


def run_all_cells(page, how: str = "menu") -> None:
    if how == "menu":
        click_menu(page, "Run", "Run All Cells")
    elif how == "command":  # needs expose_app_in_browser
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    elif how == "palette":
        page.locator(".jp-NotebookPanel").first.click(position={"x": 5, "y": 5})
        page.keyboard.press("Control+Shift+C")
        page.keyboard.type("Run All Cells")
        page.keyboard.press("Enter")
    else:
        raise ValueError(how)


def wait_all_cells_executed(page, timeout: float = 60_000) -> None:
    """Every code cell shows an execution count ``[n]`` (none ``[ ]`` / ``[*]``).

    Assumes the notebook was saved without outputs/counts (``jupyter nbconvert
    --clear-output --inplace``), so that ``[n]`` can only come from this run."""
    page.wait_for_function(
        """() => {
          const prompts = [...document.querySelectorAll(
              '.jp-NotebookPanel .jp-CodeCell .jp-InputArea-prompt')];
          return prompts.length > 0 &&
                 prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
        }""",
        timeout=timeout,
    )


# A broken widget does NOT show an error in the notebook: a throwing render()
# or an ESM syntax error leaves an empty output area, and only the page's
# console says so ("pageerror: Unexpected token ...", "[anywidget] Failed to
# initialize model."). So: fail on every uncaught page error except known
# benign ones, and on console errors that mention widgets.
BENIGN_PAGE_ERRORS = (
    # Notebook 7.x on load, unrelated to widgets.
    "Cannot read properties of undefined (reading 'schema')",
)
WIDGET_ERROR_MARKERS = (
    "anywidget",
    "widget",
    "Could not create a model",
    "Could not create a view",
    "Failed to load model class",
    "Model not found",
    "Failed to create view",
)


def widget_errors(messages: list[str]) -> list[str]:
    bad = []
    for m in messages:
        if m.startswith("pageerror"):
            if not any(b in m for b in BENIGN_PAGE_ERRORS):
                bad.append(m)
        elif m.startswith("console.error") and any(k.lower() in m.lower() for k in WIDGET_ERROR_MARKERS):
            bad.append(m)
    return bad
