"""``@name`` in the input box, kernel side: completion from IPython's user namespace, a chip's description, and a send
whose names are resolved and converted before anything is sent (docs/protocol.md, "Attachments by name")."""

from __future__ import annotations

import asyncio
import base64
import io
import threading
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
import pytest
from IPython.core.interactiveshell import InteractiveShell
from PIL import Image

from ai_widgets.attachments import AttachmentLimits
from ai_widgets.messages import FilePart, Message, Role, TextPart
from ai_widgets.session import ChatSession
from ai_widgets.transports import ScriptedReply, ScriptedTransport, TransportProfile
from ai_widgets.transports._base import ChatRequest
from ai_widgets.widget import ChatWidget
from ai_widgets.widget._kernel import private_loop
from ai_widgets.widget._namespace import completions, describe
from ai_widgets.widget._serialize import message_dict
from ai_widgets.widget._thumbnail import MAX_THUMBNAIL_BYTES, image_thumbnail
from ai_widgets.widget._turn_view import TurnView
from tests.helpers import wait_for
from tests.widget.widget_harness import Wire

matplotlib.use("Agg")
from matplotlib.figure import Figure


@pytest.fixture
def user_ns() -> Iterator[dict[str, Any]]:
    """A real IPython shell, as in a kernel: ``get_ipython().user_ns`` is its namespace."""
    shell = InteractiveShell.instance()
    try:
        shell.run_cell(
            "import os\nimport pandas as pd\ndef helper(): pass\nclass Thing: pass\n_hidden = 1", silent=True
        )
        yield shell.user_ns
    finally:
        InteractiveShell.clear_instance()


def figure() -> Figure:
    fig = Figure(figsize=(4, 3))
    fig.add_subplot().plot([1, 3, 2])
    return fig


def echo(request: ChatRequest) -> str:
    """The scripted model's reply: what the last user message carried."""
    user = [m for m in request.messages if m.role is Role.USER][-1]
    return " | ".join(
        f"file {p.name} {p.media_type}" if isinstance(p, FilePart) else p.text.splitlines()[0]
        for p in user.parts
        if isinstance(p, (FilePart, TextPart))
    )


def answers(wire: Wire, chat: ChatWidget, kind: str) -> list[dict[str, Any]]:
    return [c for c in wire.custom(chat.comm.comm_id) if c.get("type") == kind]


async def answered(wire: Wire, chat: ChatWidget, kind: str, count: int) -> list[dict[str, Any]]:
    """The view's answers of ``kind`` once there are ``count`` of them: a value that must be drawn (a figure, a
    frame) is converted off the kernel's loop, and answered when it is done."""
    await wait_for(lambda: len(answers(wire, chat, kind)) >= count)
    return answers(wire, chat, kind)


def test_kinds_say_what_a_variable_is() -> None:
    assert describe(pd.DataFrame({c: range(1000) for c in "abcd"})) == ("DataFrame 1,000×4", True)
    assert describe(np.zeros((3, 4))) == ("ndarray (3, 4) float64", True)
    assert describe(figure()) == ("Figure", True)
    assert describe(Path("x.csv")) == ("Path", True)
    assert describe("é" * 1050) == ("str 2.1 KB", True)
    assert describe({"a": 1}) == ("dict 1 item", True)
    assert describe(object()) == ("object", False)

    class BrokenShape(pd.DataFrame):
        @property
        def shape(self) -> Any:
            raise RuntimeError("no")

    assert describe(BrokenShape()) == ("BrokenShape", False)  # never raises


def test_completion_offers_attachable_variables_first_and_skips_the_rest(user_ns: dict[str, Any]) -> None:
    user_ns.update(df=pd.DataFrame({"x": [1, 2]}), data=[1, 2], dog=object(), Df2=np.arange(3), fig=figure())
    found = completions(user_ns, "d")
    assert [(c.name, c.kind, c.attachable) for c in found] == [
        ("data", "list 2 items", True),
        ("df", "DataFrame 2×1", True),
        ("Df2", "ndarray (3,) int64", True),
        ("dog", "object", False),
    ]
    everything = {c.name for c in completions(user_ns, "")}
    assert {"df", "fig", "data"} <= everything
    # No modules, functions, classes, private names or IPython's own.
    assert everything.isdisjoint({"os", "pd", "helper", "Thing", "_hidden", "In", "Out", "exit", "quit", "get_ipython"})


