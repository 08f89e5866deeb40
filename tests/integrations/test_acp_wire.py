"""The pipe to an ACP agent (``_acp_wire.AgentWire``), against real processes: small Python scripts as fake agents
(messages, garbage lines, a 20 MiB line, a crash, a grandchild holding the pipes, an agent that ignores EOF), and a
tiny agent on the SDK's agent side, driven by the SDK's own client connection over the wire. Every test ends with
nothing of its own left running."""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ai_widgets.integrations._acp_wire import LINE_LIMIT, STDERR_KEPT, AgentWire, AgentWireError
from tests.helpers import gone, no_new_children, until_gone

#: Answers each request with its own params, until EOF.
ECHO = r"""
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": message["params"]}), flush=True)
"""

#: Writes one message, then ``{bad}`` (a line written as given), then waits to be killed.
THEN_BAD = r"""
import sys, time
sys.stdout.buffer.write(b'{"jsonrpc": "2.0", "method": "first", "params": {}}\n' + {bad})
sys.stdout.flush()
time.sleep(60)
"""


def agent(code: str, **names: Any) -> tuple[str, list[str]]:
    """A fake agent: this Python running ``code`` (with ``{name}`` filled in from ``names``)."""
    for name, value in names.items():
        code = code.replace("{" + name + "}", value)
    return sys.executable, ["-c", code]


@pytest.fixture(autouse=True)
def nothing_left_running() -> Iterator[None]:
    """Every test ends with no child process of its own left (each agent was stopped and reaped)."""
    with no_new_children():
        yield


async def test_messages_go_both_ways_one_a_line() -> None:
    wire = await AgentWire.start(*agent(ECHO))
    try:
        sent = [
            {"jsonrpc": "2.0", "id": n, "method": "echo", "params": {"n": n, "text": "é\n\u2028\ud800"}}
            for n in range(3)
        ]
        for message in sent:
            await wire.send(message)
        received = [await wire.receive() for _ in sent]
        assert [m and m["result"]["n"] for m in received] == [0, 1, 2]
        assert received[0]
        assert received[0]["result"]["text"] == "é\n\u2028\ud800"  # the newline stayed in its line
    finally:
        await wire.close()
    assert wire.returncode == 0  # it ended on EOF: no signal was needed
    assert await wire.receive() is None
    assert await wire.receive() is None
    with pytest.raises(AgentWireError, match="was closed"):
        await wire.send({"jsonrpc": "2.0", "method": "late"})


async def test_many_messages_keep_their_order_past_the_read_ahead() -> None:
    wire = await AgentWire.start(
        *agent(
            "import sys\nsys.stdout.writelines("
            '\'{"jsonrpc":"2.0","method":"n","params":{"n":%d}}\\n\' % n for n in range(20000))'
        )
    )
    try:
        await asyncio.sleep(0.3)  # let the reader run ahead until it waits for room
        numbers = []
        for _ in range(20000):
            message = await wire.receive()
            assert message is not None
            numbers.append(message["params"]["n"])
        assert numbers == list(range(20000))
    finally:
        await wire.close()


async def test_blank_lines_and_crlf_are_taken() -> None:
    wire = await AgentWire.start(
        *agent(
            'import sys\nsys.stdout.buffer.write(b\'\\n  \\r\\n{"jsonrpc": "2.0", "id": 1, "result": null}\\r\\n\')'
            "\nsys.stdout.flush(); sys.stdin.read()"
        )
    )
    try:
        assert await wire.receive() == {"jsonrpc": "2.0", "id": 1, "result": None}
    finally:
        await wire.close()


