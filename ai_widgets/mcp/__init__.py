"""Tools from MCP servers: :class:`MCPServer`, a source of tools on the official ``mcp`` SDK (extra ``[mcp]``).

::

    files = MCPServer.stdio("python", ["fs_server.py"], prefix="fs")
    chat = ChatWidget(transport=..., tools=[get_weather, files])   # or registry.add(files)

The server is started (or reached) on first use: the first request of a turn lists its tools. Its tools are
listed again before every request, from a cache that the server's ``notifications/tools/list_changed`` clears, so
the model always sees the tools the server has now. ``await files.aclose()`` (or ``async with files:``) closes the
connection and stops the process.

Threads and loops
    A turn runs on whatever event loop awaits it: the kernel's, or the private loop thread of ``ask_sync``. The SDK's
    client session is anyio-based: it must be entered and left by one task, on the loop it was made on. So each
    server has a thread of its own that runs an event loop, and one task there owns the connection (opens it,
    keeps it, closes it: the transport and the child process with it). Every request (a listing, a call, a close)
    is sent to that loop and awaited from the caller's through a future; cancelling the caller's await cancels the
    request there, which sends the MCP cancellation. Progress the server reports goes to the call's
    ``invocation.progress``, which hands it to the session's loop.

Resources and prompts
    ``await server.resources()``, ``resource_templates()`` and ``read(uri)``; ``await server.prompts()`` and
    ``prompt(name, **arguments)``: typed values (:class:`MCPResource`, :class:`ResourceRead`, :class:`MCPPrompt`,
    :class:`RenderedPrompt`, ...). ``send(text, attach=await server.read(uri))`` puts a resource in a message;
    ``session.send_messages(rendered.to_messages())`` sends a rendered prompt (what ``/`` in the input box does).

Failures
    A server that cannot start, exits, or does not answer in time gives the turn a clear error when its tools are
    listed (:class:`MCPServerError`, naming the server, with the end of its stderr) or the call a failure the model
    sees; the child process is always reaped, and the next use starts the server again. A call may take
    ``call_timeout`` seconds (:data:`DEFAULT_CALL_TIMEOUT`, 120, by default; the time it waits for the person does
    not count): then it is cancelled on the server, and a server that does not list its tools within 5 seconds
    either is taken for frozen (its connection closed, a stdio server's process reaped). An HTTP server that refuses
    the requests (401, 403) says it needs credentials: ``headers={"Authorization": ...}`` or ``auth=``.

Signing in
    ``MCPServer.http(url, auth=OAuth())``: the MCP SDK's OAuth client; the authorization link shows in the cell and
    the redirect comes back to a one-shot listener on 127.0.0.1. Tokens stay in memory.

Roots and logging
    No roots are declared by default, so a server keeps the directories it was started with; ``roots=[...]`` gives
    it those (the filesystem server then works in them instead). Its log messages go to the Python logger
    ``ai_widgets.mcp.server.<name>`` and to the card of the call that was running.
"""

from ai_widgets.mcp._apps import APP_MIME_TYPE, APPS_EXTENSION, MAX_APP_BYTES, AppPage
from ai_widgets.mcp._auth import OAuth
from ai_widgets.mcp._base import MCPServerError
from ai_widgets.mcp._features import DEFAULT_CALL_TIMEOUT
from ai_widgets.mcp._offers import (
    MCPPrompt,
    MCPResource,
    MCPResourceTemplate,
    PromptArgument,
    PromptContent,
    PromptLink,
    PromptMedia,
    PromptMessage,
    PromptText,
    RenderedPrompt,
    ResourceBlob,
    ResourceContents,
    ResourceRead,
    ResourceText,
)
from ai_widgets.mcp._server import MCPServer

__all__ = [
    "APPS_EXTENSION",
    "APP_MIME_TYPE",
    "DEFAULT_CALL_TIMEOUT",
    "MAX_APP_BYTES",
    "AppPage",
    "MCPPrompt",
    "MCPResource",
    "MCPResourceTemplate",
    "MCPServer",
    "MCPServerError",
    "OAuth",
    "PromptArgument",
    "PromptContent",
    "PromptLink",
    "PromptMedia",
    "PromptMessage",
    "PromptText",
    "RenderedPrompt",
    "ResourceBlob",
    "ResourceContents",
    "ResourceRead",
    "ResourceText",
]