async def test_complete_answers_with_the_namespace(wire: Wire, user_ns: dict[str, Any]) -> None:
    user_ns.update(df=pd.DataFrame({"x": [1, 2, 3]}), fig=figure())
    chat = ChatWidget(transport=ScriptedTransport([echo]))
    wire.comms[chat.comm.comm_id].handle({"type": "complete", "prefix": "d", "request": 7})
    [answer] = answers(wire, chat, "completions")
    assert answer == {
        "type": "completions",
        "request": 7,
        "prefix": "d",
        "items": [{"name": "df", "kind": "DataFrame 3×1", "attachable": True}],
    }


async def test_describe_gives_the_chip_with_a_small_thumbnail_for_a_figure(wire: Wire, user_ns: dict[str, Any]) -> None:
    user_ns.update(df=pd.DataFrame({"x": [1, 2, 3]}), fig=figure())
    chat = ChatWidget(transport=ScriptedTransport([echo]))
    front = wire.comms[chat.comm.comm_id]
    for request, name in enumerate(("df", "fig", "ghost")):
        front.handle({"type": "describe", "name": name, "request": request})
    described = {answer["name"]: answer for answer in await answered(wire, chat, "attachment", 3)}
    df, fig, ghost = described["df"], described["fig"], described["ghost"]
    assert df["found"]
    assert df["error"] is None
    assert df["kind"] == "DataFrame 3×1"
    assert df["thumbnail"] is None
    assert 50 < df["size"] < 1000  # bytes of the text view the model gets
    assert fig["kind"] == "Figure"
    assert fig["thumbnail"].startswith("data:image/png;base64,")
    thumbnail = base64.b64decode(fig["thumbnail"].split(",", 1)[1])
    assert len(thumbnail) <= MAX_THUMBNAIL_BYTES
    assert thumbnail.startswith(b"\x89PNG")
    assert int.from_bytes(thumbnail[16:20], "big") <= 96  # its width, from the IHDR chunk
    assert ghost["found"] is False
    assert "no variable 'ghost'" in ghost["error"]


async def test_send_resolves_the_names_at_send_time_and_the_message_keeps_them(
    wire: Wire, user_ns: dict[str, Any]
) -> None:
    user_ns.update(df=pd.DataFrame({"x": [1, 2, 3]}), fig=figure())
    chat = ChatWidget(transport=ScriptedTransport([echo]))
    front = wire.comms[chat.comm.comm_id]
    user_ns["df"] = pd.DataFrame({"y": range(10)})  # changed after the chip was made: the send takes what is there now
    front.handle({"type": "send", "text": "compare @df and @fig", "attach": ["df", "fig", "df"], "id": "s1"})
    assert await answered(wire, chat, "sent", 1) == [{"type": "sent", "id": "s1"}]
    await wait_for(lambda: not chat.session.busy and len(chat._history) == 2)
    user, reply = chat._history
    assert [p["kind"] for p in user["parts"]] == ["text", "text", "file"]
    assert user["parts"][0] == {"kind": "text", "text": "compare @df and @fig"}  # the @names stay in the text
    assert user["parts"][1]["attachment"] is True
    assert "10 rows × 1 column" in user["parts"][1]["text"]
    file = user["parts"][2]
    assert file["name"] == "fig.png"
    assert file["media_type"] == "image/png"
    assert set(file) == {"kind", "media_type", "name", "size", "url"}  # never its bytes
    assert user["thumbnails"]["2"].startswith("data:image/png;base64,")  # the chip's picture, by part index
    assert reply["parts"][0]["text"] == (
        "compare @df and @fig | Attached pandas DataFrame `df`: | file fig.png image/png"
    )


