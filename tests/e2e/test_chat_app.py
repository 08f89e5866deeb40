"""What a chat-app user expects, in JupyterLab: a reply's code block coloured (its Copy button kept), the card of a
call the person allowed saying "allowed by you", an image pasted into the input box and sent with the message, an
image and a CSV dropped on it, a failed request's error in the reply, the branch arrows' size, and New chat keeping
the conversation before it to switch back to."""

from __future__ import annotations

import base64
import re
import textwrap

import pytest
from chat_ui import (
    IMPORTS,
    WAIT,
    assert_no_widget_errors,
    last_assistant,
    messages,
    open_and_run,
    screenshot,
    send_from_input,
    wait_idle,
)
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

# A model that answers with code, calls a destructive tool when asked, and says what files it was sent.
CHAT_APP = IMPORTS + textwrap.dedent(
    """\
    from ai_widgets.messages import FilePart, TextPart


    @tool(title="Delete file", icon="🗑", risk=ToolRisk.DESTRUCTIVE)
    def delete_file(path: str) -> str:
        \"\"\"Deletes a file.

        Args:
            path: The file.
        \"\"\"
        return f"Deleted {path}."


    def model(request):
        if request.tool_results():
            return ScriptedReply(status=None, text="Done.")
        text = request.last_user_text
        if text.startswith("delete"):
            return ScriptedReply(status=None, tool_calls=[ScriptedToolCall(name="delete_file", arguments={"path": "a.txt"})])
        if text.startswith("fail"):
            return ScriptedReply(status=None, text="Half", error=ConnectionError("the provider is unreachable"))
        if text.startswith("code"):
            return ScriptedReply(status=None, text="Here:\\n\\n```python\\ndef f(x):\\n    return x + 1  # one more\\n```\\n")
        user = [m for m in request.messages if m.role.value == "user"][-1]
        files = [f"{p.name} {p.media_type}" for p in user.parts if isinstance(p, FilePart)]
        # A text file comes as text: the line that names it, then its first row.
        files += [" ".join(p.text.splitlines()[:2]) for p in user.parts if isinstance(p, TextPart) and p.text.startswith("Attached text file")]
        return ScriptedReply(status=None, text=f"Got: {'; '.join(files) or 'no files'}")


    chat = ChatWidget(transport=ScriptedTransport(model, delay=0.005), tools=[delete_file])
    chat
    """
)

# A 2 x 2 red PNG, pasted as a screenshot would be (a File in the clipboard event's DataTransfer).
PASTE_PNG = """(input) => {
  const b64 = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEklEQVR4nGP4z8DAwMDAwMAAAAAPAAH/Wv5A2gAAAABJRU5ErkJggg==";
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const data = new DataTransfer();
  data.items.add(new File([bytes], "screenshot.png", { type: "image/png" }));
  const ev = new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true });
  input.dispatchEvent(ev);
  return ev.defaultPrevented;
}"""


