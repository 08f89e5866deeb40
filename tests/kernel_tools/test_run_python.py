"""KernelTools.run_python in a plain dict namespace, through a session: outputs, the value, errors, stops, input(),
the model's bounded text and read_output."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from typing import Any

import pytest

from ai_widgets import ChatSession, MessageStatus, ToolCallPart, ToolCallState, ToolInvocation
from ai_widgets.kernel import KernelTools, _cell
from ai_widgets.kernel._shell import shell_escapes
from ai_widgets.outcome import CellRun, ToolOutcome
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
from tests.helpers import NeverAsk, wait_for


def run(code: str, call_id: str = "call_1") -> ScriptedReply:
    return ScriptedReply(tool_calls=(ScriptedToolCall(name="run_python", arguments={"code": code}, id=call_id),))


async def ask(tools: KernelTools, *codes: str, approve: bool = True) -> list[ToolCallPart]:
    """One turn that runs each code in turn, every call allowed; the parts of its calls."""
    script: list[Any] = [run(code, f"call_{n}") for n, code in enumerate(codes, 1)]
    session = ChatSession(ScriptedTransport([*script, "done"]), tools=[tools], approval_policy=NeverAsk())
    reply = await session.send("go")
    assert reply.status is MessageStatus.COMPLETED
    return [part for message in session.messages for part in message.tool_calls]


def cell_of(part: ToolCallPart) -> CellRun:
    assert part.outcome is not None
    assert part.outcome.cell is not None
    return part.outcome.cell


def told(part: ToolCallPart) -> str:
    assert part.outcome is not None
    return part.outcome.model_content()


# --- outputs ------------------------------------------------------------------------------------------------------


async def test_prints_and_the_value_come_in_order_and_variables_stay() -> None:
    namespace: dict[str, Any] = {}
    [part] = await ask(
        KernelTools(namespace),
        "import sys\nprint('one')\nprint('two', file=sys.stderr)\nprint('three')\nx = 21\nx * 2",
    )
    assert part.state is ToolCallState.COMPLETED
    cell = cell_of(part)
    assert [(o.kind, o.name, o.text) for o in cell.outputs[:3]] == [
        ("stream", "stdout", "one\n"),
        ("stream", "stderr", "two\n"),
        ("stream", "stdout", "three\n"),
    ]
    result = cell.outputs[3]
    assert result.kind == "result"
    assert result.display is not None
    assert result.display.data["text/plain"] == "42"
    assert namespace["x"] == 21
    assert told(part) == "one\ntwo\nthree\nOut: 42\nChanged: created sys, x."
    assert (cell.created, cell.rebound, cell.deleted, cell.mutated) == (("sys", "x"), (), (), ())


async def test_a_none_value_and_an_assignment_show_no_result() -> None:
    [first, second] = await ask(KernelTools({}), "y = 1", "None")
    assert cell_of(first).outputs == ()
    assert cell_of(second).outputs == ()
    assert told(first) == "The code ran and printed nothing.\nChanged: created y."
    assert told(second) == "The code ran and printed nothing.\nNo variables changed."


async def test_a_frame_value_is_shown_as_a_notebook_shows_it_and_told_as_attach_does() -> None:
    pytest.importorskip("pandas")
    [part] = await ask(KernelTools({}), "import pandas as pd\npd.DataFrame({'a': range(100), 'b': 'x'})")
    result = cell_of(part).outputs[-1]
    assert result.display is not None
    assert "text/html" in result.display.data
    assert "100 rows" in told(part) or "rows" in told(part)
    assert told(part).count("\n") < 60  # the bounded view, not the whole frame


async def test_a_figure_the_code_draws_comes_as_an_image_and_is_closed() -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    [part] = await ask(KernelTools({}), "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nprint('drawn')")
    cell = cell_of(part)
    assert [o.kind for o in cell.outputs] == ["stream", "display"]
    assert cell.images()
    assert cell.images()[0][0] == "image/png"
    assert "(1 image sent with this result)" in told(part)
    assert plt.get_fignums() == before


async def test_a_run_keeps_the_figures_that_fit_its_budget_and_says_how_many_it_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.setattr(_cell, "MAX_DISPLAY_CHARS_IN_ALL", 40_000)  # a figure of this size is about 15,000
    code = "import matplotlib.pyplot as plt\nfor n in range(6):\n    plt.figure(figsize=(3, 2)).gca().plot([n, 1, n])"
    [part] = await ask(KernelTools({}), code)
    kept = [o for o in cell_of(part).outputs if o.kind == "display"]
    assert 1 <= len(kept) < 6
    assert sum(len(o.display.data["image/png"]) for o in kept if o.display is not None) <= 40_000
    assert f"({6 - len(kept)} more display outputs were left out)" in told(part)


async def test_prints_of_other_threads_are_not_the_runs(capsys: pytest.CaptureFixture[str]) -> None:
    gate = threading.Event()
    namespace: dict[str, Any] = {"gate": gate}
    tools = KernelTools(namespace)
    session = ChatSession(
        ScriptedTransport([run("print('inside')\ngate.wait(5)\nprint('after')"), "done"]),
        tools=[tools],
        approval_policy=NeverAsk(),
    )
    task = asyncio.create_task(session.send("go"))
    await wait_for(lambda: bool(session.messages) and any(m.tool_calls for m in session.messages))
    await asyncio.sleep(0.1)
    print("outside")  # the kernel's own output, from another thread: never the run's
    gate.set()
    await task
    [part] = [p for m in session.messages for p in m.tool_calls]
    assert [o.text for o in cell_of(part).outputs] == ["inside\nafter\n"]
    assert "outside" in capsys.readouterr().out


async def test_the_process_streams_and_input_are_put_back_after_a_run() -> None:
    import builtins

    before = (sys.stdout, sys.stderr, builtins.input)
    await ask(KernelTools({}), "print('x')")
    assert (sys.stdout, sys.stderr, builtins.input) == before


# --- errors -------------------------------------------------------------------------------------------------------


async def test_an_error_fails_the_call_with_the_codes_own_frames() -> None:
    [part] = await ask(KernelTools({}), "print('before')\ndef f():\n    return 1 / 0\nf()")
    assert part.state is ToolCallState.FAILED
    cell = cell_of(part)
    assert [o.kind for o in cell.outputs] == ["stream", "error"]
    error = cell.outputs[-1].text
    assert "line 4 of the code" in error
    assert "line 3 of the code, in f" in error
    assert "ZeroDivisionError: division by zero" in error
    assert "ai_widgets" not in error
    assert "threading" not in error
    assert "ZeroDivisionError" in told(part)
    assert "ai_widgets" not in told(part)


async def test_a_syntax_error_says_where() -> None:
    [part] = await ask(KernelTools({}), "x = (1,\n")
    assert part.state is ToolCallState.FAILED
    assert "SyntaxError" in told(part)


@pytest.mark.parametrize(
    "code", ["import sys\nsys.exit(3)", "raise SystemExit", "raise KeyboardInterrupt", "exit()", "quit()"]
)
async def test_exits_end_the_code_never_the_session(code: str) -> None:
    namespace: dict[str, Any] = {}
    [part, after] = await ask(KernelTools(namespace), code, "print('still here')")
    assert part.state is ToolCallState.FAILED
    assert cell_of(part).outputs[-1].kind == "error"
    assert after.state is ToolCallState.COMPLETED
    assert cell_of(after).outputs[0].text == "still here\n"


async def test_rebinding_print_input_display_and_chat_does_not_break_the_runs() -> None:
    namespace: dict[str, Any] = {}
    [first, second] = await ask(
        KernelTools(namespace),
        "print = None\ninput = None\ndisplay = None\nget_ipython = None\nchat = None\nexec = None",
        "import sys\nsys.stdout.write('fine\\n')\ndel print\nprint('and print again')",
    )
    assert first.state is ToolCallState.COMPLETED
    assert [o.text for o in cell_of(second).outputs] == ["fine\nand print again\n"]


async def test_top_level_await_runs_as_in_a_notebook_and_gives_its_value() -> None:
    namespace: dict[str, Any] = {}
    [part] = await ask(
        KernelTools(namespace), "import asyncio\nawait asyncio.sleep(0.01)\nx = 3\nawait asyncio.sleep(0, x + 1)"
    )
    assert part.state is ToolCallState.COMPLETED
    assert "Out: 4" in told(part)
    assert namespace["x"] == 3


# --- stopping -----------------------------------------------------------------------------------------------------


async def start_loop(tools: KernelTools, code: str) -> tuple[ChatSession, asyncio.Task[Any], ToolCallPart]:
    session = ChatSession(ScriptedTransport([run(code), "after"]), tools=[tools], approval_policy=NeverAsk())
    task = asyncio.create_task(session.send("loop"))
    await wait_for(lambda: any(p.state is ToolCallState.RUNNING for m in session.messages for p in m.tool_calls))
    [part] = [p for m in session.messages for p in m.tool_calls]
    await asyncio.sleep(0.2)
    return session, task, part


LOOP = "n = 0\nprint('looping')\nwhile True:\n    n += 1\n"


async def test_cancel_stops_a_pure_python_loop_within_a_second_and_says_where() -> None:
    namespace: dict[str, Any] = {}
    session, task, part = await start_loop(KernelTools(namespace), LOOP)
    started = time.monotonic()
    session.cancel(part.tool_call_id)
    await wait_for(lambda: part.state.terminal, timeout=5)
    assert time.monotonic() - started < 1.0
    assert part.state is ToolCallState.CANCELLED
    cell = cell_of(part)
    assert cell.stopped_at in ("line 3 of the code", "line 4 of the code")
    assert cell.outputs[0].text == "looping\n"
    assert "Cancelled by the person" in told(part)
    assert f"Stopped at {cell.stopped_at}." in told(part)
    await task
    n = namespace["n"]
    await asyncio.sleep(0.1)
    assert namespace["n"] == n > 0  # the loop is over, not running on


async def test_stop_stops_the_code_and_the_turn() -> None:
    namespace: dict[str, Any] = {}
    session, task, part = await start_loop(KernelTools(namespace), LOOP)
    started = time.monotonic()
    session.stop()
    reply = await task
    assert time.monotonic() - started < 1.0
    assert reply.status is MessageStatus.CANCELLED
    assert part.state is ToolCallState.CANCELLED
    assert cell_of(part).stopped_at is not None
    n = namespace["n"]
    await asyncio.sleep(0.1)
    assert namespace["n"] == n


async def test_a_timeout_stops_the_code_and_the_call_ends_cancelled() -> None:
    tools = KernelTools({}, timeout=0.3)
    started = time.monotonic()
    [part] = await ask(tools, LOOP)
    assert time.monotonic() - started < 2.0
    assert part.state is ToolCallState.CANCELLED
    assert "longer than timeout=0.3 seconds" in told(part)
    assert cell_of(part).stopped_at is not None


async def test_the_codes_own_except_does_not_swallow_a_stop() -> None:
    namespace: dict[str, Any] = {}
    code = "caught = 0\nwhile True:\n    try:\n        while True:\n            pass\n    except Exception:\n        caught += 1\n"
    session, task, part = await start_loop(KernelTools(namespace), code)
    session.cancel(part.tool_call_id)
    await wait_for(lambda: part.state.terminal, timeout=3)
    assert part.state is ToolCallState.CANCELLED
    assert namespace["caught"] == 0
    await task


async def test_a_blocking_call_stops_when_it_returns_and_the_call_says_so() -> None:
    session, task, part = await start_loop(KernelTools({}), "import time\ntime.sleep(1.6)\nprint('after sleep')")
    session.cancel(part.tool_call_id)
    await wait_for(lambda: part.state.terminal, timeout=3)
    assert part.state is ToolCallState.CANCELLED
    assert (cell_of(part).stopped_at or "").startswith("line 2 of the code, in a blocking call")
    await task


# --- input() ------------------------------------------------------------------------------------------------------


async def test_input_asks_the_person_in_the_card() -> None:
    namespace: dict[str, Any] = {}
    session = ChatSession(
        ScriptedTransport([run("name = input('Your name? ')\nprint('hello', name)"), "done"]),
        tools=[KernelTools(namespace)],
        approval_policy=NeverAsk(),
    )
    task = asyncio.create_task(session.send("go"))
    await wait_for(lambda: bool(session.pending_inputs))
    [part] = session.pending_inputs
    assert part.state is ToolCallState.AWAITING_INPUT
    assert part.input_request is not None
    assert part.input_request.message == "Your name?"
    session.respond(part.tool_call_id, "accept", {"answer": "Ada"})
    await task
    assert namespace["name"] == "Ada"
    assert cell_of(part).outputs[-1].text.endswith("hello Ada\n")


async def test_declining_input_raises_eof_in_the_code() -> None:
    session = ChatSession(
        ScriptedTransport([run("try:\n    input()\nexcept EOFError as e:\n    print('no answer:', e)"), "done"]),
        tools=[KernelTools({})],
        approval_policy=NeverAsk(),
    )
    task = asyncio.create_task(session.send("go"))
    await wait_for(lambda: bool(session.pending_inputs))
    [part] = session.pending_inputs
    session.respond(part.tool_call_id, "decline")
    await task
    assert "no answer" in cell_of(part).outputs[-1].text


async def test_input_with_nobody_to_ask_raises_at_once() -> None:
    tools = KernelTools({})
    run_python = (await tools.list_tools())[0]
    invocation = ToolInvocation(tool_call_id="direct", tool_name="run_python", arguments='{"code": "input()"}')
    outcome = await asyncio.wait_for(run_python.invoke(invocation), 5)
    assert not outcome.ok
    assert "nobody can answer" in (outcome.message or "")


async def test_a_stop_while_input_waits_withdraws_the_question() -> None:
    session = ChatSession(
        ScriptedTransport([run("input('?')"), "done"]), tools=[KernelTools({})], approval_policy=NeverAsk()
    )
    task = asyncio.create_task(session.send("go"))
    await wait_for(lambda: bool(session.pending_inputs))
    [part] = session.pending_inputs
    started = time.monotonic()
    session.cancel(part.tool_call_id)
    await wait_for(lambda: part.state.terminal, timeout=3)
    assert time.monotonic() - started < 1.0
    assert part.state is ToolCallState.CANCELLED
    assert session.pending_inputs == []
    await task


# --- the model's text and read_output ---------------------------------------------------------------------------


async def test_long_output_is_cut_and_read_output_gives_the_rest() -> None:
    tools = KernelTools({}, max_output_chars=1000)
    session = ChatSession(
        ScriptedTransport(
            [
                run("for i in range(2000):\n    print(f'line {i}')"),
                ScriptedReply(
                    tool_calls=(
                        ScriptedToolCall(name="read_output", arguments={"tool_call_id": "call_1", "start": 5000}),
                    )
                ),
                ScriptedReply(tool_calls=(ScriptedToolCall(name="read_output", arguments={"tool_call_id": "nope"}),)),
                "done",
            ]
        ),
        tools=[tools],
        approval_policy=NeverAsk(),
    )
    await session.send("go")
    [ran, read, unknown] = [p for m in session.messages for p in m.tool_calls]
    text = told(ran)
    assert len(text) < 1400
    assert text.startswith("line 0\n")
    assert text.rstrip().split("\n")[-3].endswith("line 1999")
    assert text.rstrip().split("\n")[-2] == "Changed: created i."
    assert 'read_output("call_1"' in text
    assert read.state is ToolCallState.COMPLETED
    whole = "".join(f"line {i}\n" for i in range(2000))
    assert told(read).split("\n", 1)[1] == whole[5000:6000]
    assert "Characters 5,000 to 6,000" in told(read)
    assert unknown.state is ToolCallState.FAILED
    assert "no run_python call 'nope'" in told(unknown)
    assert tools.read_output("call_1", 0).split("\n", 1)[1] == whole[:1000]


async def test_huge_output_keeps_a_bounded_head_and_tail() -> None:
    [part] = await ask(KernelTools({}), "import sys\nfor i in range(400_000):\n    sys.stdout.write(f'{i:07d}\\n')")
    cell = cell_of(part)
    kept = sum(len(o.text) for o in cell.outputs)
    assert kept < 700_000
    assert cell.outputs[0].text.startswith("0000000\n")
    assert cell.outputs[-1].text.endswith("0399999\n")
    assert any("characters left out" in o.text for o in cell.outputs)


# --- approval, edits and refusals ---------------------------------------------------------------------------------


async def test_run_python_asks_and_runs_the_edited_code_saying_so() -> None:
    namespace: dict[str, Any] = {}
    session = ChatSession(ScriptedTransport([run("x = 'model'"), "done"]), tools=[KernelTools(namespace)])
    task = asyncio.create_task(session.send("go"))
    await wait_for(lambda: bool(session.pending_approvals))
    [part] = session.pending_approvals
    session.approve(part.tool_call_id, "approved", arguments={"code": "x = 'person'"})
    await task
    assert namespace["x"] == "person"
    cell = cell_of(part)
    assert cell.edited
    assert cell.code == "x = 'person'"


async def test_the_definitions() -> None:
    tools = KernelTools({})
    run_python, read_output, listing, inspecting = await tools.list_tools()
    assert (listing.name, inspecting.name) == ("list_variables", "inspect_variable")
    assert listing.definition.risk.value == inspecting.definition.risk.value == "read_only"
    assert run_python.definition.risk.value == "destructive"
    assert run_python.definition.code_arguments == {"code": "python"}
    assert run_python.definition.sequential
    assert read_output.definition.risk.value == "read_only"
    assert "refused" in run_python.definition.description
    tools.allow_shell = True
    assert "allowed" in (await tools.list_tools())[0].definition.description


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"ask": "sometimes"}, "ask must be"),
        ({"max_output_chars": 10}, "max_output_chars"),
        ({"timeout": 0}, "timeout"),
        ({"timeout": True}, "timeout"),
    ],
)
def test_bad_options_are_refused(options: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        KernelTools({}, **options)


def test_ask_is_settable_and_checked() -> None:
    tools = KernelTools({})
    tools.ask = "never"
    assert tools.ask == "never"
    with pytest.raises(ValueError, match="ask must be"):
        tools.ask = "maybe"  # type: ignore[assignment]


def test_the_namespace_defaults_to_mains_globals_outside_ipython() -> None:
    assert KernelTools().namespace is sys.modules["__main__"].__dict__


class FakeShell:
    """IPython's transform, and its aliases, without a shell instance (which would be the process's)."""

    def __init__(self) -> None:
        from IPython.core.inputtransformer2 import TransformerManager

        self._transformer = TransformerManager()

    def transform_cell(self, code: str) -> str:
        return str(self._transformer.transform_cell(code))

    class alias_manager:
        @staticmethod
        def is_alias(name: str) -> bool:
            return name in ("ls", "cat")


@pytest.mark.parametrize(
    ("code", "found"),
    [
        ("!ls -l", ["!ls -l"]),
        ("files = !ls", ["!ls"]),
        ("%%bash\necho hi", ["%%bash"]),
        ("%%script sh\necho hi", ["%%script"]),
        ("%sx ls", ["%sx ls"]),
        ("%system ls", ["%system ls"]),
        ("%pip install x", ["%pip install x"]),
        ("%ls", ["%ls"]),
        ("%%capture\n!rm -rf /tmp/x", ["!rm -rf /tmp/x"]),
        ("%time !ls", ["!ls"]),
        ("get_ipython().system('ls')", ["!ls"]),
        ("get_ipython().getoutput('ls')", ["!ls"]),
        ("x = 1\n%timeit x + 1\nprint(x)", []),
        ("import os\nos.getcwd()", []),
    ],
)
def test_shell_escapes_are_found(code: str, found: list[str]) -> None:
    assert shell_escapes(code, FakeShell()) == found


async def test_plain_python_has_no_magics_and_a_shell_call_is_refused() -> None:
    ran: dict[str, Any] = {}
    [part] = await ask(KernelTools(ran), "ran = True\nget_ipython().system('ls')")
    assert part.state is ToolCallState.FAILED
    assert "Refused, and nothing ran" in told(part)
    assert "!ls" in told(part)
    assert "ran" not in ran
    outcome: ToolOutcome | None = part.outcome
    assert outcome is not None
    assert outcome.cell is not None
    assert outcome.cell.outputs == ()


def test_the_output_store_is_bounded_and_says_what_it_no_longer_keeps() -> None:
    from ai_widgets.kernel._outputs import OutputStore

    store = OutputStore(max_runs=2, max_chars=100)
    store.put("a", "x" * 10)
    store.put("b", "y" * 10)
    store.put("c", "z" * 95)  # over max_chars with b: b goes too, c (the newest) stays
    with pytest.raises(KeyError, match="no longer kept"):
        store.read("a", 0, 10)
    with pytest.raises(KeyError, match="no longer kept"):
        store.read("b", 0, 10)
    assert store.read("c", 90, 10) == "[Characters 90 to 95 of 95: the end.]\nzzzzz"
    assert "nothing from character 200" in store.read("c", 200, 10)
    with pytest.raises(ValueError, match="start must be 0 or more"):
        store.read("c", -1, 10)


def test_runs_leave_no_pending_stop_behind_even_under_a_profiler() -> None:
    """Taking back a stop (``PyThreadState_SetAsyncExc(id, NULL)``) left the interpreter's pending flag set: under
    cProfile the next thread never started. Runs under a profiler, in a process of their own, must all end."""
    import subprocess

    script = (
        "import cProfile\n"
        "from ai_widgets.kernel._cell import CellRunner\n"
        "profile = cProfile.Profile()\n"
        "profile.enable()\n"
        "for n in range(100):\n"
        "    CellRunner('x = 1', {}, filename=f'<run {n}>').start().result(10)\n"
        "profile.disable()\n"
        "print('ran')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout == "ran\n", done.stderr


async def test_a_secrets_value_the_code_prints_shows_or_raises_reaches_neither_the_model_nor_the_card(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "env-token-4711-abcdef")
    namespace: dict[str, Any] = {"db_password": "hunter2-correct-horse", "monkey": "banana-split-value"}
    tools = KernelTools(namespace)
    [printed, raised] = await ask(
        tools,
        "import os\nprint(db_password, monkey)\nprint(os.environ['SOME_SERVICE_TOKEN'])\n{'pw': db_password}",
        "raise ValueError('the password is ' + db_password)",
    )
    for part in (printed, raised):
        assert part.outcome is not None
        kept = part.outcome.model_dump_json() + tools.read_output(part.tool_call_id)
        assert "hunter2-correct-horse" not in kept
        assert "env-token-4711-abcdef" not in kept
        assert "[redacted]" in kept
    assert "banana-split-value" in told(printed)  # not a secret's name: shown as printed
    assert namespace["db_password"] == "hunter2-correct-horse"  # the value itself is the code's to use
