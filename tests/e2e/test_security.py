"""Nothing a model or a tool returns can run script in the notebook (DESIGN: sanitised markdown, text elsewhere)."""

from __future__ import annotations

import pytest
from chat_ui import (
    IMPORTS,
    WAIT,
    assert_no_widget_errors,
    last_assistant,
    open_and_run,
    screenshot,
    send_from_input,
    wait_idle,
)
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

# Every payload sets window.__pwned if it ever runs.
HOSTILE = (
    IMPORTS
    + r'''
from ai_widgets import ToolOutcome
from ai_widgets.tools import Attachment, Citation

P = [
    '<img src=x onerror="window.__pwned=1">',
    "<script>window.__pwned=1</script>",
    "[click](javascript:window.__pwned=1)",
    '<a href="javascript:window.__pwned=1">anchor</a>',
    '<svg onload="window.__pwned=1"><circle r=5 /></svg>',
    '<iframe src="javascript:window.__pwned=1"></iframe>',
    '<a href="JaVaScRiPt:window.__pwned=1" onclick="window.__pwned=1">mixed case</a>',
    "[ref][1]\n\n[1]: javascript:window.__pwned=1",
    "![img](javascript:window.__pwned=1)",
    '<details open ontoggle="window.__pwned=1"><summary>s</summary>d</details>',
    '<form action="javascript:window.__pwned=1"><button>go</button></form>',
    '<math><mtext><table><mglyph><style><img src=x onerror="window.__pwned=1">',
]
MD = "Hostile **markdown**:\n\n" + "\n\n".join(P)


@tool(title='Evil <img src=x onerror="window.__pwned=1">', icon='<svg onload="window.__pwned=1">')
def evil(query: str) -> ToolOutcome:
    """Returns hostile content."""
    return ToolOutcome.success(
        {"html": P[0], "script": P[1], "link": P[2]},
        text=MD,
        citations=[Citation(url="javascript:window.__pwned=1", title=P[1], snippet=P[0]),
                   Citation(url="data:text/html,<script>window.__pwned=1</script>", title="data link")],
        attachments=[Attachment(mime_type="text/html", url="javascript:window.__pwned=1", name=P[0]),
                     Attachment(mime_type='image/svg+xml" onerror="window.__pwned=1', data="PHN2Zz4=", name="x")],
    )


@tool(title="Raw value")
def raw(query: str) -> dict:
    """Returns hostile content as a plain value (shown as JSON)."""
    return {"html": P[0], "script": P[1], "nested": {"svg": P[4]}}


@tool
def boom(query: str) -> str:
    """Fails with a hostile message."""
    raise RuntimeError(P[0] + P[1])


def model(request):
    if request.tool_results():
        return ScriptedReply(status=P[1], text="After the tools: " + MD)
    return ScriptedReply(
        status=P[0],
        reasoning=P[1] + P[0],
        text=MD,
        tool_calls=[
            ScriptedToolCall(name="evil", arguments={"query": P[0], "more": P[1]}),
            ScriptedToolCall(name="raw", arguments={"query": P[4]}),
            ScriptedToolCall(name="boom", arguments={"query": P[2]}),
            ScriptedToolCall(name="web", arguments={"q": P[3]}, progress=[(0.5, P[0])],
                             provider_result=ToolOutcome.success(text=MD, citations=[P[2]])),
        ],
    )


chat = ChatWidget(transport=ScriptedTransport(model, delay=0.005), tools=[evil, raw, boom], collapse_tool_calls=False)
chat
'''
)

NO_SCRIPT = """root => {
  const bad = [];
  for (const el of root.querySelectorAll('*')) {
    const tag = el.tagName.toLowerCase();
    if (['script', 'iframe', 'object', 'embed', 'form', 'svg', 'math', 'style', 'link', 'meta'].includes(tag)
        && !el.closest('.aiw-input-row')) bad.push('<' + tag + '>');
    for (const a of el.attributes) {
      const name = a.name.toLowerCase();
      const value = a.value.replace(/[\\s\\u0000-\\u001f]/g, '').toLowerCase();
      if (name.startsWith('on')) bad.push(tag + '[' + name + ']');
      if (['href', 'src', 'action', 'formaction', 'xlink:href', 'data'].includes(name)
          && (value.startsWith('javascript:') || value.startsWith('vbscript:') || value.startsWith('data:text')))
        bad.push(tag + '[' + name + '=' + a.value + ']');
    }
  }
  return bad;
}"""


def test_hostile_content_never_runs(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("lab"), notebook_name
    srv.write_notebook(nb, [HOSTILE])
    widget = open_and_run(page, srv, nb)
    page.evaluate("() => { delete window.__pwned; }")
    url = page.url

    # The person's own message carries payloads too (shown as typed text).
    send_from_input(widget, '<img src=x onerror="window.__pwned=1"> <script>window.__pwned=1</script>')
    expect(last_assistant(widget)).to_contain_text("After the tools", timeout=WAIT)
    wait_idle(widget)
    cards = widget.locator(".aiw-tool-card")
    expect(cards).to_have_count(4)
    expect(cards.nth(0)).to_have_attribute("data-state", "completed")
    expect(cards.nth(2)).to_have_attribute("data-state", "failed")
    expect(cards.nth(3)).to_have_attribute("data-state", "completed")

    # Payloads are visible as text where text is expected (not dropped, not run).
    expect(widget.locator(".aiw-message[data-role='user']")).to_contain_text("<script>window.__pwned=1</script>")
    expect(cards.nth(0).locator(".aiw-tool-title")).to_contain_text('onerror="window.__pwned=1"')
    expect(cards.nth(1).locator(".aiw-tool-result .aiw-json")).to_contain_text("<script>")
    expect(cards.nth(2).locator(".aiw-tool-outcome-line")).to_contain_text("<script>")

    # Open everything that can be opened, then click every link and every summary.
    for details in widget.locator("details").all():
        details.evaluate("d => { d.open = true; }")
    # A link whose target was refused becomes plain text: nothing left that looks clickable but is not.
    expect(widget.locator(".aiw-message[data-role='assistant']").first).to_contain_text("anchor")
    assert widget.evaluate(
        "r => [...r.querySelectorAll('a')].every(a => /^(https?:|mailto:)/i.test(a.getAttribute('href') || 'none:'))"
    )
    links = widget.locator("a")
    for link in links.all():
        if link.is_visible():
            link.click(modifiers=[], no_wait_after=True)
    page.wait_for_function("() => [...document.querySelectorAll('.aiw img')].every(i => i.complete)", timeout=WAIT)
    page.wait_for_timeout(300)  # any onerror/onload handler that could fire has fired by now

    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    assert page.url == url
    assert len(page.context.pages) == 1, [p.url for p in page.context.pages]  # no javascript:/data: popup
    bad = widget.evaluate(NO_SCRIPT)
    assert not bad, bad
    # Links that survive are http(s)/mailto only and open without an opener.
    hrefs = widget.evaluate("r => [...r.querySelectorAll('a[href]')].map(a => [a.href, a.target, a.rel])")
    for href, target, rel in hrefs:
        assert href.startswith(("http:", "https:", "mailto:")), href
        assert target == "_blank", (href, target)
        assert "noopener" in rel, (href, rel)
    srcs = widget.evaluate("r => [...r.querySelectorAll('img[src]')].map(i => i.getAttribute('src'))")
    for src in srcs:
        assert src.startswith(("http:", "https:", "data:image/")), src
    assert srv.kernel_json(nb, "chat.session.messages[-1].status.value") == "completed"
    screenshot(widget, artifacts, "test_hostile_content_never_runs")
    assert_no_widget_errors(page)
