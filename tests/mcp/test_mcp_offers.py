"""What an MCP server offers besides tools (``ai_widgets.mcp``): resources, templates and prompts, read and rendered
from a real server written with the SDK (``tests/mcp/servers/offers_server.py``, over stdio), and a resource
attached to a message (``session.send(..., attach=await server.read(uri))``)."""

from __future__ import annotations

import asyncio
import base64
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp SDK is not installed (the `mcp` extra)")

from ai_widgets import ChatSession, FilePart, Message, TextPart, ToolCallPart
from ai_widgets.mcp import (
    MCPPrompt,
    MCPResource,
    MCPResourceTemplate,
    MCPServer,
    MCPServerError,
    PromptArgument,
    PromptLink,
    PromptMedia,
    PromptMessage,
    PromptText,
    RenderedPrompt,
    ResourceBlob,
    ResourceRead,
    ResourceText,
)
from ai_widgets.messages import Role
from ai_widgets.transports import ScriptedReply, ScriptedTransport
from tests.mcp.servers.offers_server import GUIDE, PIXEL

pytestmark = pytest.mark.slow  # each server is a process to start (about a second)

SCRIPT = str(Path(__file__).parent / "servers" / "offers_server.py")
RAW = str(Path(__file__).parent / "servers" / "raw_server.py")


def offers() -> MCPServer:
    return MCPServer.stdio(sys.executable, [SCRIPT])


@pytest.fixture(scope="module")
def server() -> Iterator[MCPServer]:
    """One server for the tests that only read from it, used from each test's own event loop."""
    shared = offers()
    asyncio.run(shared.list_tools())
    yield shared
    shared.close()


# --- resources ------------------------------------------------------------------------------------------------------


async def test_resources_are_listed_typed(server: MCPServer) -> None:
    listed = {resource.uri: resource for resource in await server.resources()}
    assert listed["docs://guide"] == MCPResource(
        uri="docs://guide", name="guide", title="The guide", description="How to start.", mime_type="text/markdown"
    )
    assert listed["images://pixel.png"].mime_type == "image/png"
    assert "notes://{topic}" not in listed  # a template is no resource


async def test_templates_are_listed_apart_and_read_filled_in(server: MCPServer) -> None:
    assert await server.resource_templates() == [
        MCPResourceTemplate(
            uri_template="notes://{topic}",
            name="note",
            title="A note",
            description="The note on a topic.",
            mime_type="text/plain",
        )
    ]
    read = await server.read("notes://cats")
    assert read.contents == (ResourceText(uri="notes://cats", text="Notes on cats.", mime_type="text/plain"),)


async def test_a_text_resource_is_read_as_text(server: MCPServer) -> None:
    read = await server.read("docs://guide")
    assert read == ResourceRead(
        uri="docs://guide",
        server="offers-server",
        contents=(ResourceText(uri="docs://guide", text=GUIDE, mime_type="text/markdown"),),
    )
    assert read.text == GUIDE


async def test_a_blob_resource_is_read_as_bytes_with_its_type(server: MCPServer) -> None:
    read = await server.read("images://pixel.png")
    assert read.contents == (ResourceBlob(uri="images://pixel.png", data=PIXEL, mime_type="image/png"),)
    assert read.text == ""


async def test_an_unknown_uri_is_a_clear_error(server: MCPServer) -> None:
    with pytest.raises(MCPServerError, match=r"'offers-server' has no resource docs://nope"):
        await server.read("docs://nope")
    with pytest.raises(TypeError, match="needs a resource URI"):
        await server.read("")
    assert (await server.read("docs://guide")).text == GUIDE  # the server goes on


async def test_a_server_without_resources_or_prompts_says_so() -> None:
    # The hand-written server declares tools only (an SDK server always declares resources and prompts).
    bare = MCPServer.stdio(sys.executable, [RAW])
    try:
        assert await bare.resources() == []
        assert await bare.resource_templates() == []
        with pytest.raises(MCPServerError, match=r"offers no resources \(so none at docs://guide\)"):
            await bare.read("docs://guide")
        assert await bare.prompts() == []
        with pytest.raises(MCPServerError, match=r"has no prompt 'hello' \(its prompts: none\)"):
            await bare.prompt("hello")
        assert "echo" in [t.name for t in await bare.list_tools()]
    finally:
        await bare.aclose()


