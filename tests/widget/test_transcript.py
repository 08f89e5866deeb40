"""The static transcript beside a widget's view: the conversation readable without the widget, with no way for a
model's or a tool's text to run script, as HTML and as markdown rendered by a renderer that passes raw HTML (as a
trusted notebook's does)."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import re
from typing import Any

import IPython.display
import mistune
import pytest

from ai_widgets import ChatSession, ToolCallPart, ToolCallState, ToolOutcome, tool
from ai_widgets.messages import Message, Role, TextPart
from ai_widgets.outcome import Attachment, CellOutput, CellRun, DisplayBundle
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
from ai_widgets.widget import ChatWidget
from ai_widgets.widget._markdown import CODE_BLOCK, markdown_html
from ai_widgets.widget._transcript import transcript_html, transcript_markdown
from tests.widget.transcript_checks import (
    HOSTILE,
    HOSTILE_NAMES,
    HOSTILE_TEXTS,
    PNG,
    SVG_WITH_SCRIPT,
    hostile_files,
    image_names,
    script_problems,
    visible_text,
)
from tests.widget.widget_harness import recording_comms

_markdown = mistune.create_markdown(escape=False, plugins=["strikethrough", "table", "url"])


@tool
def look(query: str) -> ToolOutcome:
    """Looks something up."""
    return ToolOutcome.success(
        f"found {query}",
        text="looked",
        attachments=[
            Attachment(mime_type="image/png", data=PNG, name="chart <b onmouseover=alert('aiw-xss-name')>"),
            Attachment(mime_type="image/svg+xml", data=SVG_WITH_SCRIPT, name="drawing.svg"),
            Attachment(mime_type="text/html", url="javascript:alert('aiw-xss-url')", name="page"),
            Attachment(mime_type="text/html", url="https://example.com/a?b=1&c=2", name="source"),
        ],
    )


@tool
def explode(query: str) -> str:
    """Fails."""
    raise RuntimeError(f"bad {query} <script>alert('aiw-xss-error')</script>")


def _script(request: Any) -> ScriptedReply:
    if request.tool_results():
        return ScriptedReply(text="After the tools:\n\n" + HOSTILE, status=None)
    return ScriptedReply(
        text=HOSTILE,
        reasoning="thinking <script>alert('aiw-xss-reasoning')</script>",
        tool_calls=[
            ScriptedToolCall(name="look", arguments={"query": "<img src=x onerror=alert('aiw-xss-args')>"}),
            ScriptedToolCall(name="explode", arguments={"query": "[x](javascript:alert('aiw-xss-args2'))"}),
        ],
    )


@pytest.fixture(scope="module")
def conversation() -> list[Message]:
    session = ChatSession(ScriptedTransport(_script, repeat=True), tools=[look, explode])
    asyncio.run(session.send("hello " + HOSTILE))
    return session.messages


def test_html_shows_every_attack_as_text(conversation: list[Message]) -> None:
    html = transcript_html(conversation)
    assert script_problems(html) == []
    text = visible_text(html)
    for hostile in HOSTILE_TEXTS[:-1]:
        # Rendered as markdown (a code span's text as code, an escape as the character), the attack only ever as text.
        attack = re.search(r"aiw-xss-[a-z0-9]+", hostile)
        assert attack is not None
        assert attack.group() in text, hostile
    for written in ("<script>alert('aiw-xss-script')</script>", "<img src=x onerror=alert('aiw-xss-img')>"):
        assert written in text  # raw HTML shows as written
    assert "lone \ufffd surrogate" in text
    for shown in ("You", "Assistant", "look", "explode", "found", "completed", "failed", "RuntimeError"):
        assert shown in text
    assert f'src="data:image/png;base64,{PNG}"' in html  # the raster image inline
    assert "image/svg+xml;base64" not in html
    assert "drawing.svg" in text
    assert 'href="https://example.com/a?b=1&amp;c=2"' in html
    assert "javascript:" not in html.replace("javascript:alert(", "")  # only ever as text


def test_markdown_renders_to_no_script(conversation: list[Message]) -> None:
    markdown = transcript_markdown(conversation)
    rendered = _markdown(markdown)
    assert isinstance(rendered, str)
    assert script_problems(rendered) == []
    text = visible_text(rendered)
    for hostile in ("<script>alert('aiw-xss-script')</script>", "<img src=x onerror=alert('aiw-xss-img')>"):
        assert hostile in text
    assert "<script>alert('aiw-xss-fence')</script>" in text  # the fenced block's text, as code
    assert f'src="data:image/png;base64,{PNG}"' in rendered
    assert "<a " not in rendered.replace('<a href="https://', "")  # no link of the model's but plain http(s) ones
    for shown in ("You", "Assistant", "look", "explode", "RuntimeError"):
        assert shown in text


def test_a_tool_result_shows_its_text_and_its_value() -> None:
    session = ChatSession(ScriptedTransport(_script, repeat=True), tools=[look, explode])
    asyncio.run(session.send("hi"))
    html, markdown = transcript_html(session.messages), str(_markdown(transcript_markdown(session.messages)))
    for shown in (visible_text(html), visible_text(markdown)):
        assert "looked" in shown  # the text the card shows
        assert "found <img src=x onerror=alert('aiw-xss-args')>" in shown  # the value the model was told, as text
        assert "RuntimeError: bad" in shown
        assert "drawing.svg" in shown  # an SVG: a chip, never embedded
        assert "SVG image" in shown


@pytest.mark.parametrize("form", ["html", "markdown"])
def test_a_messages_files_show_as_images_and_chips_and_run_nothing(form: str) -> None:
    message = Message(Role.USER, [TextPart("look at these"), *hostile_files()])
    html = transcript_html([message]) if form == "html" else str(_markdown(transcript_markdown([message])))
    assert script_problems(html) == []
    text = visible_text(html)
    assert f'src="data:image/png;base64,{PNG}"' in html  # the raster image inline, small
    assert html.count("<img") == 1  # the SVG (script inside) and the oversized PNG are chips, not images
    assert "image/svg+xml" not in html.replace("image/svg+xml (", "")
    assert image_names(html) == [HOSTILE_NAMES[0]]  # the image's name, whole, as its alt text
    for name in HOSTILE_NAMES[1:]:
        assert name in text  # each named, as text
    assert "PDF" in text
    assert "1.2 MB" in text  # the oversized image: named with its size
    assert "SVG image" in text
    if form == "html":
        assert 'href="https://example.com/report.pdf"' in html
    assert "javascript:" not in html.replace("javascript:alert(", "")


@pytest.mark.parametrize("form", ["html", "markdown"])
def test_a_tool_results_display_shows_its_image_or_its_text_form(form: str) -> None:
    """A figure a tool returned shows as its image; a table (whose HTML the transcript never embeds) as its text
    form; a hostile HTML display as text, running nothing."""
    frame_html = "<table><tr><td onmouseover=alert('aiw-xss-table')>Lisbon</td></tr></table>"

    @tool
    def plot() -> ToolOutcome:
        """Plots."""
        return ToolOutcome.success(None, display=IPython.display.Image(data=base64.b64decode(PNG), format="png"))

    @tool
    def table() -> ToolOutcome:
        """A table."""
        return ToolOutcome.success(None, display=_Rich({"text/html": frame_html, "text/plain": "city: Lisbon"}))

    calls = [ScriptedToolCall(name="plot", arguments={}), ScriptedToolCall(name="table", arguments={})]
    session = ChatSession(ScriptedTransport([ScriptedReply(tool_calls=calls), "done"]), tools=[plot, table])
    asyncio.run(session.send("show"))
    shown = (
        transcript_html(session.messages) if form == "html" else str(_markdown(transcript_markdown(session.messages)))
    )
    assert script_problems(shown) == []
    assert f'src="data:image/png;base64,{PNG}"' in shown
    assert "city: Lisbon" in visible_text(shown)
    assert "<table" not in shown  # the tool's HTML is never embedded
    assert "<td" not in shown


@pytest.mark.parametrize("form", ["html", "markdown"])
def test_a_typed_answer_shows_as_its_object_after_what_its_refused_try_was_told(form: str) -> None:
    @dataclasses.dataclass
    class City:
        name: str
        people: int

    answers = ScriptedTransport(['{"name": "Lisbon", "people": "many"}', '{"name": "<b>Lisbon</b>", "people": 545000}'])
    session = ChatSession(answers)
    reply = asyncio.run(session.send("which city?", output_type=City))
    assert reply.output == City("<b>Lisbon</b>", 545000)
    shown = (
        transcript_html(session.messages) if form == "html" else str(_markdown(transcript_markdown(session.messages)))
    )
    assert script_problems(shown) == []
    text = visible_text(shown)
    assert "Typed answer (City)" in text
    assert '"people": 545000' in text
    assert '"name": "<b>Lisbon</b>"' in text  # as text
    assert "Answer 1 did not match City" in text


class _Rich:
    def __init__(self, bundle: dict[str, Any]) -> None:
        self.bundle = bundle

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return self.bundle


def test_an_empty_conversation_says_so() -> None:
    assert "no messages yet" in visible_text(transcript_html([]))
    assert "no messages yet" in visible_text(str(_markdown(transcript_markdown([]))))


def test_a_long_conversation_keeps_its_newest_messages_within_the_limit() -> None:
    session = ChatSession(ScriptedTransport(lambda request: "reply to " + request.last_user_text, repeat=True))

    async def talk() -> None:
        for turn in range(40):
            await session.send(f"question {turn}")

    asyncio.run(talk())
    html = transcript_html(session.messages, limit=3_000)
    markdown = transcript_markdown(session.messages, limit=1_000)
    assert len(html) < 3_000 + 1_000
    assert "reply to question 39" in html
    assert "question 0<" not in html
    assert "earlier messages not in this static copy" in visible_text(html)
    assert "reply to question 39" in markdown
    assert "question 0\n" not in markdown
    assert "earlier messages not in this static copy" in visible_text(str(_markdown(markdown)))
    assert "not in this static copy" not in transcript_html(session.messages)  # 80 short messages: all of them


def test_a_shown_chat_updates_its_display_as_turns_end_and_only_when_it_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    published: list[tuple[str, str | None, dict[str, Any]]] = []
    monkeypatch.setattr(
        IPython.display,
        "display",
        lambda data, **kw: published.append(("display", kw.get("display_id"), data)),
    )
    monkeypatch.setattr(
        IPython.display,
        "update_display",
        lambda data, **kw: published.append(("update", kw["display_id"], data)),
    )
    with recording_comms():
        chat = ChatWidget(transport=ScriptedTransport(lambda request: "Hi <b>there</b>", repeat=True))
        chat.update_transcript()
        assert published == []  # never shown: nothing to update
        chat._ipython_display_()
        # Two outputs: the live view (no transcript in it, no id: it is never updated), then the transcript.
        (_, view_id, view), (_, transcript_id, transcript) = published
        assert view_id is None
        assert set(view) == {"application/vnd.jupyter.widget-view+json"}
        assert set(transcript) == {"text/html", "text/markdown"}
        assert transcript_id == chat._transcript_id
        assert f'data-aiw-transcript="{transcript_id}"' in transcript["text/html"]
        asyncio.run(chat.session.send("hello"))
        chat.update_transcript()  # unchanged since the turn ended: nothing sent again
        kinds = [kind for kind, _id, _data in published]
        assert kinds == ["display", "display", "update"]
        assert published[-1][1] == transcript_id
        assert "Hi &lt;b&gt;there&lt;/b&gt;" in published[-1][2]["text/html"]
        chat.close()
        chat.update_transcript()  # closed: nothing
        assert len(published) == 3


def test_the_transcript_id_is_checked_before_it_goes_into_the_style() -> None:
    with pytest.raises(ValueError, match="transcript id"):
        transcript_html([], transcript_id='x"]{}</style><script>alert(1)</script>')


def test_a_call_that_ran_without_asking_says_so_and_why() -> None:
    part = ToolCallPart("c1", "run_python", '{"code": "x = 1"}', state=ToolCallState.COMPLETED)
    part.outcome = ToolOutcome.success("ok")
    part.unasked_reason = "Run code without asking is on"
    messages = [Message.user("go"), Message(Role.ASSISTANT, [part])]
    assert "Ran without asking: Run code without asking is on" in transcript_html(messages)
    assert "Ran without asking: Run code without asking is on" in transcript_markdown(messages)
    part.unasked_reason = None
    assert "without asking" not in transcript_html(messages)


def test_a_cell_run_shows_its_code_as_it_ran_its_outputs_in_order_and_what_it_changed() -> None:
    figure = DisplayBundle(data={"text/plain": "<Figure>", "image/png": PNG})
    cell = CellRun(
        code="df2 = df.dropna()\nprint('<b>kept</b>')\nplot()",
        edited=True,
        outputs=(
            CellOutput(kind="stream", name="stdout", text="<b>kept</b> 3 rows"),
            CellOutput(kind="display", display=figure),
            CellOutput(kind="result", display=DisplayBundle(data={"text/plain": "42"}, text="42")),
        ),
        created=("df2",),
        mutated=("rows",),
        stopped_at=None,
    )
    part = ToolCallPart("c1", "run_python", '{"code": "df2 = df"}', state=ToolCallState.COMPLETED)
    part.edited_arguments = {"code": cell.code}
    part.outcome = ToolOutcome.success(text="what the model read", cell=cell)
    messages = [Message.user("go"), Message(Role.ASSISTANT, [part])]
    html = transcript_html(messages)
    assert html.index("df2 = df.dropna()") < html.index("&lt;b&gt;kept&lt;/b&gt; 3 rows") < html.index("data:image/png")
    assert html.index("data:image/png") < html.index("42") < html.index("Changed: created df2; changed in place rows.")
    assert "<b>kept</b>" not in html
    assert "what the model read" not in html  # the outputs themselves, not the model's text of them
    markdown = transcript_markdown(messages)
    assert "df2 = df.dropna()" in markdown
    assert "Changed: created df2; changed in place rows." in markdown
    stopped = ToolCallPart("c2", "run_python", '{"code": "while True: pass"}', state=ToolCallState.CANCELLED)
    stopped.outcome = ToolOutcome.failure(
        "Stopped", cell=CellRun(code="while True: pass", stopped_at="line 1 of the code")
    )
    assert "Stopped at line 1 of the code." in transcript_html([Message(Role.ASSISTANT, [stopped])])


# --- a reply's markdown, rendered for the HTML output through an allow-list, kept as markdown for the other ---------

FORMATTED = (
    "Some **bold**, *emphasis* and ~~struck~~ text, `inline code` and a [link](https://example.com/a?b=1&c=2).\n\n"
    "| region | revenue |\n|:---|---:|\n| East | 118 |\n\n"
    "```python\nprint('a < b')\n```\n\n"
    "1. one\n2. two\n\n"
    "<script>alert('aiw-xss-md-script')</script>\n\n"
    "<img src=x onerror=alert('aiw-xss-md-img')>\n\n"
    "[bad](javascript:alert('aiw-xss-md-link')) [VBS](vbscript:alert('aiw-xss-md-vbs')) "
    "[data](data:text/html;base64,PHNjcmlwdD4=) ![pic](javascript:alert('aiw-xss-md-pic')) "
    "![remote](https://example.com/pixel.png)\n\n"
    "```js\" onmouseover=\"alert('aiw-xss-md-info')\nx\n```"
)


def _reply(text: str) -> list[Message]:
    return [Message.user("show me"), Message(Role.ASSISTANT, [TextPart(text)])]


def test_html_renders_a_replys_markdown_tables_code_emphasis_lists_and_links() -> None:
    html = transcript_html(_reply(FORMATTED))
    assert "<strong>bold</strong>" in html
    assert "<em>emphasis</em>" in html
    assert "<s>struck</s>" in html
    assert "<code>inline code</code>" in html
    assert '<a href="https://example.com/a?b=1&amp;c=2" rel="noopener noreferrer nofollow">link</a>' in html
    assert '<table style="border-collapse: collapse; margin: 0.25em 0">' in html
    assert 'text-align:left">region</th>' in html
    assert 'text-align:right">118</td>' in html
    # A code block framed where the notebook's CSS does not reach (GitHub, nbviewer), its code escaped.
    assert f'<pre style="{CODE_BLOCK}"><code class="language-python">print(\'a &lt; b\')\n</code></pre>' in html
    assert "<ol>\n<li>one</li>" in html
    assert "**bold**" not in visible_text(html)


def test_html_of_a_replys_markdown_runs_nothing_and_shows_the_attacks_as_text() -> None:
    html = transcript_html(_reply(FORMATTED))
    assert script_problems(html) == []
    assert "<script" not in html
    assert "onerror=" not in html.replace("onerror=alert(&#x27;", "").replace("onerror=alert('", "")
    for scheme in ("javascript:", "vbscript:", "data:text"):
        assert f'href="{scheme}' not in html
        assert f'src="{scheme}' not in html
    text = visible_text(html)
    assert "<script>alert('aiw-xss-md-script')</script>" in text  # raw HTML is its text
    assert "<img src=x onerror=alert('aiw-xss-md-img')>" in text
    assert "[bad](javascript:alert('aiw-xss-md-link'))" in text  # a link that is not http(s) is its text
    assert "![pic](javascript:alert('aiw-xss-md-pic'))" in text
    # A remote image is a link to it: a saved notebook fetches nothing when it is opened.
    assert "<img" not in html
    assert '<a href="https://example.com/pixel.png" rel="noopener noreferrer nofollow">🖼 remote</a>' in html
    assert 'class="language-js' not in html  # a code block's language that is not a plain name is dropped


def test_the_markdown_output_keeps_the_markdown_that_a_renderer_formats() -> None:
    markdown = transcript_markdown(_reply(FORMATTED))
    assert "Some **bold**, *emphasis*" in markdown
    assert "| region | revenue |" in markdown
    rendered = _markdown(markdown)
    assert isinstance(rendered, str)
    assert "<table>" in rendered
    assert "<strong>bold</strong>" in rendered
    assert "print(&#x27;a &lt; b&#x27;)" in rendered or "print('a &lt; b')" in rendered
    assert script_problems(rendered) == []


@pytest.mark.parametrize(
    ("markdown", "html"),
    [
        ("[a](mailto:ada@example.com)", '<a href="mailto:ada@example.com" rel="noopener noreferrer nofollow">a</a>'),
        (
            "[![x](https://e.com/i.png)](https://e.com)",
            '<a href="https://e.com" rel="noopener noreferrer nofollow">x</a>',
        ),
        ("[a](/relative/path)", "<p>a</p>"),
        ("[a](JaVaScRiPt:alert(1))", "<p>[a](JaVaScRiPt:alert(1))</p>"),
        ("<https://e.com/x>", '<a href="https://e.com/x" rel="noopener noreferrer nofollow">https://e.com/x</a>'),
        ("5. five", '<ol start="5">'),
        ("# Title {onclick=x}", "<h1>Title {onclick=x}</h1>"),
    ],
)
def test_the_allow_list_keeps_only_plain_links_and_known_attributes(markdown: str, html: str) -> None:
    assert html in markdown_html(markdown)