@pytest.mark.parametrize(
    ("look", "theme", "width"), [("light", None, None), ("dark-500px", "JupyterLab Dark", 500)], ids=["light", "dark"]
)
def test_highlight_allowed_by_you_paste_and_new_chat(
    chromium_page, server, notebook_name, artifacts, look, theme, width
):
    page, srv, nb = chromium_page, server("lab", theme=theme), notebook_name
    if width:
        page.set_viewport_size({"width": width, "height": 900})
    srv.write_notebook(nb, [CHAT_APP])
    widget = open_and_run(page, srv, nb)
    if width:  # the file browser closed, as a person in a narrow window keeps it: the notebook takes the width
        current = page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current")
        if current.count():
            current.click()
        expect(page.locator("#jp-left-stack")).to_be_hidden()

    # A code block in a reply: coloured by the editor theme's variables, its Copy button kept, no script.
    send_from_input(widget, "code please")
    reply = last_assistant(widget)
    code = reply.locator(".aiw-code-block pre > code.aiw-hl")
    expect(code).to_have_text("def f(x):\n    return x + 1  # one more\n")
    keyword = code.locator(".hljs-keyword").first
    expect(keyword).to_have_text("def")
    colours = page.evaluate(
        """(el) => [getComputedStyle(el).color, getComputedStyle(el.closest('code')).color,
             getComputedStyle(document.body).getPropertyValue('--jp-mirror-editor-keyword-color').trim()]""",
        keyword.element_handle(),
    )
    assert colours[0] != colours[1], colours  # the keyword is not the code's plain colour
    assert colours[2], colours  # JupyterLab's editor theme defines it (light and dark)
    expect(reply.locator(".aiw-code-block .aiw-copy-code")).to_be_visible()
    wait_idle(widget)
    screenshot(widget, artifacts, f"test_chat_app-highlight-{look}")

    # A call the person allowed: its collapsed card says so.
    send_from_input(widget, "delete a.txt")
    card = widget.locator(".aiw-tool-card")
    expect(card.locator(".aiw-approval")).to_be_visible()
    card.get_by_role("button", name="Allow once").click()
    expect(card).to_have_attribute("data-state", "completed")
    wait_idle(widget)
    if card.locator(".aiw-tool-body").is_visible():
        card.locator(".aiw-tool-toggle").click()
    expect(card.locator(".aiw-tool-body")).to_be_hidden()
    badge = card.locator(".aiw-allowed-by-you")
    expect(badge).to_be_visible()
    expect(badge).to_have_text("allowed by you")
    screenshot(widget, artifacts, f"test_chat_app-allowed-by-you-{look}")

    # An image pasted into the input box: a chip, then sent with the message; the model gets the PNG.
    box = widget.locator(".aiw-input")
    box.click()
    assert box.evaluate(PASTE_PNG) is True
    chip = widget.locator(".aiw-chips .aiw-chip-pasted")
    expect(chip.locator(".aiw-chip-name")).to_have_text("screenshot.png")
    expect(chip.locator("img.aiw-chip-thumb")).to_be_visible()
    box.fill("what is this?")
    screenshot(widget, artifacts, f"test_chat_app-paste-{look}")
    box.press("Enter")
    expect(last_assistant(widget)).to_contain_text("Got: screenshot.png image/png")
    wait_idle(widget)
    expect(chip).to_have_count(0)
    expect(messages(widget, "user").last.locator(".aiw-chip-file")).to_contain_text("screenshot.png")
    assert srv.kernel_json(nb, "chat.session.messages[-2].parts[1].media_type") == "image/png"

    # A failed request: its error in the reply, with Retry and the troubleshooting link (how it looks).
    send_from_input(widget, "fail now")
    failed = last_assistant(widget)
    expect(failed).to_have_attribute("data-status", "error")
    expect(failed.locator(".aiw-reply-error .aiw-error-action")).to_have_attribute("data-action", "retry")
    expect(failed.locator(".aiw-reply-error .aiw-error-help")).to_be_visible()
    wait_idle(widget)
    screenshot(widget, artifacts, f"test_chat_app-error-{look}")

    # New chat: an empty chat that says where the conversation went; the first message switches back to it.
    before = srv.kernel_json(nb, "len(chat.session.messages)")
    widget.locator(".aiw-new-chat").click()
    expect(messages(widget)).to_have_count(0)
    expect(widget.locator(".aiw-empty-kept")).to_contain_text("The previous one is kept")
    screenshot(widget, artifacts, f"test_chat_app-new-chat-empty-{look}")
    assert srv.kernel_json(nb, "len(chat.session.messages)") == 0
    send_from_input(widget, "hello again")
    expect(last_assistant(widget)).to_contain_text("Got: no files")
    wait_idle(widget)
    first = messages(widget, "user").first
    expect(first.locator(".aiw-branch-label")).to_have_attribute("data-label", "2/2")
    for arrow in (first.locator(".aiw-branch-prev"), first.locator(".aiw-branch-next")):
        size = arrow.bounding_box()
        assert size is not None
        assert min(size["width"], size["height"]) >= 24, size
    screenshot(widget, artifacts, f"test_chat_app-new-chat-{look}")
    first.locator(".aiw-branch-prev").click()
    expect(messages(widget, "user").first).to_contain_text("code please")
    assert srv.kernel_json(nb, "len(chat.session.messages)") == before
    assert_no_widget_errors(page)


