"""A model's markdown as HTML that runs nothing, for the static transcript: paragraphs, emphasis, lists, tables and
code blocks rendered; everything else kept as the text it was written as.

The markdown is parsed (CommonMark with tables and strikethrough, raw HTML off) and each token is kept only if its
kind is on an allow-list, with only the attributes listed for it: a link's ``href`` when it is a plain ``http(s)`` or
``mailto:`` URL (any other link is its text), a table cell's alignment, an ordered list's start, a code block's
language as a class name. An image becomes a link to it (a saved notebook fetches nothing when opened). Raw HTML and
any token kind not listed become text, which the renderer escapes.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from ai_widgets._safe import safe_text

__all__ = ["markdown_html"]

PARSER = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable(
    ["table", "strikethrough"]
)

#: The tags a kept token may open or close (``*_open``/``*_close`` tokens), by the token's name.
PAIRED = frozenset(
    {
        "paragraph",
        "heading",
        "bullet_list",
        "ordered_list",
        "list_item",
        "blockquote",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "em",
        "strong",
        "s",
    }
)
#: Tokens kept as they are (their text is escaped when rendered).
SINGLE = frozenset({"inline", "text", "softbreak", "hardbreak", "hr", "code_inline", "code_block", "fence"})
HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
ALIGN = frozenset({"text-align:left", "text-align:right", "text-align:center"})
SAFE_URL = re.compile(r"(?:https?://|mailto:)[^\s\x00-\x1f\x7f\"'<>`\\]+", re.IGNORECASE)
LANGUAGE = re.compile(r"[A-Za-z0-9_+#.-]{1,30}")
CELL = "border: 1px solid var(--jp-border-color2, #ddd); padding: 0.15em 0.5em"
TABLE = "border-collapse: collapse; margin: 0.25em 0"
CODE_BLOCK = (
    "background: var(--jp-layout-color2, #f5f5f5); border: 1px solid var(--jp-border-color2, #ddd);"
    " border-radius: 3px; padding: 0.4em 0.6em; overflow-x: auto"
)
MAX_CACHED = 256
MAX_CACHED_CHARS = 20_000


def safe_url(url: object) -> str | None:
    """``url`` when it is a plain ``http(s)`` or ``mailto:`` URL, else ``None``."""
    return url if isinstance(url, str) and SAFE_URL.fullmatch(url) else None


def text_token(content: str) -> Token:
    return Token("text", "", 0, content=content)


def kept(token: Token) -> Token:
    """A paired or single token on the allow-list, with only the attributes allowed for it."""
    attrs: dict[str, str | int | float] = {}
    match token.type:
        case "th_open" | "td_open":
            style = token.attrs.get("style")
            attrs["style"] = CELL + (f"; {style}" if style in ALIGN else "")
        case "table_open":
            attrs["style"] = TABLE
        case "ordered_list_open":
            start = token.attrs.get("start")
            if isinstance(start, int) or (isinstance(start, str) and start.isdigit()):
                attrs["start"] = int(start)
    token.attrs = attrs
    if token.type == "heading_open" or token.type == "heading_close":
        token.tag = token.tag if token.tag in HEADINGS else "p"
    if token.type == "fence":
        language = token.info.split()[0] if token.info.split() else ""
        token.info = language if LANGUAGE.fullmatch(language) else ""
    return token


def sanitised(tokens: list[Token]) -> list[Token]:
    """The tokens on the allow-list, with their allowed attributes; links and images checked; the rest as text."""
    out: list[Token] = []
    dropped_links = 0  # links whose URL is not kept: their text stays, their open and close go
    kept_links = 0  # links kept: an image inside one is its text (no link in a link)
    for token in tokens:
        if token.children is not None:
            token.children = sanitised(token.children)
        name = token.type.removesuffix("_open").removesuffix("_close")
        if token.type == "link_open":
            href = safe_url(token.attrs.get("href"))
            if href is None:
                dropped_links += 1
                continue
            token.attrs = {"href": href, "rel": "noopener noreferrer nofollow"}
            kept_links += 1
            out.append(token)
        elif token.type == "link_close":
            if dropped_links:
                dropped_links -= 1
                continue
            kept_links -= 1
            out.append(token)
        elif token.type == "image":
            alt = token.content or "image"
            src = safe_url(token.attrs.get("src"))
            if src is None or dropped_links or kept_links:
                out.append(text_token(alt))
            else:
                out.append(Token("link_open", "a", 1, attrs={"href": src, "rel": "noopener noreferrer nofollow"}))
                out.append(text_token(f"🖼 {alt}"))
                out.append(Token("link_close", "a", -1))
        elif token.type in SINGLE or (name in PAIRED and token.type != name):
            out.append(kept(token))
        elif token.type == "html_block":
            out.extend([Token("paragraph_open", "p", 1), text_token(token.content), Token("paragraph_close", "p", -1)])
        elif token.content:
            out.append(text_token(token.content))
    return out


def framed_code(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    """A code block as markdown-it renders it, framed, so code stands out from prose where the notebook's own CSS
    does not reach (GitHub, nbviewer, nbconvert)."""
    rule = RendererHTML.fence if tokens[idx].type == "fence" else RendererHTML.code_block
    return rule(renderer, tokens, idx, options, env).replace("<pre>", f'<pre style="{CODE_BLOCK}">', 1)


PARSER.add_render_rule("fence", framed_code)
PARSER.add_render_rule("code_block", framed_code)


def markdown_html(text: str) -> str:
    """``text`` (a model's or a tool's markdown) as HTML in which nothing can run: what it formats is rendered, and
    every text, raw HTML included, is escaped. The most recent short texts are remembered (a transcript renders every
    message again at each turn's end); a long one is rendered each time, so the memory held stays small."""
    return remembered(text) if len(text) <= MAX_CACHED_CHARS else rendered(text)


@functools.lru_cache(maxsize=MAX_CACHED)
def remembered(text: str) -> str:
    return rendered(text)


def rendered(text: str) -> str:
    tokens = sanitised(PARSER.parse(safe_text(text)))
    html: str = PARSER.renderer.render(tokens, PARSER.options, {})
    return html
