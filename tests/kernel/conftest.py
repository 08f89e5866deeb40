"""Kernels under test: one per Python in ``AIW_KERNEL_PYTHONS`` (``os.pathsep``-separated), default this one.

Each Python must have ipykernel, anywidget, ipywidgets and this package (editable) installed;
``scripts/kernel_envs.sh`` makes such venvs, one per supported ipykernel version.
"""

from __future__ import annotations

import os
import sys

import pytest


def kernel_pythons() -> list[str]:
    raw = os.environ.get("AIW_KERNEL_PYTHONS", "")
    return [p for p in raw.split(os.pathsep) if p.strip()] or [sys.executable]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrizes ``kernel_config`` as (python, ipykernel version, comm mode), one kernel per module each, and
    ``kernel_python`` as (python, ipykernel version).

    Comm mode "main" is classic Notebook / VS Code / JupyterLab < 4.4; "subshell" is JupyterLab >= 4.4,
    which sends comm messages on a subshell (ipykernel 7+ only).
    """
    if "kernel_config" in metafunc.fixturenames:
        from tests.kernel.frontend import ipykernel_version

        params = []
        for python in kernel_pythons():
            try:
                version = ipykernel_version(python)
            except Exception as exc:  # a broken venv is a failure, not a silent skip
                raise pytest.UsageError(f"AIW_KERNEL_PYTHONS: cannot run {python}: {exc}") from exc
            modes = ["main"] if int(version.split(".")[0]) < 7 else ["main", "subshell"]
            params += [pytest.param((python, version, m), id=f"ipykernel-{version}-{m}") for m in modes]
        metafunc.parametrize("kernel_config", params, scope="module")
    if "kernel_python" in metafunc.fixturenames:
        # (python, ipykernel version), one kernel per module each: for tests that send no comm messages, which
        # the comm mode would not change.
        from tests.kernel.frontend import ipykernel_version

        pythons = []
        for python in kernel_pythons():
            try:
                version = ipykernel_version(python)
            except Exception as exc:
                raise pytest.UsageError(f"AIW_KERNEL_PYTHONS: cannot run {python}: {exc}") from exc
            pythons.append(pytest.param((python, version), id=f"ipykernel-{version}"))
        metafunc.parametrize("kernel_python", pythons, scope="module")