async def test_the_agent_gets_this_environment_plus_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIW_TEST_FROM_KERNEL", "kernel value")
    monkeypatch.setenv("AIW_TEST_REPLACED", "old")
    report = (
        "import json, os\nprint(json.dumps({'jsonrpc': '2.0', 'method': 'env', 'params': {k: os.environ.get(k) for k in "
        "['AIW_TEST_FROM_KERNEL', 'AIW_TEST_REPLACED', 'AIW_TEST_GIVEN']}}), flush=True)\nimport sys; sys.stdin.read()"
    )
    wire = await AgentWire.start(*agent(report), env={"AIW_TEST_REPLACED": "new", "AIW_TEST_GIVEN": "given"})
    try:
        message = await wire.receive()
        assert message
        assert message["params"] == {
            "AIW_TEST_FROM_KERNEL": "kernel value",
            "AIW_TEST_REPLACED": "new",
            "AIW_TEST_GIVEN": "given",
        }
    finally:
        await wire.close()


async def test_the_agent_runs_in_cwd(tmp_path: Path) -> None:
    report = (
        "import json, os\nprint(json.dumps({'jsonrpc': '2.0', 'method': 'cwd', 'params': os.getcwd()}), flush=True)"
    )
    wire = await AgentWire.start(*agent(report), cwd=tmp_path)
    try:
        message = await wire.receive()
        assert message
        assert message["params"] == str(tmp_path)
    finally:
        await wire.close()


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        (b"b'hello from a log line\\n'", "a line that is not JSON to stdout: 'hello from a log line'"),
        (b"b'\\xff\\xfe not utf-8\\n'", "a line that is not JSON"),
        (b'b\'{"level": "info", "msg": "ready"}\\n\'', "JSON that is not a JSON-RPC 2.0 message"),
        (b'b\'[{"jsonrpc": "2.0", "method": "batch"}]\\n\'', "JSON that is not a JSON-RPC 2.0 message"),
        (b'b\'{"jsonrpc": "2.0", "id": 3}\\n\'', "JSON that is not a JSON-RPC 2.0 message"),
        (b'b\'{"jsonrpc": "1.0", "method": "old"}\\n\'', "JSON that is not a JSON-RPC 2.0 message"),
        (b"b'[' * 200000 + b'\\n'", "JSON nested too deeply"),
    ],
    ids=["text", "not-utf8", "json-log", "batch", "id-only", "wrong-version", "too-deep"],
)
async def test_a_line_that_is_no_message_fails_the_wire_at_once(bad: bytes, said: str) -> None:
    wire = await AgentWire.start(*agent(THEN_BAD, bad=bad.decode()))
    try:
        first = await wire.receive()
        assert first
        assert first["method"] == "first"  # what came before the bad line is delivered
        started = time.monotonic()
        with pytest.raises(AgentWireError) as raised:
            await asyncio.wait_for(wire.receive(), 5)
        assert time.monotonic() - started < 2  # at once: the agent's 60 s sleep is not waited for
        assert said in str(raised.value)
        assert str(raised.value).startswith("ACP agent '")
        await until_gone(wire.pid)  # killed at once, before any close
        assert wire.error is raised.value
        with pytest.raises(AgentWireError) as again:
            await wire.receive()
        assert again.value is raised.value
        with pytest.raises(AgentWireError) as on_send:
            await wire.send({"jsonrpc": "2.0", "method": "x"})
        assert on_send.value is raised.value
    finally:
        await wire.close()


async def test_garbage_is_quoted_short_and_redacted() -> None:
    # The quote is cut at 120 characters, inside the key's value: redacted first, nothing of the value shows.
    line = "b'" + "y" * 103 + " api_key=Qx7Vb9Lm2Np4Rs6T and more' + b' x' * 5000 + b'\\n'"
    wire = await AgentWire.start(*agent(THEN_BAD, bad=line))
    try:
        await wire.receive()
        with pytest.raises(AgentWireError) as raised:
            await wire.receive()
        message = str(raised.value)
        assert "Qx7" not in message
        assert "api_key=[redact…" in message
        assert len(message) < 400
    finally:
        await wire.close()


