"""A real published ACP agent in the chat: ``@zed-industries/claude-code-acp`` (pinned by
``tests/integrations/acp_real/package-lock.json``, installed by ``scripts/acp_agents.sh``), which runs Claude Code,
driven through ``ChatSession`` with no key and no network. It talks to a loopback server that answers as Anthropic's
Messages API from a recorded stream (``fake_anthropic.py``); every proxy-honouring request for the network goes to a
trap that fails the test.

One agent process serves every test of the file (each chat is its own agent session), to keep the file quick.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

pytest.importorskip("acp")

from ai_widgets import ChatSession, MessageStatus, ToolCallState
from ai_widgets.integrations.acp import ACPTransport
from ai_widgets.messages import CallDiff, Message, ToolCallPart
from tests.helpers import wait_for
from tests.integrations.acp_installed import claude_code_acp, claude_code_env
from tests.integrations.fake_anthropic import FakeAnthropic, Reply, ToolUse, fake_anthropic
from tests.integrations.proxy_trap import ProxyTrap, proxy_trap

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

WRITE = "mcp__acp__Write"  # Claude Code's Write, routed through the client because the client serves files


class Claude:
    """The agent's transport, the fake Anthropic server, the proxy trap, and the agent's home and working folder."""

    def __init__(self, root: Path, anthropic: FakeAnthropic, trap: ProxyTrap) -> None:
        self.home = root / "home"
        self.work = root / "work"
        self.work.mkdir(parents=True)
        self.anthropic = anthropic
        self.trap = trap
        self.env = claude_code_env(self.home, anthropic.url, trap.url)
        self.transport = ACPTransport(str(claude_code_acp()), cwd=self.work, env=self.env)

    def kept_rules(self) -> dict[str, str]:
        """Claude Code's settings files (the project's and its config folder's) that name a tool rule of Write."""
        config = Path(self.env["CLAUDE_CONFIG_DIR"])
        settings = [*self.work.glob(".claude/settings*.json"), *config.glob("settings*.json")]
        return {str(path): path.read_text() for path in settings if "Write" in path.read_text()}

    def write_turn(self, name: str, content: str, *, call_id: str, after: str) -> Path:
        """Scripts a turn where the model writes ``content`` to ``name`` in the working folder, then says ``after``."""
        target = self.work / name
        use = ToolUse(call_id, WRITE, {"file_path": str(target), "content": content})
        self.anthropic.script(Reply(f"I'll write {name}.", use), Reply(after))
        return target


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[FakeAnthropic, ProxyTrap]]:
    with fake_anthropic() as anthropic, proxy_trap() as trap:
        yield anthropic, trap
        # Once the agent was stopped: Claude Code 2.1.44's metrics exporter, which no variable turns off for a key
        # user, flushes on exit and first asks api.anthropic.com whether metrics are on. The trap refuses it.
        assert all(c.startswith(b"CONNECT api.anthropic.com:443 ") for c in trap.caught), trap.caught


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def claude(
    servers: tuple[FakeAnthropic, ProxyTrap], tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Claude]:
    made = Claude(tmp_path_factory.mktemp("claude"), *servers)
    yield made
    await made.transport.aclose()


@pytest.fixture(autouse=True)
def fresh_log(servers: tuple[FakeAnthropic, ProxyTrap]) -> Iterator[None]:
    """Each test sees only its own requests, leaves no scripted reply unused, and nothing reached for the network
    while the agent worked."""
    anthropic, trap = servers
    anthropic.requests.clear()
    anthropic.replies.clear()
    yield
    assert trap.caught == [], f"the agent reached for the network: {trap.caught}"
    assert anthropic.replies == [], "a scripted reply was never asked for"


async def asked(session: ChatSession, task: asyncio.Task[Message]) -> ToolCallPart:
    await wait_for(lambda: bool(session.pending_approvals) or task.done(), timeout=60)
    assert not task.done(), task.result().error
    return session.pending_approvals[0]


async def test_allow_writes_the_file_after_the_card_showed_the_diff(claude: Claude) -> None:
    target = claude.write_turn("hello.txt", "hello from claude\n", call_id="toolu_01allow", after="Done: written.")
    session = ChatSession(claude.transport)
    task = asyncio.create_task(session.send("Write hello.txt"))
    card = await asked(session, task)
    assert card.tool_call_id == "toolu_01allow"
    assert card.tool_name == WRITE
    assert card.state is ToolCallState.AWAITING_APPROVAL
    assert card.view is not None
    assert card.view.title == f"Write {target}"
    assert card.view.content == (CallDiff(str(target), None, "hello from claude\n"),)
    assert session.messages[-1].text == "I'll write hello.txt."
    assert not target.exists()  # nothing written before the person allows it
    session.approve(card.tool_call_id, "approved")
    reply = await asyncio.wait_for(task, 60)
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert target.read_text() == "hello from claude\n"
    assert reply.text == "I'll write hello.txt.Done: written."
    (call,) = reply.tool_calls  # the write was the allowed call's: no second card
    assert call.state is ToolCallState.COMPLETED
    assert claude.anthropic.kinds() == ["count_tokens", "messages", "messages"]
    first, second = claude.anthropic.streamed()
    assert WRITE in first.tool_names
    assert "Write hello.txt" in json.dumps(first.last_user_content)
    (result,) = second.tool_results
    assert result["tool_use_id"] == "toolu_01allow"
    assert not result.get("is_error")