# Files dragged from the desktop and dropped on `target`: a DragEvent whose DataTransfer holds them (dragover first,
# as a browser sends it; it must be accepted for the drop to count). Returns [dragover accepted, drop taken].
DROP_FILES = """(target, [files, dropIt]) => {
  const data = new DataTransfer();
  for (const [name, type, b64] of files) {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    data.items.add(new File([bytes], name, { type }));
  }
  const over = new DragEvent("dragover", { dataTransfer: data, bubbles: true, cancelable: true });
  target.dispatchEvent(over);
  if (!dropIt) return [over.defaultPrevented, false];
  const drop = new DragEvent("drop", { dataTransfer: data, bubbles: true, cancelable: true });
  target.dispatchEvent(drop);
  return [over.defaultPrevented, drop.defaultPrevented];
}"""
RED_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGO8IyfHwMDAxMDAwMDAAAAOCAEc48H7QgAAAABJRU5ErkJggg=="
CSV = base64.b64encode(b"city,sales\nLisbon,12\nPorto,7\n").decode()


def test_drop_an_image_and_a_csv_on_the_input_box(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("lab"), notebook_name
    page.set_viewport_size({"width": 1000, "height": 900})
    srv.write_notebook(nb, [CHAT_APP])
    widget = open_and_run(page, srv, nb)
    box = widget.locator(".aiw-input")
    image = ["chart.png", "image/png", RED_PNG]
    table = ["sales.csv", "text/csv", CSV]

    # Dragged over the box: the chat shows it takes the files; nothing is attached until they are dropped.
    assert box.evaluate(DROP_FILES, [[image], False]) == [True, False]
    expect(widget).to_have_class(re.compile(r"\baiw-drop-target\b"))
    screenshot(widget, artifacts, "test_chat_app-drag-over-light")
    assert box.evaluate(DROP_FILES, [[image], True]) == [True, True]
    expect(widget).not_to_have_class(re.compile(r"\baiw-drop-target\b"))
    chips = widget.locator(".aiw-chips .aiw-chip-pasted")
    expect(chips).to_have_count(1)
    expect(chips.first.locator(".aiw-chip-name")).to_have_text("chart.png")
    expect(chips.first.locator("img.aiw-chip-thumb")).to_be_visible()
    # A file that is not an image is attached too (as text, for a CSV).
    assert box.evaluate(DROP_FILES, [[table], True]) == [True, True]
    expect(chips).to_have_count(2)
    expect(chips.nth(1).locator(".aiw-chip-name")).to_have_text("sales.csv")
    expect(chips.nth(1)).to_contain_text("text")
    expect(box).to_be_focused()
    box.fill("what are these?")
    screenshot(widget, artifacts, "test_chat_app-drop-light")
    box.press("Enter")

    # Sent with the message, and answered: the model got the PNG and the CSV's text.
    expect(last_assistant(widget)).to_contain_text(
        "Got: chart.png image/png; Attached text file sales.csv: city,sales", timeout=WAIT
    )
    wait_idle(widget)
    expect(chips).to_have_count(0)
    sent = messages(widget, "user").last
    expect(sent).to_contain_text("what are these?")
    # The sent chips read as they did in the box: the image's kind and its picture (the kernel had not loaded PIL
    # before), the CSV a text file.
    sent_image = sent.locator(".aiw-chip-file")
    expect(sent_image).to_have_text(re.compile(r"^chart\.png\s*image\s*\d+ B$"))
    expect(sent_image).to_have_attribute("title", re.compile(r"image/png"))
    expect(sent_image.locator("img")).to_have_attribute("src", re.compile(r"^data:image/png;base64,"))
    csv = sent.locator(".aiw-attachment")
    expect(csv.locator(".aiw-chip-text .aiw-chip-name")).to_have_text("sales.csv")
    expect(csv.locator(".aiw-chip-text .aiw-chip-kind")).to_have_text("text file")
    csv.locator("summary").click()  # the chip opens to show what the model got
    expect(csv.locator(".aiw-attachment-body")).to_have_text("city,sales\nLisbon,12\nPorto,7\n")
    parts = srv.kernel_json(nb, "[type(p).__name__ for p in chat.session.messages[-2].parts]")
    assert parts == ["TextPart", "FilePart", "TextPart"], parts
    assert srv.kernel_json(nb, "chat.session.messages[-2].parts[1].data") == RED_PNG  # the dropped bytes
    assert srv.kernel_json(nb, "chat.session.messages[-2].parts[2].text").endswith("Porto,7\n")
    screenshot(widget, artifacts, "test_chat_app-drop-sent-light")
    assert_no_widget_errors(page)
