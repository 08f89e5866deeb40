"""A user message's attachments through every real transport's request mapping: each kind (text views, an image
inline and by URL, a PDF inline and by URL) as its provider takes it, what a provider would refuse refused before
anything is sent, and a file from another provider's conversation sent as a note. A tool result's images too: one cut
short or at a URL no provider can fetch stays on its card, and those a conversation gathers go, newest first, as far
as one request may carry."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest

from ai_widgets import (
    AttachmentError,
    ChatSession,
    File,
    FilePart,
    Message,
    MessageStatus,
    TextPart,
    ToolCallState,
    ToolOutcome,
)
from ai_widgets.messages import Role, dump_messages
from ai_widgets.transports import (
    AnthropicTransport,
    GeminiTransport,
    OpenAIChatTransport,
    OpenAIResponsesTransport,
)
from ai_widgets.transports._history import outcome_images
from tests.providers.histories import finished_call
from tests.providers.images import GIF, JPEG, PDF, PNG, WEBP, png_of
from tests.providers.kits import KITS, MockAPI, ProviderKit
from tests.providers.kits import anthropic as anthropic_kit
from tests.providers.kits.gemini import MockAPI as GeminiAPI
from tests.providers.kits.openai_chat import MockAPI as ChatAPI

PHOTO = "https://example.com/photo.png"
PAPER = "https://example.com/paper.pdf"
NOTE = "Attached Text `notes`:\nsome notes"


def recorder(kit: ProviderKit) -> tuple[MockAPI, Any]:
    """A transport of ``kit`` on an SDK client answered in process, and what records its requests."""
    api = MockAPI(b"".join(kit.reply("ok")))
    return api, kit.mock(api.handler)


def first_user_message(kit: ProviderKit, body: dict[str, Any]) -> Any:
    key = {"openai_chat": "messages", "openai_responses": "input", "anthropic": "messages", "gemini": "contents"}
    return body[key[kit.name]][0]


#: The user message ``Look`` with a text view, a PNG (inline and by URL) and a PDF (inline and by URL), as each
#: provider is sent it.
EXPECTED: dict[str, Any] = {
    "openai_chat": {
        "role": "user",
        "content": [
            {"type": "text", "text": "Look"},
            {"type": "text", "text": NOTE},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
            {"type": "image_url", "image_url": {"url": PHOTO}},
            {"type": "file", "file": {"filename": "paper.pdf", "file_data": f"data:application/pdf;base64,{PDF}"}},
        ],
    },
    "openai_responses": {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "Look"},
            {"type": "input_text", "text": NOTE},
            {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"},
            {"type": "input_image", "image_url": PHOTO},
            {"type": "input_file", "filename": "paper.pdf", "file_data": f"data:application/pdf;base64,{PDF}"},
            {"type": "input_file", "file_url": PAPER},
        ],
    },
    "anthropic": {
        "role": "user",
        "content": [
            {"type": "text", "text": "Look"},
            {"type": "text", "text": NOTE},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
            {"type": "image", "source": {"type": "url", "url": PHOTO}},
            {
                "type": "document",
                "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
                "title": "paper.pdf",
            },
            {"type": "document", "source": {"type": "url", "url": PAPER}},
        ],
    },
    "gemini": {
        "role": "user",
        "parts": [
            {"text": "Look"},
            {"text": NOTE},
            {"inlineData": {"mimeType": "image/png", "data": PNG}},
            {"fileData": {"mimeType": "image/png", "fileUri": PHOTO}},
            {"inlineData": {"mimeType": "application/pdf", "data": PDF}},
            {"fileData": {"mimeType": "application/pdf", "fileUri": PAPER}},
        ],
    },
}


@pytest.mark.parametrize("name", sorted(KITS))
async def test_each_kind_of_attachment_goes_as_the_provider_takes_it(name: str, tmp_path: Path) -> None:
    kit = KITS[name]
    api, transport = recorder(kit)
    paper = tmp_path / "paper.pdf"
    paper.write_bytes(base64.b64decode(PDF))
    attach: dict[str, Any] = {
        "notes": "some notes",
        "chart": File(base64.b64decode(PNG), "image/png", name="chart.png"),
        "photo": FilePart("image/png", url=PHOTO),
        "paper.pdf": paper,
    }
    if name != "openai_chat":  # Chat Completions takes no PDF by URL (refused below)
        attach["link"] = FilePart("application/pdf", url=PAPER)
    session = ChatSession(transport)
    reply = await session.send("Look", attach=attach)
    assert reply.text == "ok", reply.error
    assert first_user_message(kit, api.bodies[0]) == EXPECTED[name]
    user = session.messages[0]
    assert [type(p) for p in user.parts][:2] == [TextPart, TextPart]
    assert all(isinstance(p, FilePart) for p in user.parts[2:])


@pytest.mark.parametrize("name", sorted(KITS))
async def test_a_message_of_text_alone_is_sent_as_before(name: str) -> None:
    kit = KITS[name]
    api, transport = recorder(kit)
    await ChatSession(transport).send("Just text")
    want = {
        "openai_chat": {"role": "user", "content": "Just text"},
        "openai_responses": {"role": "user", "content": "Just text"},
        "anthropic": {"role": "user", "content": [{"type": "text", "text": "Just text"}]},
        "gemini": {"role": "user", "parts": [{"text": "Just text"}]},
    }
    assert first_user_message(kit, api.bodies[0]) == want[name]


BIG_PNG = FilePart.from_bytes(base64.b64decode(PNG) + b"\0" * (21 * 1024 * 1024), "image/png", name="big.png")

#: For each provider, a file it refuses and the start of the error that names the limit.
REFUSED: list[tuple[str, FilePart, str]] = [
    ("openai_chat", FilePart("application/pdf", url=PAPER), "OpenAI does not take a document by URL"),
    ("openai_chat", BIG_PNG, "OpenAI takes images of at most 20.0 MB, and big.png is 21.0 MB"),
    ("openai_responses", FilePart("audio/mpeg", data="AAAA"), "OpenAI does not take audio/mpeg files"),
    ("anthropic", BIG_PNG, "Anthropic takes images of at most 5.0 MB, and big.png is 21.0 MB"),
    ("gemini", FilePart("image/gif", data=GIF, name="a.gif"), "Gemini does not take image/gif files (a.gif)"),
    ("gemini", BIG_PNG, "Gemini takes images of at most 14.0 MB"),
]


@pytest.mark.parametrize(("name", "part", "error"), REFUSED, ids=[f"{n}-{p.media_type}" for n, p, _ in REFUSED])
async def test_a_file_the_provider_refuses_is_an_error_before_anything_is_sent(
    name: str, part: FilePart, error: str
) -> None:
    kit = KITS[name]
    api, transport = recorder(kit)
    session = ChatSession(transport)
    with pytest.raises(AttachmentError, match=error.replace("(", r"\(").replace(")", r"\)")):
        await session.send("Look", attach=part)
    assert session.messages == []
    assert api.requests == []
    assert not session.busy
    assert (await session.send("Still works")).text == "ok"


@pytest.mark.parametrize("name", sorted(KITS))
async def test_the_per_request_count_counts_the_whole_conversation(name: str, tmp_path: Path) -> None:
    kit = KITS[name]
    api, transport = recorder(kit)
    limits = transport.attachment_limits
    png = FilePart("image/png", data=PNG)
    path = tmp_path / "chat.json"
    path.write_text(dump_messages([Message(Role.USER, [TextPart("old"), *[png] * limits.max_images])]), "utf-8")
    session = ChatSession(transport, history=path)
    with pytest.raises(AttachmentError, match=f"at most {limits.max_images:,} images in one request"):
        await session.send("one more", attach=png)
    assert api.requests == []
    session.close()


@pytest.mark.parametrize("name", sorted(KITS))
def test_a_file_this_provider_refuses_from_an_earlier_conversation_goes_as_a_note(name: str) -> None:
    """A conversation that moved here from another provider (or a history file) may hold a file this one refuses:
    it goes as a note, so no later request of the conversation fails."""
    transport = KITS[name].mock(lambda request: None)
    audio = FilePart("audio/mpeg", data="AAAA", name="talk.mp3")
    messages = transport.request_messages([Message(Role.USER, [TextPart("Listen"), audio])])
    note = "[A file was attached here that {} does not take, so it is left out: talk.mp3, audio/mpeg, 3 B]"
    provider = transport.attachment_limits.provider
    shown = str(messages[0])
    assert note.format(provider) in shown
    assert "AAAA" not in shown


def test_a_persons_images_take_their_room_in_the_request_before_the_tools_images() -> None:
    """Anthropic takes 100 images a request: with one attached by the person, a tool's 100 leave out their oldest."""
    transport = KITS["anthropic"].mock(lambda request: None)
    pngs = [{"mime_type": "image/png", "data": PNG} for _ in range(100)]
    call = finished_call("c1", "snap", "{}", outcome=ToolOutcome.success(text="shots", attachments=pngs))
    history = [
        Message(Role.USER, [TextPart("Look"), FilePart("image/png", data=PNG)]),
        Message(Role.ASSISTANT, [call]),
    ]
    messages = transport.request_messages(history)
    (result,) = messages[2]["content"]
    assert sum(block["type"] == "image" for block in result["content"]) == 99
    assert sum(block["type"] == "image" for block in messages[0]["content"]) == 1


