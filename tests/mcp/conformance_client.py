"""A client for the client scenarios of ``@modelcontextprotocol/conformance``, built on ``ai_widgets.mcp``.

The conformance tool starts a scenario's server on loopback and runs this script with the server's URL as its last
argument and the scenario's name in ``MCP_CONFORMANCE_SCENARIO`` (``tests/mcp/test_conformance.py`` runs it)::

    MCP_CONFORMANCE_SCENARIO=tools_call python tests/mcp/conformance_client.py http://localhost:PORT

Everything goes through a ``ChatSession`` as in a notebook: a scripted model calls the scenario's tools, the session
runs them on ``MCPServer.http(url)``, and a server's question (elicitation) is answered through
``session.respond`` as a person would, submitting the form as it starts (the schema's defaults). The script exits 0
when every call it made completed, 1 (saying why on stderr) otherwise; the scenario's server judges the rest.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import httpx2

from ai_widgets import ChatSession, ToolDefinition, ToolInvocation
from ai_widgets.mcp import MCPServer, OAuth
from ai_widgets.messages import Message, MessageStatus, ToolCallState
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport


@dataclass(frozen=True)
class Plan:
    """What the model does in a scenario: the tool calls it makes, one reply each; ``answer``: how the person
    answers a server's question (``None``: no question is expected)."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    answer: str | None = None


PLANS: dict[str, Plan] = {
    "initialize": Plan(),  # connect and list the tools: the handshake is what is checked
    "tools_call": Plan(calls=[("add_numbers", {"a": 5, "b": 3})]),
    "sse-retry": Plan(calls=[("test_reconnection", {})]),
    "elicitation-sep1034-client-defaults": Plan(calls=[("test_client_elicitation_defaults", {})], answer="accept"),
}
AUTH = Plan(calls=[("test-tool", {})])  # every auth/... scenario: list the tools and call its one tool
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"  # the tool's id for a metadata document


class RunEverything:
    """Approves every call (the conformance servers are the person's own test servers)."""

    async def requires_approval(self, definition: ToolDefinition, invocation: ToolInvocation) -> bool:
        return False

    def record_decision(self, definition: ToolDefinition, invocation: ToolInvocation, decision: Any) -> None:
        pass


async def _answer_questions(session: ChatSession, action: str, stop: asyncio.Event) -> int:
    """Answers each question a call's server asks, as a person who submits the form as it starts: ``{}``, which
    the session fills from the schema's defaults (SEP-1034). Returns how many were answered."""
    answered: set[str] = set()
    while not stop.is_set():
        for part in session.pending_inputs:
            if part.tool_call_id not in answered and part.input_request is not None:
                answered.add(part.tool_call_id)
                content: dict[str, Any] | None = {} if part.input_request.mode == "form" else None
                print(f"asked: {part.input_request.message!r}; answering {action}", file=sys.stderr)
                session.respond(part.tool_call_id, action, content if action == "accept" else None)
        await asyncio.sleep(0.01)
    return len(answered)


async def _sign_in_page(authorization_url: str) -> None:
    """The person's browser on the authorization page (the scenario's server grants at once): its redirect is
    followed, to the loopback listener ``OAuth`` opened."""
    async with httpx2.AsyncClient() as browser:
        page = await browser.get(authorization_url, follow_redirects=True)
    if page.status_code != 200:
        raise RuntimeError(f"the sign-in did not come back ({page.status_code}): {page.text[:200]!r}")


def _oauth() -> OAuth:
    """``OAuth`` as a person who allows it would drive it; pre-registered credentials come from
    ``MCP_CONFORMANCE_CONTEXT``."""
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    return OAuth(
        client_name="ai-widgets conformance client",
        client_id=context.get("client_id"),
        client_secret=context.get("client_secret"),
        client_metadata_url=CLIENT_METADATA_URL,
        timeout=20,
        show=_sign_in_page,
    )


def _server(url: str, scenario: str) -> MCPServer:
    """``MCPServer.http(url)``; for an auth/... scenario with the SDK's OAuth client as ``auth=``."""
    auth = _oauth() if scenario.startswith("auth/") else None
    return MCPServer.http(url, timeout=20, call_timeout=20, auth=auth)


def _failures(reply: Message) -> list[str]:
    problems = (
        [] if reply.status is MessageStatus.COMPLETED else [f"the turn ended {reply.status.value}: {reply.error}"]
    )
    for part in reply.tool_calls:
        if part.state is not ToolCallState.COMPLETED:
            told = part.outcome.model_content() if part.outcome is not None else ""
            problems.append(f"{part.tool_name} ended {part.state.value}: {told}")
    return problems


async def run(url: str, scenario: str) -> list[str]:
    """Plays ``scenario`` against the server at ``url``; what went wrong (empty: nothing)."""
    plan = AUTH if scenario.startswith("auth/") else PLANS.get(scenario)
    if plan is None:
        return [f"no plan for scenario {scenario!r} (known: {', '.join(sorted(PLANS))}, auth/...)"]
    server = _server(url, scenario)
    try:
        tools = [tool.name for tool in await server.list_tools()]
        print(f"listed {tools}", file=sys.stderr)
        if not plan.calls:
            return []
        replies: list[Any] = [
            ScriptedReply(tool_calls=[ScriptedToolCall(name=name, arguments=arguments)])
            for name, arguments in plan.calls
        ]
        transport = ScriptedTransport([*replies, "Done."])
        session = ChatSession(transport, tools=[server], approval_policy=RunEverything())
        stop = asyncio.Event()
        answering = asyncio.ensure_future(_answer_questions(session, plan.answer or "cancel", stop))
        try:
            reply = await session.send(f"run the {scenario} scenario")
        finally:
            stop.set()
            asked = await answering
        problems = _failures(reply)
        for part in reply.tool_calls:
            if part.outcome is not None:
                print(f"{part.tool_name}: {part.outcome.model_content()}", file=sys.stderr)
        if (plan.answer is not None) != (asked > 0):
            problems.append(f"the server asked {asked} question(s); expected {'some' if plan.answer else 'none'}")
        return problems
    except Exception as exc:  # what the conformance tool shows of a client: its stderr
        return [f"{type(exc).__name__}: {exc}"]
    finally:
        await server.aclose()


def main() -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO")
    if len(sys.argv) < 2 or not scenario:
        print("usage: MCP_CONFORMANCE_SCENARIO=<scenario> conformance_client.py <server-url>", file=sys.stderr)
        return 2
    started = time.monotonic()
    problems = asyncio.run(run(sys.argv[-1], scenario))
    for problem in problems:
        print(f"conformance client: {problem}", file=sys.stderr)
    print(f"conformance client: {scenario} in {time.monotonic() - started:.1f}s", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
