"""Signing in to an MCP server over HTTP: :class:`OAuth` builds the MCP SDK's OAuth client (authorization code with
PKCE; a client metadata document, dynamic registration or pre-registered credentials; scopes from the server's
``WWW-Authenticate``; refresh) with the two things a notebook needs: the authorization link shown to the person, and
the redirect received on a one-shot loopback listener. Tokens stay in memory here: never in a log, widget state, the
notebook or a transcript."""

from __future__ import annotations

import asyncio
import inspect
import logging
import socket
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ai_widgets._html import escaped

__all__ = ["OAuth"]

logger = logging.getLogger("ai_widgets.mcp")

ShowLink = Callable[[str], Awaitable[None] | None]

DONE_PAGE = (
    b"<!doctype html><meta charset=utf-8><title>Signed in</title>"
    b"<p>Signed in: you can close this tab and go back to the notebook.</p>"
)
REFUSED_PAGE = b"<!doctype html><meta charset=utf-8><title>Not signed in</title><p>Sign-in was refused.</p>"


class OAuth:
    """Sign-in to an MCP server with OAuth, for ``MCPServer.http(url, auth=OAuth())``.

    On the server's first 401 the person is shown the authorization link (logged on ``ai_widgets.mcp`` and, in a
    notebook, shown as a link in the cell); the authorization server redirects back to a listener on
    ``127.0.0.1``, and the request goes on with the token. An expired token is refreshed; tokens live in memory,
    for this object's life.

    Args:
        client_name: The name the authorization server shows the person.
        scopes: The scopes to ask for; by default the ones the server names (``WWW-Authenticate``, its metadata).
        client_id: A client registered with the authorization server beforehand (no dynamic registration).
        client_secret: That client's secret, if it has one.
        client_metadata_url: An HTTPS URL of a client metadata document, used as the client id where the
            authorization server supports it.
        timeout: Seconds to wait for the person to finish signing in.
        show: Called with the authorization link instead of showing it (a function or a coroutine function).
    """

    def __init__(
        self,
        *,
        client_name: str = "ai_widgets",
        scopes: Sequence[str] | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        client_metadata_url: str | None = None,
        timeout: float = 300.0,
        show: ShowLink | None = None,
    ) -> None:
        if not isinstance(timeout, int | float) or isinstance(timeout, bool) or not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
        if isinstance(scopes, str):
            raise TypeError("scopes is a list of scope names, not one string")
        if client_secret is not None and client_id is None:
            raise ValueError("client_secret= needs the client_id= it belongs to")
        self.client_name = client_name
        self.scopes = None if scopes is None else tuple(scopes)
        self.client_id = client_id
        self._client_secret = client_secret
        self.client_metadata_url = client_metadata_url
        self.timeout = float(timeout)
        self._show = show

    def __repr__(self) -> str:
        registered = f", client_id={self.client_id!r}" if self.client_id else ""
        return f"OAuth(client_name={self.client_name!r}{registered})"

    def provider(self, server_url: str) -> Any:
        """The SDK's ``OAuthClientProvider`` (an httpx authentication flow) for the server at ``server_url``."""
        from mcp.client.auth import OAuthClientProvider
        from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata

        listener = Listener(self.timeout)
        method = "client_secret_basic" if self._client_secret else "none"
        metadata = OAuthClientMetadata(
            client_name=self.client_name,
            redirect_uris=[listener.redirect_uri],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            scope=" ".join(self.scopes) if self.scopes else None,
            token_endpoint_auth_method=method,
        )
        registered = None
        if self.client_id is not None:
            registered = OAuthClientInformationFull(
                client_id=self.client_id,
                client_secret=self._client_secret,
                redirect_uris=[listener.redirect_uri],
                token_endpoint_auth_method=method,
            )

        async def redirect(authorization_url: str) -> None:
            await listener.start()
            await self._present(authorization_url, server_url)

        return OAuthClientProvider(
            server_url=server_url,
            client_metadata=metadata,
            storage=MemoryTokens(registered),
            redirect_handler=redirect,
            callback_handler=listener.result,
            client_metadata_url=self.client_metadata_url,
        )

    async def _present(self, authorization_url: str, server_url: str) -> None:
        if self._show is not None:
            shown = self._show(authorization_url)
            if inspect.isawaitable(shown):
                await shown
            return
        logger.warning("ai_widgets: the MCP server %s asks you to sign in: open %s", server_url, authorization_url)
        display_link(authorization_url, server_url)