def file_not_named_in_utf8(folder: Path, data: bytes) -> Path:
    """A file named ``caf\\xe9.png`` (Latin-1, not UTF-8) in ``folder``, as ``os.listdir`` names it."""
    with open(os.path.join(os.fsencode(folder), b"caf\xe9.png"), "wb") as file:
        file.write(data)
    (listed,) = os.listdir(folder)
    return folder / listed


@pytest.mark.parametrize("name", sorted(KITS))
async def test_lone_surrogates_in_names_and_texts_never_fail_a_request(name: str, tmp_path: Path) -> None:
    """A file whose name is not UTF-8 (``os.listdir`` gives a lone surrogate for each byte that is not), a name
    given to ``File``, a text part attached as it is or edited in: every request of the conversation still encodes,
    and so do its transcript and its JSON."""
    listed = file_not_named_in_utf8(tmp_path, base64.b64decode(PNG))
    assert listed.name == "caf\udce9.png"
    kit = KITS[name]
    api, transport = recorder(kit)
    session = ChatSession(transport)
    attach = [listed, File(base64.b64decode(PNG), "image/png", name="a\udc80b"), TextPart("t\ud800")]
    reply = await session.send("look \udc81", attach=attach)
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert (await session.send("again")).status is MessageStatus.COMPLETED
    assert (await session.edit(session.messages[0].id, "edited \udc82")).status is MessageStatus.COMPLETED
    assert len(api.requests) == 3
    shown = json.dumps(api.bodies[0], ensure_ascii=False)
    assert "look \ufffd" in shown
    assert "t\ufffd" in shown
    assert "edited \ufffd" in json.dumps(api.bodies[2], ensure_ascii=False)
    files = [p for p in session.messages[0].parts if isinstance(p, FilePart)]
    assert [p.name for p in files] == ["caf\ufffd.png", "a\ufffdb"]
    session.export(tmp_path / "chat.md").read_text(encoding="utf-8").encode("utf-8")
    session.export(tmp_path / "chat.json").read_text(encoding="utf-8").encode("utf-8")