# --- prompts --------------------------------------------------------------------------------------------------------


async def test_prompts_are_listed_with_their_arguments(server: MCPServer) -> None:
    listed = {prompt.name: prompt for prompt in await server.prompts()}
    assert listed["review"] == MCPPrompt(
        name="review",
        title="Review code",
        description="Asks for a review of some code.",
        arguments=(PromptArgument(name="code", required=True), PromptArgument(name="language", required=False)),
    )
    assert listed["hello"].arguments == ()


async def test_a_prompt_is_rendered_with_its_arguments(server: MCPServer) -> None:
    rendered = await server.prompt("review", code="x = 1", language="rust")
    assert rendered.messages == (PromptMessage("user", PromptText("Please review this rust code:\nx = 1")),)
    assert rendered.server == "offers-server"
    dialogue = await server.prompt("dialogue", topic="owls")
    assert [m.role for m in dialogue.messages] == ["user", "assistant"]
    assert dialogue.text == "Tell me about owls.\n\nGladly. What would you like to know?"


async def test_wrong_prompt_arguments_are_refused_before_the_request(server: MCPServer) -> None:
    with pytest.raises(TypeError, match=r"'review' needs the argument\(s\) code"):
        await server.prompt("review", language="go")
    with pytest.raises(TypeError, match=r"'hello' takes no arguments; not extra"):
        await server.prompt("hello", extra="1")
    with pytest.raises(TypeError, match="must be a string, not int"):
        await server.prompt("review", code=1)  # type: ignore[arg-type]
    with pytest.raises(
        MCPServerError, match=r"has no prompt 'nope' \(its prompts: review, hello, dialogue, few_shot, broken\)"
    ):
        await server.prompt("nope")


async def test_a_rendered_prompt_goes_into_the_conversation_its_example_before_the_question(server: MCPServer) -> None:
    seen: list[list[tuple[str, str]]] = []

    def model(request: Any) -> ScriptedReply:
        seen.append([(m.role.value, m.text) for m in request.messages if m.text])
        return ScriptedReply(text="chien")

    rendered = await server.prompt("few_shot", word="dog")
    messages = rendered.to_messages()
    assert [(m.role.value, m.text) for m in messages] == [
        ("user", "Translate 'cat' into French."),
        ("assistant", "chat"),
        ("user", "Translate 'dog' into French."),
    ]
    session = ChatSession(ScriptedTransport([model]))
    reply = await session.send_messages(messages)
    assert reply.text == "chien"
    assert seen == [
        [("user", "Translate 'cat' into French."), ("assistant", "chat"), ("user", "Translate 'dog' into French.")]
    ]
    assert [m.role.value for m in session.messages] == ["user", "assistant", "user", "assistant"]
    assert [m.id for m in session.messages[:3]] != [m.id for m in messages]  # copies: sending twice adds twice


async def test_a_prompt_that_ends_with_the_assistant_is_refused_as_messages(server: MCPServer) -> None:
    dialogue = await server.prompt("dialogue", topic="owls")
    with pytest.raises(ValueError, match="ends with the assistant's message, so there is nothing for the model"):
        dialogue.to_messages()