def display_link(url: str, server_url: str) -> None:
    """In IPython, the link as a clickable line in the cell (only an http(s) link; escaped)."""
    if urlsplit(url).scheme not in ("http", "https"):
        return
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        return
    if get_ipython() is None:
        return
    text = f"The MCP server {server_url} asks you to sign in: {url}"
    html = (
        f'<p>The MCP server {escaped(server_url)} asks you to sign in: <a href="{escaped(url)}" '
        f'target="_blank" rel="noopener noreferrer">open the sign-in page</a>.</p>'
    )
    display({"text/plain": text, "text/html": html}, raw=True)  # type: ignore[no-untyped-call]


class MemoryTokens:
    """The SDK's token storage, in memory only."""

    def __init__(self, client: Any) -> None:
        self._tokens: Any = None
        self._client = client

    async def get_tokens(self) -> Any:
        return self._tokens

    async def set_tokens(self, tokens: Any) -> None:
        self._tokens = tokens

    async def get_client_info(self) -> Any:
        return self._client

    async def set_client_info(self, client_info: Any) -> None:
        self._client = client_info


class Listener:
    """A loopback HTTP listener for one redirect at a time on ``/callback``: its port is chosen when it is made (the
    redirect URI is registered with it); it listens from :meth:`start` until :meth:`result` has the redirect."""

    def __init__(self, timeout: float) -> None:
        self._timeout = timeout
        reserve = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        reserve.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        reserve.bind(("127.0.0.1", 0))
        self.port: int = reserve.getsockname()[1]
        self._socket: socket.socket | None = reserve
        self._server: asyncio.Server | None = None
        self._redirect: asyncio.Future[dict[str, str]] | None = None

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}/callback"

    async def start(self) -> None:
        if self._server is not None:
            self._server.close()
        sock = self._socket
        self._socket = None
        if sock is None:  # a second sign-in (a refresh refused): the same port again
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", self.port))
        self._redirect = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._answer, sock=sock)

    async def result(self) -> Any:
        from mcp.client.auth import AuthorizationCodeResult

        if self._redirect is None:
            raise RuntimeError("the sign-in page was never shown")
        try:
            query = await asyncio.wait_for(self._redirect, self._timeout)
        except TimeoutError:
            raise TimeoutError(
                f"signing in did not finish within {self._timeout:g} seconds (the redirect to "
                f"{self.redirect_uri} never came)"
            ) from None
        finally:
            if self._server is not None:
                self._server.close()
                self._server = None
        if "error" in query:
            detail = query.get("error_description") or query["error"]
            raise PermissionError(f"the authorization server refused the sign-in: {detail}")
        if "code" not in query:
            raise PermissionError("the authorization server's redirect carried no code")
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            method, target, _ = request.split(b"\r\n", 1)[0].decode("latin-1").split(" ", 2)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ValueError):
            writer.close()
            return
        parts = urlsplit(target)
        if method != "GET" or parts.path != "/callback":
            await reply(writer, 404, b"Not found.")
            return
        query = {key: values[0] for key, values in parse_qs(parts.query).items()}
        refused = "error" in query or "code" not in query
        await reply(writer, 400 if refused else 200, REFUSED_PAGE if refused else DONE_PAGE)
        if self._redirect is not None and not self._redirect.done():
            self._redirect.set_result(query)


async def reply(writer: asyncio.StreamWriter, status: int, body: bytes) -> None:
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[status]
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {len(body)}\r\n"
        "Cache-Control: no-store\r\nConnection: close\r\n\r\n"
    )
    writer.write(head.encode("ascii") + body)
    try:
        await writer.drain()
    finally:
        writer.close()