async def test_an_unknown_name_or_a_refused_attachment_sends_nothing(wire: Wire, user_ns: dict[str, Any]) -> None:
    user_ns.update(fig=figure(), ok="fine")
    limits = AttachmentLimits(
        "NoImages", max_image_bytes=1, max_images=0, max_document_bytes=1, max_total_bytes=1, image_types=frozenset()
    )
    transport = ScriptedTransport([echo], profile=TransportProfile(attachment_limits=limits))
    chat = ChatWidget(transport=transport)
    front = wire.comms[chat.comm.comm_id]
    front.handle({"type": "send", "text": "look @ghost", "attach": ["ok", "ghost"], "id": "s1"})
    front.handle({"type": "send", "text": "look @fig", "attach": ["fig"], "id": "s2"})
    front.handle({"type": "send", "text": "look @os", "attach": ["os"], "id": "s3"})  # a module: not offered
    errors = {e["id"]: e for e in await answered(wire, chat, "error", 3)}  # the figure's, once it is drawn
    assert sorted(errors) == ["s1", "s2", "s3"]
    assert "@os: it is a module" in errors["s3"]["message"]
    assert "no variable 'ghost'" in errors["s1"]["message"]
    assert "image" in errors["s2"]["message"]
    user_ns["thing"] = object()
    front.handle({"type": "send", "text": "look @ok @thing", "attach": ["ok", "thing"], "id": "s4"})
    refused = answers(wire, chat, "error")[-1]["message"]
    assert refused.startswith("@thing: cannot attach")  # which chip it is
    assert "no conversion for builtins.object" in refused
    assert answers(wire, chat, "sent") == []
    assert chat.session.messages == []
    assert chat._history == []
    assert transport.requests == []  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "content",
    [
        {"type": "complete"},
        {"type": "complete", "prefix": "d"},
        {"type": "complete", "prefix": 3, "request": 1},
        {"type": "complete", "prefix": "a b", "request": 1},
        {"type": "complete", "prefix": "d" * 201, "request": 1},
        {"type": "complete", "prefix": "d", "request": -1},
        {"type": "complete", "prefix": "d", "request": "1"},
        {"type": "describe", "request": 1},
        {"type": "describe", "name": "", "request": 1},
        {"type": "describe", "name": "1abc", "request": 1},
        {"type": "describe", "name": "x.y", "request": 1},
        {"type": "send", "text": "hi", "attach": "df"},
        {"type": "send", "text": "hi", "attach": [1]},
        {"type": "send", "text": "hi", "attach": ["__import__('os')"]},
        {"type": "send", "text": "hi", "attach": ["a"] * 21},
        {"type": "send", "text": "hi", "attach": [], "id": ""},
    ],
)
async def test_malformed_attachment_messages_get_an_error_and_change_nothing(
    wire: Wire, user_ns: dict[str, Any], content: dict[str, Any]
) -> None:
    chat = ChatWidget(transport=ScriptedTransport([echo]))
    wire.comms[chat.comm.comm_id].handle(content)
    [error] = wire.custom(chat.comm.comm_id)[-1:]
    assert error["type"] == "error"
    assert f"invalid {content['type']!r} message" in error["message"]
    assert len(error["message"]) <= 1000
    assert chat.session.messages == []


async def test_a_view_of_one_turn_refuses_a_send_with_attachments(wire: Wire, user_ns: dict[str, Any]) -> None:
    user_ns["df"] = pd.DataFrame({"x": [1]})
    chat = ChatWidget(transport=ScriptedTransport([echo, echo]))
    await chat.ask("first", show=False)
    view = TurnView(chat.session, start=None)  # what ask(show=True) shows in the asking cell
    wire.comms[view.comm.comm_id].handle({"type": "send", "text": "@df", "attach": ["df"], "id": "t1"})
    [error] = [c for c in wire.custom(view.comm.comm_id) if c.get("type") == "error"]
    assert error["id"] == "t1"
    assert "chat's own input box" in error["message"]
    assert len(chat.session.messages) == 2


def test_thumbnails_of_sent_images_stay_small(tmp_path: Path) -> None:
    big = tmp_path / "big.png"
    noise = np.random.default_rng(0).integers(0, 255, (600, 800, 3), dtype=np.uint8)
    Image.fromarray(noise).save(big)
    assert big.stat().st_size > 20 * MAX_THUMBNAIL_BYTES
    parts = [
        TextPart("look"),
        FilePart.from_bytes(big.read_bytes(), "image/png", name="big.png"),
        FilePart.from_bytes(b"%PDF-1.4 x", "application/pdf", name="a.pdf"),
        FilePart.from_bytes(b"<svg onload='alert(1)'/>", "image/svg+xml", name="x.svg"),
    ]
    shown = message_dict(Message(Role.USER, parts), 0)
    assert set(shown["thumbnails"]) == {"1"}  # raster images only: no PDF, no SVG
    raw = base64.b64decode(shown["thumbnails"]["1"].split(",", 1)[1])
    assert len(raw) <= MAX_THUMBNAIL_BYTES
    assert int.from_bytes(raw[16:20], "big") <= 96