WIDE = FilePart.from_bytes(png_of(9000, 4), "image/png", name="wide.png")
BIG = FilePart.from_bytes(png_of(2500, 2500), "image/png", name="big.png")


@pytest.mark.parametrize("name", sorted(KITS))
async def test_an_image_past_the_providers_pixel_limits_is_refused_before_anything_is_sent(name: str) -> None:
    """Anthropic refuses an image over 8,000 px a side, and over 2,000 px in a request of more than 20 images (its
    vision docs); OpenAI and Gemini scale a large image down. A 115-byte PNG of 9,000 x 4 px is under every limit on
    bytes."""
    kit = KITS[name]
    api, transport = recorder(kit)
    session = ChatSession(transport)
    if name != "anthropic":
        assert (await session.send("look", attach=WIDE)).status is MessageStatus.COMPLETED
        assert (await session.send("look", attach=[BIG] * 21)).status is MessageStatus.COMPLETED
        return
    with pytest.raises(
        AttachmentError, match=r"^Anthropic takes images of at most 8,000 px a side, and wide\.png is 9,000"
    ):
        await session.send("look", attach=WIDE)
    assert session.messages == []
    assert (await session.send("twenty", attach=[BIG] * 20)).status is MessageStatus.COMPLETED
    with pytest.raises(
        AttachmentError,
        match=r"^Anthropic takes images of at most 2,000 px a side when a request carries more than 20 images, and "
        r"this message would make the conversation carry 21: big\.png is 2,500 x 2,500 px$",
    ):
        await session.send("one more", attach=FilePart.from_bytes(png_of(10, 10), "image/png"))
    assert len(api.requests) == 1
    assert len(session.messages) == 2
    assert (await session.send("still works")).status is MessageStatus.COMPLETED