async def test_a_20_mib_line_fails_the_wire_without_waiting_for_its_end() -> None:
    # 20 MiB of one line, then the agent waits: the wire must not wait for a newline that comes after 60 s.
    huge = (
        'import sys, time\nsys.stdout.buffer.write(b\'{"jsonrpc":"2.0","method":"x","params":"\' + '
        "b'a' * (20 * 1024 * 1024))\nsys.stdout.flush(); time.sleep(60); print('\"}')"
    )
    wire = await AgentWire.start(*agent(huge))
    try:
        with pytest.raises(AgentWireError, match="wrote a line of more than 16 MiB to stdout"):
            await asyncio.wait_for(wire.receive(), 10)
        await until_gone(wire.pid)
    finally:
        await wire.close()


async def test_a_line_of_16_mib_is_taken() -> None:
    size = LINE_LIMIT - len('{"jsonrpc":"2.0","method":"x","params":""}')
    big = (
        'import sys\nsys.stdout.buffer.write(b\'{"jsonrpc":"2.0","method":"x","params":"\' + '
        f"b'a' * {size} + b'\"}}\\n'); sys.stdout.flush(); sys.stdin.read()"
    )
    wire = await AgentWire.start(*agent(big))
    try:
        message = await asyncio.wait_for(wire.receive(), 20)
        assert message
        assert len(message["params"]) == size
    finally:
        await wire.close()


async def test_a_crash_says_its_exit_code_and_last_output() -> None:
    crash = (
        'import sys, time\nprint(\'{"jsonrpc": "2.0", "method": "hello"}\', flush=True)\ntime.sleep(0.2)\n'
        "sys.stderr.write('Traceback (most recent call last):\\nValueError: the model is gone\\n')\nsys.exit(3)"
    )
    wire = await AgentWire.start(*agent(crash))
    try:
        assert (await wire.receive() or {}).get("method") == "hello"
        with pytest.raises(AgentWireError) as raised:
            await asyncio.wait_for(wire.receive(), 5)
        error = raised.value
        assert str(error).startswith(f"ACP agent '{sys.executable} -c import sys, time")
        assert "exited with code 3; its last output:" in str(error)
        assert str(error).endswith("ValueError: the model is gone")
        assert error.returncode == 3
        assert error.output.endswith("ValueError: the model is gone\n")
        assert wire.error is error
    finally:
        await wire.close()


async def test_an_agent_that_exits_at_start_says_so_on_send_and_on_receive() -> None:
    wire = await AgentWire.start(*agent("import sys; sys.stderr.write('error: no API key\\n'); sys.exit(1)"))
    try:
        await asyncio.sleep(0.5)
        with pytest.raises(AgentWireError, match=r"exited with code 1; its last output:\nerror: no API key$"):
            await wire.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}})
        with pytest.raises(AgentWireError, match="exited with code 1"):
            await wire.receive()
    finally:
        await wire.close()


async def test_an_exit_without_output_and_a_kill_by_signal_say_so() -> None:
    quiet = await AgentWire.start(*agent("pass"))
    killed = await AgentWire.start(*agent("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"))
    try:
        with pytest.raises(AgentWireError, match=r"exited with code 0 \(it wrote nothing to stderr\)$"):
            await quiet.receive()
        with pytest.raises(AgentWireError, match="was killed by SIGSEGV"):
            await killed.receive()
        assert killed.returncode == -11
    finally:
        await quiet.close()
        await killed.close()


async def test_keys_in_its_output_are_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIW_TEST_DB_PASSWORD", "hunter2-very-secret")
    leak = (
        "import os, sys\nsys.stderr.write('key sk' + '-ant-api03-' + 'Z' * 40 + '\\n')\n"
        "sys.stderr.write('db ' + os.environ['AIW_TEST_DB_PASSWORD'] + '\\n')\n"
        "sys.stderr.write('given ' + os.environ['AIW_TEST_OWN'] + '\\n')\n"
        "sys.stderr.write('token ' + 'mcp-token-1234567' + '\\n')\nsys.exit(2)"
    )
    wire = await AgentWire.start(
        *agent(leak),
        env={"AIW_TEST_OWN_API_KEY": "own-key-value-42", "AIW_TEST_OWN": "own-key-value-42"},
        secrets=["mcp-token-1234567"],
    )
    try:
        with pytest.raises(AgentWireError) as raised:
            await wire.receive()
        text = str(raised.value) + raised.value.output + wire.output()
        for secret in ("ZZZZZZZZ", "hunter2-very-secret", "own-key-value-42", "mcp-token-1234567"):
            assert secret not in text
        assert "db [redacted]" in wire.output()
        assert "token [redacted]" in wire.output()
    finally:
        await wire.close()


