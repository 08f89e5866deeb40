"""``OAuth``: the loopback listener that receives the authorization server's redirect, and what ``OAuth`` refuses.
The whole sign-in (metadata discovery, registration or a client metadata document, PKCE, scopes, token endpoint
authentication) runs against the conformance tool's authorization servers in ``test_conformance.py``."""

from __future__ import annotations

import asyncio
import logging

import httpx2
import pytest

from ai_widgets.mcp import MCPServer, OAuth
from ai_widgets.mcp._auth import Listener


async def _browse(url: str) -> httpx2.Response:
    async with httpx2.AsyncClient() as browser:
        return await browser.get(url)


async def test_the_listener_takes_the_redirect_on_its_callback_path_only() -> None:
    listener = Listener(timeout=5)
    assert listener.redirect_uri == f"http://127.0.0.1:{listener.port}/callback"
    await listener.start()
    elsewhere = await _browse(f"http://127.0.0.1:{listener.port}/favicon.ico")
    assert elsewhere.status_code == 404
    page = await _browse(listener.redirect_uri + "?code=the-code&state=s1")
    assert page.status_code == 200
    assert "close this tab" in page.text
    result = await listener.result()
    assert (result.code, result.state) == ("the-code", "s1")
    with pytest.raises(httpx2.ConnectError):  # one-shot: closed once the redirect came
        await _browse(listener.redirect_uri + "?code=again")


async def test_a_refused_sign_in_says_so() -> None:
    listener = Listener(timeout=5)
    await listener.start()
    page = await _browse(listener.redirect_uri + "?error=access_denied&error_description=The+person+said+no")
    assert page.status_code == 400
    with pytest.raises(PermissionError, match="refused the sign-in: The person said no"):
        await listener.result()


async def test_a_sign_in_nobody_finishes_times_out_and_a_second_one_listens_again() -> None:
    listener = Listener(timeout=0.2)
    await listener.start()
    with pytest.raises(TimeoutError, match=r"did not finish within 0.2 seconds"):
        await listener.result()
    await listener.start()  # the same port (the registered redirect URI) again
    task = asyncio.ensure_future(listener.result())
    await _browse(listener.redirect_uri + "?code=c2&state=s2")
    assert (await task).code == "c2"


async def test_junk_on_the_port_is_dropped_and_the_listener_keeps_waiting() -> None:
    listener = Listener(timeout=5)
    await listener.start()
    _, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(b"\x00\xff not http\r\n\r\n")
    await writer.drain()
    writer.close()
    await _browse(listener.redirect_uri + "?code=ok&state=s")
    assert (await listener.result()).code == "ok"


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="positive number of seconds"):
        OAuth(timeout=0)
    with pytest.raises(TypeError, match="list of scope names"):
        OAuth(scopes="read write")
    with pytest.raises(ValueError, match="needs the client_id"):
        OAuth(client_secret="s")
    with pytest.raises(TypeError, match="auth= is for an HTTP server"):
        MCPServer(command="python", args=["server.py"], auth=OAuth())


async def test_the_link_is_shown_and_logged_without_a_secret(caplog: pytest.LogCaptureFixture) -> None:
    oauth = OAuth(client_id="registered", client_secret="very-secret-value")
    assert "very-secret-value" not in repr(oauth)
    provider = oauth.provider("http://127.0.0.1:1/mcp")
    assert provider.context.client_metadata.redirect_uris[0].host == "127.0.0.1"
    with caplog.at_level(logging.WARNING, logger="ai_widgets.mcp"):
        await oauth._present("https://auth.example/authorize?client_id=registered&state=x", "http://127.0.0.1:1/mcp")
    (record,) = caplog.records
    assert "asks you to sign in: open https://auth.example/authorize" in record.getMessage()
    assert "very-secret-value" not in record.getMessage()


async def test_show_replaces_the_default_and_may_be_a_coroutine_function() -> None:
    seen: list[str] = []

    async def show(url: str) -> None:
        seen.append(url)

    await OAuth(show=show)._present("https://auth.example/a", "http://srv/mcp")
    OAuth(show=seen.append)  # a plain function too
    await OAuth(show=seen.append)._present("https://auth.example/b", "http://srv/mcp")
    assert seen == ["https://auth.example/a", "https://auth.example/b"]