def test_a_prompts_media_resources_and_links_become_parts_of_the_users_message() -> None:
    rendered = RenderedPrompt(
        name="look",
        server="pics",
        description=None,
        messages=(
            PromptMessage("user", PromptText("Look at this:")),
            PromptMessage("user", PromptText("Closely.")),
            PromptMessage("user", PromptMedia(data=PIXEL, mime_type="image/png")),
            PromptMessage("user", ResourceText(uri="docs://a", text="A's text", mime_type="text/plain")),
            PromptMessage("user", PromptLink(MCPResource(uri="docs://b", name="b", mime_type="text/markdown"))),
            PromptMessage("assistant", PromptMedia(data=PIXEL, mime_type="image/png")),
            PromptMessage("user", PromptText("Well?")),
        ),
    )
    first, answer, last = rendered.to_messages()
    text, image, resource, link = first.parts
    assert isinstance(text, TextPart)
    assert text.text == "Look at this:\n\nClosely."  # texts in a row: one text
    assert isinstance(image, FilePart)
    assert image.media_type == "image/png"
    assert base64.b64decode(image.data or "") == PIXEL
    assert isinstance(resource, TextPart)
    assert resource.text == "Attached resource <docs://a> (text/plain) from the MCP server `pics`:\nA's text"
    assert isinstance(link, TextPart)
    assert link.text == "Resource <docs://b> (b, text/markdown) from the MCP server `pics`"
    assert answer.text == "(image/png)"  # an assistant's message keeps text only
    assert last.text == "Well?"


@pytest.mark.parametrize(
    ("messages", "said"),
    [
        ([], "non-empty list"),
        ([Message(Role.USER, [TextPart("a")]), Message(Role.ASSISTANT, [TextPart("b")])], "must be the user's"),
        ([Message(Role.USER, [TextPart("  ")])], "message 1 holds no text or file"),
        (
            [Message(Role.ASSISTANT, [ToolCallPart("c1", "t", "{}")]), Message(Role.USER, [TextPart("a")])],
            "message 1 holds a ToolCallPart",
        ),
    ],
)
async def test_send_messages_refuses_what_cannot_be_sent_and_changes_nothing(messages: list[Any], said: str) -> None:
    session = ChatSession(ScriptedTransport(["never"]))
    with pytest.raises(ValueError, match=said):
        await session.send_messages(messages)
    assert session.messages == []


# --- attached to a message ------------------------------------------------------------------------------------------


def user_parts(request: Any) -> ScriptedReply:
    return ScriptedReply(text="ok")


async def test_a_text_resource_attached_is_a_text_part_naming_its_uri(server: MCPServer) -> None:
    session = ChatSession(ScriptedTransport(user_parts))
    await session.send("Summarise", attach=await server.read("docs://guide"))
    (part,) = session.messages[0].parts[1:]
    assert isinstance(part, TextPart)
    assert (
        part.text == f"Attached resource <docs://guide> (text/markdown) from the MCP server `offers-server`:\n{GUIDE}"
    )


async def test_a_large_text_resource_is_bounded(server: MCPServer) -> None:
    session = ChatSession(ScriptedTransport(user_parts))
    await session.send("Read", attach=await server.read("docs://big"))
    (part,) = session.messages[0].parts[1:]
    assert isinstance(part, TextPart)
    assert len(part.text) < 21_000
    assert "30,000 more characters left out" in part.text


async def test_an_image_resource_attached_is_a_file_part(server: MCPServer) -> None:
    session = ChatSession(ScriptedTransport(user_parts))
    read = await server.read("images://pixel.png")
    await session.send("Look", attach=[read, read.contents[0]])
    user = session.messages[0]
    expected = FilePart("image/png", data=base64.b64encode(PIXEL).decode(), name="images://pixel.png")
    assert user.parts[1:] == [expected, expected]


# --- paging ---------------------------------------------------------------------------------------------------------


async def test_every_page_of_a_listing_is_read() -> None:
    paged = MCPServer.stdio(sys.executable, [str(Path(__file__).parent / "servers" / "paged_server.py")])
    try:
        resources = await paged.resources()
        assert [r.uri for r in resources] == [f"paged://{n}" for n in range(6)]
        assert resources[3].size == 30
        assert [t.name for t in await paged.resource_templates()] == [f"t{n}" for n in range(6)]
        prompts = await paged.prompts()
        assert [p.name for p in prompts] == [f"p{n}" for n in range(6)]
        assert [p.arguments[0].required for p in prompts[:2]] == [True, False]
    finally:
        await paged.aclose()
