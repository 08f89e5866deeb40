"""The documentation site: its API reference (docs/reference/) covers every public module, and every name it shows has
a docstring of its own: mkdocstrings leaves an undocumented name out without a word, which `mkdocs build --strict`
cannot catch; and its troubleshooting page has a place for every error class."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

from ai_widgets.messages import ErrorKind
from ai_widgets.widget._help import ANCHORS, DOCS_URL, TROUBLESHOOTING

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "reference"
DIRECTIVE = re.compile(r"^::: (ai_widgets[\w.]*)$", re.M)
# Hooks pydantic calls, not API a person calls.
NOT_API = {"model_post_init"}


def referenced_modules() -> list[str]:
    return sorted({name for page in REFERENCE.glob("*.md") for name in DIRECTIVE.findall(page.read_text())})


def test_every_public_module_is_in_the_reference() -> None:
    expected = {
        "ai_widgets",
        "ai_widgets.kernel",
        "ai_widgets.transports",
        "ai_widgets.mcp",
        "ai_widgets.integrations.acp",
        "ai_widgets.integrations.ag_ui",
        "ai_widgets.integrations.pydantic_ai",
        "ai_widgets.attachments",
    }
    assert expected <= set(referenced_modules())


@pytest.mark.parametrize("module_name", referenced_modules())
def test_every_name_the_reference_shows_has_a_docstring(module_name: str) -> None:
    module = importlib.import_module(module_name)
    assert module.__doc__, module_name
    missing = []
    for name in module.__all__:
        value = getattr(module, name)
        if not (inspect.isclass(value) or inspect.isfunction(value)):
            continue  # constants are documented where they are defined, by a comment the reference does not show
        if not (value.__dict__.get("__doc__") if inspect.isclass(value) else value.__doc__):
            missing.append(name)
        if inspect.isclass(value):
            missing += [
                f"{name}.{attribute}"
                for attribute, member in vars(value).items()
                if not attribute.startswith("_")
                and attribute not in NOT_API
                and inspect.isfunction(member)
                and not member.__doc__
            ]
    assert missing == [], f"{module_name}: no docstring for {missing}"


def test_every_error_class_has_its_place_in_troubleshooting() -> None:
    """Each error class of the package, public or met in a card, has an anchor there (messages may link to it)."""
    page = (ROOT / "docs" / "troubleshooting.md").read_text()
    anchors = set(re.findall(r'<a id="(\w+)"></a>', page))
    defined = {
        match
        for path in (ROOT / "ai_widgets").rglob("*.py")
        for match in re.findall(
            r"^class (\w+(?:Error|Warning))\((?:\w*(?:Error|Exception|Warning)\b)", path.read_text(), flags=re.M
        )
    }
    assert defined, "the package's error classes were found"
    assert sorted(name for name in defined if name.lower() not in anchors) == []


def test_the_readmes_links_lead_somewhere() -> None:
    """The README is outside the site mkdocs checks: its links into docs/ (and its screenshot) are checked here."""
    readme = (ROOT / "README.md").read_text()
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    local = [target for target in targets if "://" not in target]
    assert "docs/getting-started.md" in local
    assert "docs/images/turn-approval.png" in local
    assert [target for target in local if not (ROOT / target).is_file()] == []


def test_every_kind_of_reply_error_links_to_an_entry_of_the_troubleshooting_page() -> None:
    """The link in a reply's error opens the published page at an anchor the page has, for every kind."""
    page = (ROOT / "docs" / "troubleshooting.md").read_text()
    anchors = set(re.findall(r'<a id="([\w-]+)"></a>', page))
    assert set(ANCHORS) == set(ErrorKind)
    assert sorted(anchor for anchor in ANCHORS.values() if anchor not in anchors) == []
    for kind in ErrorKind:  # the page names each kind, so a reader who met it finds it
        assert f"(`{kind.value}`)" in page, kind


def test_the_documentation_address_is_the_same_everywhere_it_is_given() -> None:
    """The widget's links, the site's own address and the package's metadata name one site."""
    documentation = re.search(r'^Documentation = "([^"]+)"$', (ROOT / "pyproject.toml").read_text(), flags=re.M)
    site_url = re.search(r"^site_url: (\S+)$", (ROOT / "mkdocs.yml").read_text(), flags=re.M)
    assert documentation is not None
    assert site_url is not None
    assert documentation.group(1) == site_url.group(1) == DOCS_URL
    assert DOCS_URL.startswith("https://")
    assert DOCS_URL.endswith("/")
    assert f"{DOCS_URL}troubleshooting/" == TROUBLESHOOTING  # mkdocs' directory URL for troubleshooting.md