def test_the_thumbnail_cache_keeps_no_image_alive() -> None:
    # A finished message's thumbnail is made again for every snapshot, so it is cached: by a digest of the image,
    # not by the image's base64 (which kept every attached photo's megabytes alive after the chat was cleared).
    small = io.BytesIO()
    Image.new("RGB", (200, 100), "red").save(small, format="PNG")
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for n in range(8):
            # Each a distinct 2 MB PNG (PIL reads up to IEND; what follows only makes its bytes differ).
            part = FilePart.from_bytes(small.getvalue() + bytes([n]) * 2_000_000, "image/png", name=f"{n}.png")
            assert (image_thumbnail(part) or "").startswith("data:image/png;base64,")
            assert image_thumbnail(part) == image_thumbnail(part)
            del part
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 1_000_000, f"{kept:,} bytes kept after the images were dropped"


async def test_a_send_with_attachments_while_busy_is_queued_with_them(wire: Wire, user_ns: dict[str, Any]) -> None:
    # It steers the running turn (which calls no tools, so it starts the next one), its attachments with it.
    user_ns["df"] = pd.DataFrame({"x": [1]})
    chat = ChatWidget(transport=ScriptedTransport([ScriptedReply(text="a slow answer " * 20), echo], delay=0.02))
    front = wire.comms[chat.comm.comm_id]
    front.handle({"type": "send", "text": "first"})
    await wait_for(lambda: chat.session.busy)
    front.handle({"type": "send", "text": "@df", "attach": ["df"], "id": "s9"})
    [sent] = await answered(wire, chat, "sent", 1)
    assert sent["id"] == "s9"
    assert answers(wire, chat, "error") == []
    await wait_for(lambda: len(chat.session.messages) == 4 and not chat.session.busy, timeout=10)
    first, _reply, steered, _echoed = chat.session.messages
    assert first.text == "first"
    assert steered.text.startswith("@df")
    assert len(steered.parts) > 1  # the frame went with it


def test_completion_lists_at_most_fifty(user_ns: dict[str, Any]) -> None:
    user_ns.update({f"v{i}": i for i in range(300)})
    found = completions(user_ns, "v")
    assert len(found) == 50
    assert found[0].name == "v0"


class BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr today")


async def test_a_variable_whose_repr_raises_gets_its_chip_and_its_send_refused_with_why(
    wire: Wire, user_ns: dict[str, Any]
) -> None:
    user_ns.update(rows=[1, BadRepr()], table=np.array([BadRepr(), 2], dtype=object))
    chat = ChatWidget(transport=ScriptedTransport([echo]))
    front = wire.comms[chat.comm.comm_id]
    for request, name in enumerate(("rows", "table")):
        front.handle({"type": "describe", "name": name, "request": request})
    rows, table = answers(wire, chat, "attachment")
    assert rows["found"] is True
    assert rows["error"] == "cannot attach a list `rows`: RuntimeError: no repr today"
    assert table["error"] == "cannot attach a ndarray `table`: RuntimeError: no repr today"
    front.handle({"type": "send", "text": "look at @rows", "attach": ["rows"], "id": "s1"})
    [error] = answers(wire, chat, "error")
    assert error["id"] == "s1"  # the view keeps the text and the chip, and stops waiting
    assert error["message"] == "@rows: cannot attach a list `rows`: RuntimeError: no repr today"
    assert chat.session.messages == []


def boom(*_args: Any, **_kwargs: Any) -> None:
    raise RuntimeError("a bug in the kernel")


#: A front-end request, the handler made to fail, and the answer that request waits for: each gets its answer.
FAILING: list[tuple[dict[str, Any], str, dict[str, Any]]] = [
    ({"type": "send", "text": "hi", "id": "s1"}, "_send_with", {"type": "error", "id": "s1"}),
    ({"type": "send", "text": "hi @df", "attach": ["df"], "id": "s2"}, "_send_with", {"type": "error", "id": "s2"}),
    ({"type": "prompt", "name": "p", "id": "p1"}, "_on_prompt", {"type": "error", "id": "p1"}),
    ({"type": "describe", "name": "df", "request": 4}, "_describe", {"type": "attachment", "request": 4}),
    ({"type": "complete", "prefix": "d", "request": 5}, "_complete", {"type": "completions", "request": 5}),
    ({"type": "prompts", "request": 6}, "_list_prompts", {"type": "prompts", "request": 6}),
    ({"type": "sync", "have": 0}, "_send_snapshot", {"type": "error"}),
    ({"type": "regenerate"}, "_on_branch_turn", {"type": "error"}),
    (
        {"type": "app_call", "tool_call_id": "c1", "request": 7, "name": "t"},
        "_app_host.call",
        {"type": "app_reply", "tool_call_id": "c1", "request": 7},
    ),
    (
        {"type": "resource_open", "tool_call_id": "c1", "uri": "demo://x"},
        "_resources.open",
        {"type": "resource", "tool_call_id": "c1", "uri": "demo://x"},
    ),
    (
        {"type": "undo_call", "tool_call_id": "c1"},
        "_cells.undo",
        {"type": "cell_action", "action": "undo_call", "tool_call_id": "c1", "ok": False},
    ),
    (
        {"type": "insert_cell", "tool_call_id": "c1"},
        "_cells.insert",
        {"type": "cell_action", "action": "insert_cell", "tool_call_id": "c1", "ok": False},
    ),
]