async def test_a_chatty_agent_never_blocks_and_its_last_64_kb_are_kept_from_a_line_start() -> None:
    # 8 MB on stderr before its message: a pipe nobody read would block it after 64 KB.
    chatty = (
        "import sys\nfor n in range(100000): sys.stderr.write('log line %06d ' % n + 'x' * 64 + '\\n')\n"
        'print(\'{"jsonrpc": "2.0", "method": "done"}\', flush=True)\nsys.stdin.read()'
    )
    wire = await AgentWire.start(*agent(chatty))
    try:
        message = await asyncio.wait_for(wire.receive(), 20)
        assert message
        assert message["method"] == "done"
        await asyncio.sleep(0.1)
        kept = wire.output()
        assert STDERR_KEPT - 100 <= len(kept) <= STDERR_KEPT
        assert kept.startswith("log line ")
        assert kept.endswith("log line 099999 " + "x" * 64 + "\n")
    finally:
        await wire.close()


async def test_a_long_stderr_line_keeps_its_end() -> None:
    # 200 KB with no newline, then a last word: the tail is cut after a space, not dropped for want of a line start.
    code = "import sys\nsys.stderr.write('word ' * 40000 + 'the-end')\nsys.exit(1)"
    wire = await AgentWire.start(*agent(code))
    try:
        with pytest.raises(AgentWireError, match=r"the-end$"):
            await wire.receive()
        kept = wire.output()
        assert STDERR_KEPT - 10 <= len(kept) <= STDERR_KEPT
        assert kept.startswith("word word")
    finally:
        await wire.close()


async def test_close_is_quick_while_unread_messages_wait() -> None:
    flood = (
        'import sys\nsys.stdout.writelines(\'{"jsonrpc":"2.0","method":"n"}\\n\' for _ in range(5000))\n'
        "sys.stdout.flush(); sys.stdin.read()"
    )
    wire = await AgentWire.start(*agent(flood))
    await asyncio.sleep(0.5)  # the reader has filled its read-ahead and waits; nobody receives
    started = time.monotonic()
    await wire.close()
    assert time.monotonic() - started < 1
    assert wire.returncode == 0


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("claude-code-acp-not-here", "ACP agent 'claude-code-acp-not-here' is not installed (not found on PATH)"),
        ("/nowhere/agent", "ACP agent '/nowhere/agent' is not installed (no such file)"),
    ],
)
async def test_an_agent_that_is_not_installed_is_named(command: str, said: str) -> None:
    with pytest.raises(AgentWireError) as raised:
        await AgentWire.start(command, ["--acp"])
    assert str(raised.value) == said


async def test_an_agent_that_cannot_run_or_has_no_directory(tmp_path: Path) -> None:
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\n")
    with pytest.raises(AgentWireError, match="cannot be run: permission denied"):
        await AgentWire.start(script)
    with pytest.raises(AgentWireError, match=r"its working directory '.*missing' does not exist"):
        await AgentWire.start(*agent("pass"), cwd=tmp_path / "missing")


@pytest.mark.parametrize(
    ("args", "env"),
    [("--acp", None), ([1], None), ((), {"A": 1})],
    ids=["args-string", "args-int", "env-int"],
)
async def test_bad_arguments_are_refused_before_anything_runs(args: Any, env: Any) -> None:
    with pytest.raises(TypeError):
        await AgentWire.start("python", args, env=env)


