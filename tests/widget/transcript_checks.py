"""What "no script" means for a transcript, and the hostile texts that try: shared by the renderer's unit tests and
the saved-notebook tests."""

from __future__ import annotations

import base64
from html.parser import HTMLParser

from ai_widgets.messages import FilePart

#: Every attack carries ``aiw-xss`` so a check can tell ours from a page's own scripts (nbconvert adds some).
HOSTILE_TEXTS = (
    "<script>alert('aiw-xss-script')</script>",
    "<img src=x onerror=alert('aiw-xss-img')>",
    "[click me](javascript:alert('aiw-xss-link'))",
    "<a href='javascript:alert(`aiw-xss-a`)'>a</a>",
    "<svg onload=alert('aiw-xss-svg')><script>alert('aiw-xss-svg2')</script></svg>",
    "![x](javascript:alert('aiw-xss-image'))",
    "&lt;script&gt;alert('aiw-xss-entity')&lt;/script&gt;",
    "`<script>alert('aiw-xss-code')</script>`",
    "```\n<script>alert('aiw-xss-fence')</script>\n```",
    "````a`b\n<img src=x onerror=alert('aiw-xss-badfence')>",
    "<javascript:alert('aiw-xss-autolink')>",
    "\\[x\\](javascript:alert('aiw-xss-backslash'))",
    "lone \ud800 surrogate",
)
HOSTILE = "\n\n".join(HOSTILE_TEXTS)

#: A 1x1 PNG.
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c63000100000500010d0a2db40000000049454e44ae426082"
    )
).decode()
SVG_WITH_SCRIPT = base64.b64encode(
    b"<svg xmlns='http://www.w3.org/2000/svg'><script>alert('aiw-xss-svgfile')</script></svg>"
).decode()

#: File names that try to run script wherever a name is shown (an alt, a title, a chip, a link).
HOSTILE_NAMES = (
    'chart" onerror="alert(\'aiw-xss-alt\')".png',
    "<img src=x onerror=alert('aiw-xss-filename')>.pdf",
    "[x](javascript:alert('aiw-xss-namelink')).svg",
    "report `<script>alert('aiw-xss-namecode')</script>`",
)


def hostile_files() -> list[FilePart]:
    """A person's attachments with hostile names: a small PNG, a PDF, an SVG with a script inside, a PNG too large
    to embed, a file behind a ``javascript:`` URL and one behind an https URL."""
    return [
        FilePart("image/png", data=PNG, name=HOSTILE_NAMES[0]),
        FilePart.from_bytes(b"%PDF-1.4 tiny", "application/pdf", name=HOSTILE_NAMES[1]),
        FilePart("image/svg+xml", data=SVG_WITH_SCRIPT, name=HOSTILE_NAMES[2]),
        FilePart.from_bytes(bytes(1_250_000), "image/png", name="big.png"),
        FilePart("text/html", url="javascript:alert('aiw-xss-fileurl')", name=HOSTILE_NAMES[3]),
        FilePart("application/pdf", url="https://example.com/report.pdf", name="report.pdf"),
    ]


_URL_ATTRIBUTES = {"href", "src", "xlink:href", "action", "formaction", "data", "srcset", "background", "poster"}


class _Scanner(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.text: list[str] = []
        self.image_names: list[str] = []
        self._stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._stack.append(tag)
        if tag == "img":
            self.image_names.append(dict(attrs).get("alt") or "")
        for name, value in attrs:
            value = value or ""
            if name.startswith("on") and ("aiw-xss" in value or tag in ("img", "svg")):
                self.problems.append(f"<{tag} {name}={value!r}>")
            if name in _URL_ATTRIBUTES:
                scheme = value.strip().lower()
                if not scheme.startswith(("http://", "https://", "data:image/png", "data:image/jpeg", "#")) and (
                    "aiw-xss" in value or scheme.startswith(("javascript:", "vbscript:", "data:"))
                ):
                    self.problems.append(f"<{tag} {name}={value!r}>")
        if tag in ("svg", "iframe", "object", "embed", "math"):
            self.problems.append(f"<{tag}>")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._stack:
            while self._stack and self._stack.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        if self._stack and self._stack[-1] == "script" and "aiw-xss" in data:
            self.problems.append(f"<script>{data[:80]!r}")
        self.text.append(data)


def script_problems(html: str) -> list[str]:
    """Every way ``html`` could run one of the attacks: a script element, event handler or script URL of ours."""
    scanner = _Scanner()
    scanner.feed(html)
    scanner.close()
    return scanner.problems


def visible_text(html: str) -> str:
    """The text a reader of ``html`` sees."""
    scanner = _Scanner()
    scanner.feed(html)
    scanner.close()
    return "".join(scanner.text)


def image_names(html: str) -> list[str]:
    """The ``alt`` text of each image in ``html``, as a reader's browser decodes it."""
    scanner = _Scanner()
    scanner.feed(html)
    scanner.close()
    return scanner.image_names