@pytest.mark.parametrize(("content", "handler", "answer"), FAILING, ids=[f"{c['type']}-{h}" for c, h, _ in FAILING])
async def test_every_request_of_the_front_end_is_answered_whatever_the_kernel_raises(
    wire: Wire,
    user_ns: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    content: dict[str, Any],
    handler: str,
    answer: dict[str, Any],
) -> None:
    user_ns["df"] = pd.DataFrame({"x": [1]})
    chat = ChatWidget(transport=ScriptedTransport([echo]))
    owner: Any = chat
    *path, method = handler.split(".")
    for step in path:
        owner = getattr(owner, step)
    monkeypatch.setattr(owner, method, boom)
    front = wire.comms[chat.comm.comm_id]
    front.handle(content)
    replies = wire.custom(chat.comm.comm_id)
    assert replies, "no answer"
    got = replies[-1]
    assert {key: got.get(key) for key in answer} == answer
    said = got.get("message") or got.get("error") or got.get("errors", [{}])[0].get("message")
    if answer["type"] != "completions":  # a completion list has no room for an error: it is empty
        assert "RuntimeError: a bug in the kernel" in said
    else:
        assert got["items"] == []
    assert chat.session.messages == []


async def test_a_sync_answered_on_the_turns_thread_is_answered_when_it_fails(
    wire: Wire, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat = ChatWidget(transport=ScriptedTransport([echo]))
    monkeypatch.setattr(ChatSession, "_loop", lambda _self: private_loop())  # a turn runs on another thread
    monkeypatch.setattr(chat, "_send_snapshot", boom)
    wire.comms[chat.comm.comm_id].handle({"type": "sync", "have": 0})
    await wait_for(lambda: any(c["type"] == "error" for c in wire.custom(chat.comm.comm_id)))
    [error] = answers(wire, chat, "error")
    assert error["message"] == "Answering the view failed: RuntimeError: a bug in the kernel"


async def test_a_value_that_must_be_drawn_is_drawn_off_the_kernels_loop(wire: Wire, user_ns: dict[str, Any]) -> None:
    """The input box's ``@chart`` and its chip: the handler returns before the drawing, so the kernel's loop goes on
    (here, a coroutine on it lets the drawing finish); drawn on the handler's thread, it would wait in vain."""
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), "red").save(buffer, format="PNG")
    drawn = threading.Event()

    class SlowChart:
        def _repr_png_(self) -> bytes:
            if not drawn.wait(10):
                raise RuntimeError("the drawing held the loop")
            return buffer.getvalue()

    user_ns["chart"] = SlowChart()
    chat = ChatWidget(transport=ScriptedTransport([echo]))
    front = wire.comms[chat.comm.comm_id]
    front.handle({"type": "describe", "name": "chart", "request": 1})
    front.handle({"type": "send", "text": "see @chart", "attach": ["chart"], "id": "s1"})

    async def let_it_draw() -> None:
        drawn.set()

    asyncio.run_coroutine_threadsafe(let_it_draw(), private_loop()).result(timeout=5)
    [chip] = await answered(wire, chat, "attachment", 1)
    assert chip["error"] is None
    assert chip["thumbnail"].startswith("data:image/png;base64,")
    assert await answered(wire, chat, "sent", 1) == [{"type": "sent", "id": "s1"}]
    await wait_for(lambda: not chat.session.busy and len(chat.session.messages) == 2)
    assert [type(part).__name__ for part in chat.session.messages[0].parts] == ["TextPart", "FilePart"]