async def test_decline_writes_nothing_and_the_next_message_goes_on(claude: Claude) -> None:
    """Claude Code ends its turn when a call is declined (its deny says ``interrupt``); the model learns of the
    refusal with the next message."""
    target = claude.write_turn("no.txt", "never\n", call_id="toolu_01decline", after="Fine, I left it.")
    later = claude.anthropic.replies.pop()
    session = ChatSession(claude.transport)
    task = asyncio.create_task(session.send("Write no.txt"))
    card = await asked(session, task)
    session.approve(card.tool_call_id, "rejected", reason="not now")
    reply = await asyncio.wait_for(task, 60)
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert not target.exists()
    assert reply.tool_calls[0].state is ToolCallState.REJECTED
    assert reply.text == "I'll write no.txt."
    claude.anthropic.script(later)
    again = await asyncio.wait_for(session.send("Then leave it."), 60)
    assert again.status is MessageStatus.COMPLETED, again.error
    assert again.text == "Fine, I left it."
    assert claude.anthropic.kinds() == ["count_tokens", "messages", "messages"]  # tokens counted once a session
    (result,) = claude.anthropic.streamed()[1].tool_results
    assert result["tool_use_id"] == "toolu_01decline"
    assert result["is_error"] is True
    assert "refused" in json.dumps(result["content"])
    assert not target.exists()


async def test_stop_while_it_asks_ends_the_reply_stopped_and_the_next_message_works(claude: Claude) -> None:
    target = claude.write_turn("stop.txt", "never\n", call_id="toolu_01stop", after="unused")
    claude.anthropic.replies.pop()  # the cancelled prompt asks for no second reply
    session = ChatSession(claude.transport)
    task = asyncio.create_task(session.send("Write stop.txt"))
    await asked(session, task)
    session.stop()
    reply = await asyncio.wait_for(task, 60)
    assert reply.status is MessageStatus.CANCELLED
    assert reply.tool_calls[0].state is ToolCallState.CANCELLED  # Claude Code sends it no final update: ours
    claude.anthropic.script(Reply("Still here."))
    again = await asyncio.wait_for(session.send("Are you there?"), 60)
    assert again.status is MessageStatus.COMPLETED, again.error
    assert again.text == "Still here."
    assert not target.exists()
    assert claude.anthropic.kinds() == ["count_tokens", "messages", "messages"]
    (result,) = claude.anthropic.streamed()[1].tool_results  # the cancelled call, told to the model
    assert result["tool_use_id"] == "toolu_01stop"
    assert result["is_error"] is True


async def test_allow_always_is_kept_to_this_chat(claude: Claude) -> None:
    """Claude Code's own "always" would outlive the chat (it writes the rule into the project's
    ``.claude/settings.local.json``), so it hears "once" and the session answers its later asks of this chat; a new
    chat asks again."""
    first = claude.write_turn("a.txt", "a\n", call_id="toolu_01always", after="Wrote a.")
    session = ChatSession(claude.transport)
    task = asyncio.create_task(session.send("Write a.txt"))
    card = await asked(session, task)
    session.approve(card.tool_call_id, "approved_always")
    reply = await asyncio.wait_for(task, 60)
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert first.read_text() == "a\n"

    second = claude.write_turn("b.txt", "b\n", call_id="toolu_02always", after="Wrote b.")
    reply = await asyncio.wait_for(session.send("Write b.txt"), 60)  # nobody approves: it must not ask
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert second.read_text() == "b\n"
    (call,) = reply.tool_calls
    assert call.state is ToolCallState.COMPLETED
    assert (call.decision, call.decision_remembered) == ("approved_always", True)

    assert claude.kept_rules() == {}, "Claude Code kept the rule beyond this chat"

    third = claude.write_turn("c.txt", "c\n", call_id="toolu_03always", after="Left c.")
    claude.anthropic.replies.pop()  # declined: Claude Code ends the turn there
    other = ChatSession(claude.transport)
    task = asyncio.create_task(other.send("Write c.txt"))
    card = await asked(other, task)  # a new chat asks again
    other.approve(card.tool_call_id, "rejected")
    await asyncio.wait_for(task, 60)
    assert not third.exists()


async def test_an_edit_of_its_arguments_is_not_allowed_as_the_original(claude: Claude) -> None:
    """ACP has no room for changed input: allowing an edited call must not let the agent run its own version."""
    target = claude.write_turn("edited.txt", "the agent's\n", call_id="toolu_01edit", after="unused")
    claude.anthropic.replies.pop()  # refused: Claude Code ends the turn there
    session = ChatSession(claude.transport)
    task = asyncio.create_task(session.send("Write edited.txt"))
    card = await asked(session, task)
    session.approve(card.tool_call_id, "approved", arguments={"file_path": str(target), "content": "mine\n"})
    reply = await asyncio.wait_for(task, 60)
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert not target.exists()
    (call,) = reply.tool_calls
    assert call.state is ToolCallState.FAILED
    assert call.outcome is not None
    assert "cannot take changed arguments" in (call.outcome.message or "")
