"""An MCP server for the tests of what a server offers besides tools: resources (text, a PNG blob, a template) and
a tool that links to them (``links``), and prompts (with and without arguments, two rendering several messages: a dialogue that ends with the
assistant's, an example before the question), written with the SDK's ``MCPServer``.

Run as a script it serves over stdio (``python offers_server.py``).
"""

from __future__ import annotations

import base64

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.prompts.base import AssistantMessage, UserMessage
from mcp.types import ResourceLink, TextContent

#: A 1x1 PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
#: The text of ``docs://guide``.
GUIDE = "# Guide\n\nStart with `add`, then try `wipe`.\n"


def build() -> MCPServer:
    server = MCPServer("offers-server", log_level="WARNING")

    @server.tool()
    def ping() -> str:
        """Answers pong."""
        return "pong"

    @server.tool(structured_output=False)
    def links() -> list[object]:
        """Links to the guide, the big text, the pixel, and a resource that is not there."""
        return [
            TextContent(type="text", text="Read these."),
            *(
                ResourceLink(type="resource_link", uri=uri, name=uri.rsplit("/", 1)[-1])
                for uri in ("docs://guide", "docs://big", "images://pixel.png", "docs://gone")
            ),
        ]

    @server.resource("docs://guide", title="The guide", description="How to start.", mime_type="text/markdown")
    def guide() -> str:
        return GUIDE

    @server.resource("images://pixel.png", description="One pixel.", mime_type="image/png")
    def pixel() -> bytes:
        return PIXEL

    @server.resource("docs://big", mime_type="text/plain")
    def big() -> str:
        return "x" * 50_000

    @server.resource("notes://{topic}", title="A note", description="The note on a topic.", mime_type="text/plain")
    def note(topic: str) -> str:
        return f"Notes on {topic}."

    @server.prompt(title="Review code", description="Asks for a review of some code.")
    def review(code: str, language: str = "python") -> str:
        return f"Please review this {language} code:\n{code}"

    @server.prompt(description="A greeting with no arguments.")
    def hello() -> str:
        return "Hello there."

    @server.prompt(description="A short dialogue.")
    def dialogue(topic: str) -> list[UserMessage | AssistantMessage]:
        return [UserMessage(f"Tell me about {topic}."), AssistantMessage("Gladly. What would you like to know?")]

    @server.prompt(title="Translate", description="Translates a word into French, after an example.")
    def few_shot(word: str) -> list[UserMessage | AssistantMessage]:
        return [
            UserMessage("Translate 'cat' into French."),
            AssistantMessage("chat"),
            UserMessage(f"Translate '{word}' into French."),
        ]

    @server.prompt(description="Always fails to render.")
    def broken() -> str:
        raise RuntimeError("the template is gone")

    return server


if __name__ == "__main__":
    build().run("stdio")
