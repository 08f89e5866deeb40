"""A pydantic-ai agent served over AG-UI on loopback, in a thread, for the tests and the notebooks: pydantic-ai's own
adapter (``AGUIAdapter.dispatch_request``) in a Starlette route on uvicorn, with a free port."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from pydantic_ai import Agent
from pydantic_ai.ui.ag_ui import AGUIAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["AGUIServer", "serve_agent"]


@dataclass
class AGUIServer:
    """A running server: its ``url``, the request bodies it received, and ``stop()``."""

    url: str
    bodies: list[bytes] = field(default_factory=list)
    disconnects: list[float] = field(default_factory=list)  # when a client went away mid-response
    _server: uvicorn.Server | None = None
    _thread: threading.Thread | None = None

    def stop(self) -> None:
        """Stops the server and waits for its thread."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> AGUIServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def serve_agent(
    agent: Agent[Any, Any], *, path: str = "/agent", before: Callable[[Request], Response | None] | None = None
) -> AGUIServer:
    """Serves ``agent`` over AG-UI at ``http://127.0.0.1:<port><path>`` in a daemon thread until ``stop()``.

    Args:
        agent: The agent.
        path: The route.
        before: Looks at each request first; a response it returns is sent instead of the agent's (a 401, say).
    """
    server_record = AGUIServer(url="")

    async def run(request: Request) -> Response:
        server_record.bodies.append(await request.body())
        if before is not None and (early := before(request)) is not None:
            return early
        response = await AGUIAdapter.dispatch_request(request, agent=agent)
        return _watching(response, request, server_record)

    port = free_port()
    app = Starlette(routes=[Route(path, run, methods=["POST"])])
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"ag-ui-server-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the AG-UI test server did not start")
        time.sleep(0.01)
    server_record.url = f"http://127.0.0.1:{port}{path}"
    server_record._server, server_record._thread = server, thread
    return server_record


def _watching(response: Response, request: Request, record: AGUIServer) -> Response:
    """The response, noting when the client disconnects before its body has been sent."""
    iterator = getattr(response, "body_iterator", None)
    if iterator is None:
        return response

    async def body() -> Any:
        try:
            async for chunk in iterator:
                yield chunk
        finally:
            if await request.is_disconnected():
                record.disconnects.append(time.monotonic())

    response.body_iterator = body()  # type: ignore[attr-defined]
    return response