#: Starts a grandchild that inherits the agent's stdout and stderr, says its pid, then waits (or exits: ``{then}``).
FORKS = r"""
import json, subprocess, sys, time
child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])
print(json.dumps({'jsonrpc': '2.0', 'method': 'child', 'params': child.pid}), flush=True)
{then}
"""


async def test_close_ends_a_grandchild_that_holds_the_pipes() -> None:
    wire = await AgentWire.start(*agent(FORKS, then="sys.stdin.read()"))
    message = await wire.receive()
    assert message is not None
    grandchild = message["params"]
    started = time.monotonic()
    await wire.close()
    assert time.monotonic() - started < 1  # it exits on EOF; its child is killed, not waited for
    assert gone(wire.pid)
    await until_gone(grandchild, 1)


async def test_an_exit_is_seen_though_a_grandchild_holds_the_pipes() -> None:
    wire = await AgentWire.start(*agent(FORKS, then="sys.stderr.write('bye\\n'); sys.exit(5)"))
    try:
        message = await wire.receive()
        assert message is not None
        with pytest.raises(AgentWireError, match="exited with code 5; its last output:\nbye"):
            await asyncio.wait_for(wire.receive(), 5)
        await until_gone(message["params"])  # the wire killed the group: the pipes closed
    finally:
        started = time.monotonic()
        await wire.close()
        assert time.monotonic() - started < 1


async def test_an_agent_that_closes_stdout_but_lives_is_stopped() -> None:
    wire = await AgentWire.start(*agent("import os, time; os.close(1); time.sleep(60)"))
    try:
        with pytest.raises(AgentWireError, match="closed its stdout but did not exit"):
            await asyncio.wait_for(wire.receive(), 5)
        await until_gone(wire.pid)
    finally:
        await wire.close()


async def test_an_agent_that_ignores_eof_gets_sigterm_after_2_s() -> None:
    wire = await AgentWire.start(*agent("import time; time.sleep(60)"))
    started = time.monotonic()
    await wire.close()
    assert 1.9 < time.monotonic() - started < 3.5
    assert wire.returncode == -15


@pytest.mark.slow
async def test_an_agent_that_ignores_eof_and_sigterm_gets_sigkill_after_2_s_more() -> None:
    stubborn = 'import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint(\'{"jsonrpc":"2.0","method":"up"}\', flush=True)\ntime.sleep(60)'
    wire = await AgentWire.start(*agent(stubborn))
    await wire.receive()  # its handler is set
    started = time.monotonic()
    await wire.close()
    assert 3.9 < time.monotonic() - started < 5.5
    assert wire.returncode == -9


async def test_close_is_safe_twice_at_once_and_when_cancelled() -> None:
    wire = await AgentWire.start(*agent("import time; time.sleep(60)"))
    first = asyncio.ensure_future(wire.close())
    await asyncio.sleep(0.1)
    first.cancel()  # the close goes on
    await asyncio.gather(wire.close(), wire.close())
    assert gone(wire.pid)
    assert first.cancelled()


async def test_a_receive_waiting_when_the_wire_closes_returns_none() -> None:
    wire = await AgentWire.start(*agent(ECHO))
    waiting = asyncio.ensure_future(wire.receive())
    await asyncio.sleep(0.1)
    await wire.close()
    assert await asyncio.wait_for(waiting, 1) is None


#: A tiny agent on the SDK's agent side: echoes a prompt as a message chunk, or crashes on "crash".
SDK_AGENT = r"""
import asyncio, os, sys
from acp import PROTOCOL_VERSION, Agent, InitializeResponse, NewSessionResponse, PromptResponse, run_agent
from acp import update_agent_message_text

class Tiny(Agent):
    def on_connect(self, conn):
        self.conn = conn

    async def initialize(self, protocol_version, client_capabilities=None, client_info=None, **kwargs):
        return InitializeResponse(protocol_version=PROTOCOL_VERSION)

    async def new_session(self, cwd, additional_directories=None, mcp_servers=None, **kwargs):
        return NewSessionResponse(session_id="s-" + os.path.basename(cwd))

    async def prompt(self, session_id, prompt, **kwargs):
        text = "".join(block.text for block in prompt)
        if text == "crash":
            sys.stderr.write("fatal: out of tokens\n")
            sys.stderr.flush()
            os._exit(4)
        await self.conn.session_update(session_id, update_agent_message_text("echo: " + text))
        return PromptResponse(stop_reason="end_turn")

asyncio.run(run_agent(Tiny()))
"""