def images_sent(messages: list[Any], image: FilePart | str) -> int:
    data = image if isinstance(image, str) else image.data
    assert data is not None
    return json.dumps(messages).count(data)


@pytest.mark.parametrize("name", sorted(KITS))
def test_an_image_a_provider_refuses_for_its_pixels_from_an_earlier_conversation_goes_as_a_note(name: str) -> None:
    transport = KITS[name].mock(lambda request: None)
    twenty = transport.request_messages([Message(Role.USER, [TextPart("old"), WIDE, *[BIG] * 20])])
    crowded = transport.request_messages([Message(Role.USER, [TextPart("old"), *[BIG] * 21])])
    if name == "anthropic":
        assert images_sent(twenty, WIDE) == 0
        assert "does not take, so it is left out: wide.png, image/png" in json.dumps(twenty)
        assert images_sent(twenty, BIG) == 20
        assert images_sent(crowded, BIG) == 0  # any of them would fail the request
    else:
        assert images_sent(twenty, WIDE) == 1
        assert images_sent(crowded, BIG) == 21


def tool_images(*datas: str) -> ToolOutcome:
    return ToolOutcome.success(text="shots", attachments=[{"mime_type": "image/png", "data": d} for d in datas])


@pytest.mark.parametrize("name", sorted(KITS))
def test_a_tool_image_a_provider_refuses_for_its_pixels_stays_on_the_card_only(name: str) -> None:
    transport = KITS[name].mock(lambda request: None)
    wide, big = WIDE.data or "", BIG.data or ""
    call = finished_call("c1", "snap", "{}", outcome=tool_images(wide, PNG))
    sent = transport.request_messages([Message.user("look"), Message(Role.ASSISTANT, [call])])
    assert images_sent(sent, PNG) == 1
    assert images_sent(sent, wide) == (0 if name == "anthropic" else 1)
    assert call.outcome is not None
    assert call.outcome.attachments[0].data == wide  # the card keeps it
    # 25 tool images of 2,500 px: a request of more than 20 images would refuse them all, so the newest 20 go.
    calls = [finished_call(f"c{i}", "snap", "{}", outcome=tool_images(big)) for i in range(25)]
    sent = transport.request_messages([Message.user("look"), Message(Role.ASSISTANT, calls)])
    assert images_sent(sent, big) == (20 if name == "anthropic" else 25)
    if name == "anthropic":
        results = sent[2]["content"]
        with_image = [r["tool_use_id"] for r in results if isinstance(r["content"], list)]  # text alone: a string
        assert with_image == [f"c{i}" for i in range(5, 25)]
    # A person's image over 2,000 px counts too: then the request keeps to 20 images, its own first.
    small = base64.b64encode(png_of(10, 10)).decode()
    calls = [finished_call(f"d{i}", "snap", "{}", outcome=tool_images(small)) for i in range(25)]
    sent = transport.request_messages([Message(Role.USER, [TextPart("look"), BIG]), Message(Role.ASSISTANT, calls)])
    assert images_sent(sent, BIG) == 1
    assert images_sent(sent, small) == (19 if name == "anthropic" else 25)


# --- images a provider would refuse, which would fail every later request ---------------------------------------------


def image_call(*attachments: dict[str, Any]) -> Any:
    return finished_call(
        "call_img", "snap", "{}", state=ToolCallState.COMPLETED, outcome=ToolOutcome.success(attachments=attachments)
    )


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


WHOLE = {"png": PNG, "jpeg": JPEG, "gif": GIF, "webp": WEBP}


CUT_SHORT = {
    "empty": "",
    "png-signature-only": b64(base64.b64decode(PNG)[:8]),
    "png-cut-before-its-end": b64(base64.b64decode(PNG)[:40]),
    "jpeg-three-bytes": b64(b"\xff\xd8\xff"),
    "jpeg-without-its-end": b64(base64.b64decode(JPEG)[:-2]),
    "gif-without-its-trailer": b64(base64.b64decode(GIF)[:-1]),
    "webp-shorter-than-its-riff-size": b64(base64.b64decode(WEBP)[:-4]),
}


@pytest.mark.parametrize("data", CUT_SHORT.values(), ids=CUT_SHORT.keys())
def test_an_image_cut_short_stays_on_the_card(data: str) -> None:
    """Before: anything with an image's first bytes was sent, and the provider's refusal ("could not process image")
    failed that request and every later one, as the image stays in the history."""
    assert outcome_images(image_call({"mime_type": "image/png", "data": data}), max_chars=10**8) == []