async def test_the_sdk_connects_over_the_wire(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    acp = pytest.importorskip("acp")

    class Recorder(acp.Client):  # type: ignore[misc]
        def __init__(self) -> None:
            self.updates: list[Any] = []

        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            self.updates.append((session_id, update))

    client = Recorder()
    wire = await AgentWire.start(*agent(SDK_AGENT), cwd=tmp_path)
    conn = acp.connect_to_agent(client, wire)
    try:
        initialized = await asyncio.wait_for(conn.initialize(protocol_version=acp.PROTOCOL_VERSION), 20)
        assert initialized.protocol_version == acp.PROTOCOL_VERSION
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        assert session.session_id == "s-" + tmp_path.name
        response = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("hi")])
        assert response.stop_reason == "end_turn"
        assert [(sid, update.content.text) for sid, update in client.updates] == [(session.session_id, "echo: hi")]
        # A crash mid-turn: the SDK says only "Connection closed"; the wire says who, how and its last output.
        with caplog.at_level(logging.DEBUG), pytest.raises(ConnectionError):
            await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=[acp.text_block("crash")]), 10)
        assert wire.error is not None
        assert str(wire.error).endswith("exited with code 4; its last output:\nfatal: out of tokens")
        assert "Receive loop failed" not in caplog.text  # the SDK's traceback of the wire's own error is dropped
    finally:
        await conn.close()
        await wire.close()


async def test_closing_the_sdk_connection_ends_an_sdk_agent_on_eof(tmp_path: Path) -> None:
    acp = pytest.importorskip("acp")

    class Silent(acp.Client):  # type: ignore[misc]
        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            pass

    wire = await AgentWire.start(*agent(SDK_AGENT), cwd=tmp_path)
    try:
        conn = acp.connect_to_agent(Silent(), wire)
        await asyncio.wait_for(conn.initialize(protocol_version=acp.PROTOCOL_VERSION), 20)
        started = time.monotonic()
        await conn.close()  # closes the wire: EOF, and the agent's run_agent returns
        assert time.monotonic() - started < 1.5
        assert wire.returncode == 0
        assert wire.error is None
    finally:
        await wire.close()


async def test_an_agent_never_closed_is_killed_when_python_exits() -> None:
    # A kernel that shuts down with a chat's agent still running: the agent goes with it.
    script = (
        "import asyncio, sys\nfrom ai_widgets.integrations._acp_wire import AgentWire\n"
        "async def main():\n"
        "    wire = await AgentWire.start(sys.executable, ['-c', 'import time; time.sleep(60)'])\n"
        "    print(wire.pid, flush=True)\n"
        "asyncio.run(main())\n"
    )
    host = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, stdout=asyncio.subprocess.PIPE, cwd=Path(__file__).parents[2]
    )
    out, _ = await asyncio.wait_for(host.communicate(), 20)
    assert host.returncode == 0
    await until_gone(int(out), 2)


async def test_a_send_blocked_on_an_agent_that_never_reads_ends_with_the_close() -> None:
    wire = await AgentWire.start(*agent("import time; time.sleep(60)"))
    sending = asyncio.ensure_future(wire.send({"jsonrpc": "2.0", "method": "big", "params": "x" * 4_000_000}))
    await asyncio.sleep(0.2)
    assert not sending.done()  # the pipe is full: the agent reads nothing
    started = time.monotonic()
    await wire.close()  # EOF cannot get through; SIGTERM after 2 s
    with pytest.raises(AgentWireError, match="cannot write to ACP agent"):
        await asyncio.wait_for(sending, 1)
    assert time.monotonic() - started < 3.5