@pytest.mark.parametrize("data", WHOLE.values(), ids=WHOLE.keys())
def test_whole_images_still_go_also_with_bytes_after_their_end(data: str) -> None:
    assert len(outcome_images(image_call({"mime_type": "image/png", "data": data}), max_chars=10**8)) == 1
    padded = b64(base64.b64decode(data) + b"\x00" * 7)  # bytes after the end: decoders ignore them
    assert len(outcome_images(image_call({"mime_type": "image/png", "data": padded}), max_chars=10**8)) == 1


@pytest.mark.parametrize(
    "url", ["https://", "https://example.com/a b.png", "https://example.com/\nx.png", "http://[::1"]
)
def test_a_url_no_provider_can_fetch_stays_on_the_card(url: str) -> None:
    assert outcome_images(image_call({"mime_type": "image/png", "url": url}), max_chars=10**8) == []


def test_a_cut_short_image_is_not_in_any_providers_request() -> None:
    cut = b64(base64.b64decode(PNG)[:40])
    history = [Message.user("snap"), Message(Role.ASSISTANT, [image_call({"mime_type": "image/png", "data": cut})])]
    client = ChatAPI().client()
    for transport in (OpenAIChatTransport("m", client=client), OpenAIResponsesTransport("m", client=client)):
        assert cut not in json.dumps(transport.request_messages(history))
    assert cut not in json.dumps(
        GeminiTransport("gemini-3-flash", client=GeminiAPI().client()).request_messages(history)
    )


# --- images a conversation gathers, past a whole request's limits -----------------------------------------------------


def big_png(index: int, size: int) -> str:
    """A whole PNG of about ``size`` base64 characters (a private chunk pads it; decoders skip it), unique by index."""
    raw = base64.b64decode(PNG)
    padding = b"\x00" * (size * 3 // 4)
    chunk = len(padding).to_bytes(4, "big") + b"prVt" + padding + index.to_bytes(4, "big")
    return b64(raw[:33] + chunk + raw[33:])


def screenshots(count: int, size: int) -> tuple[list[Message], list[str]]:
    """A conversation in which a tool returned one image per call, ``count`` calls, oldest first."""
    images = [big_png(i, size) for i in range(count)]
    parts = [
        finished_call(
            f"call_{i}",
            "screenshot",
            "{}",
            outcome=ToolOutcome.success("shot", attachments=[{"mime_type": "image/png", "data": image}]),
        )
        for i, image in enumerate(images)
    ]
    return [Message.user("browse"), Message(Role.ASSISTANT, parts)], images


#: The model each kit's transport is made for here, and the base64 characters of images its provider takes in one
#: request (with room for text).
LIMITS: dict[str, tuple[str, int]] = {
    "openai_chat": ("m", 40 * 1024 * 1024),
    "openai_responses": ("m", 40 * 1024 * 1024),
    "anthropic": ("claude", 24 * 1024 * 1024),
    "gemini": ("gemini-3-flash", 14 * 1024 * 1024),
}


@pytest.mark.parametrize("kit", KITS.values(), ids=KITS.keys())
def test_images_gathered_over_a_conversation_stay_within_one_requests_limit(kit: ProviderKit) -> None:
    """Before: each image was checked alone, so a conversation of screenshots (here 12 of 4.5 MB) grew past what one
    request may carry (Gemini's 20 MB, Anthropic's 32 MB, OpenAI's 50 MB), and the provider refused that request and
    every later one. Now the newest images that fit go; the oldest stay on their cards."""
    model, limit = LIMITS[kit.name]
    history, images = screenshots(12, 4_500_000)
    body = json.dumps(kit.transport(model, client=kit.client()).request_messages(history))
    sent = [i for i, image in enumerate(images) if image in body]
    assert sent, "no image went at all"
    assert sent == list(range(12 - len(sent), 12))  # the newest ones
    assert len(sent) * 4_500_000 <= limit
    assert len(sent) < 12


def test_anthropics_limit_on_the_number_of_images() -> None:
    history, images = screenshots(130, 100)
    body = json.dumps(AnthropicTransport("claude", client=anthropic_kit.MockAPI().client()).request_messages(history))
    sent = [i for i, image in enumerate(images) if image in body]
    assert sent == list(range(30, 130))  # the newest 100
