"""Live tools: re-running the cell that defines a ``@tool`` updates every registry holding a tool of that name from
the same place; one from another place is kept, with a ``ToolReplacementWarning``.

A "cell" here is source text run with ``exec`` under a file name of its own in a shared namespace named
``__main__``, as IPython runs a cell (ipykernel names the file after a hash of the text, so an edited cell has a new
file name). ``kernel`` fakes the little of ipykernel the place is read from: the current execute request's
``metadata.cellId`` and the execution count. Without it (plain Python, nbclient), the place is the module and the
function's qualified name.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import importlib
import sys
import threading
import types
import warnings
import weakref
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from ai_widgets import (
    ChatSession,
    Tool,
    ToolDefinition,
    ToolRegistry,
    ToolReplacementWarning,
    tool,
)
from ai_widgets.messages import ToolCallState
from ai_widgets.transports import ChatRequest, ScriptedReply, ScriptedToolCall, ScriptedTransport
from tests.helpers import wait_for


class Kernel:
    """Just enough of an IPython shell inside ipykernel for the place of a tool: ``get_ipython().kernel`` and
    ``get_ipython().compile``."""

    def __init__(self) -> None:
        self.execution_count = 1
        self.parent: dict[str, Any] = {}
        self.cells: dict[str, int] = {}  # a cell's file -> its execution count, as IPython's compiler keeps them
        self.kernel = self  # get_ipython().kernel.get_parent(...)
        self.compile = self  # get_ipython().compile.format_code_name(...)

    def get_parent(self, channel: str | None = None) -> dict[str, Any]:
        assert channel == "shell"
        return self.parent

    def format_code_name(self, name: str) -> tuple[str, str] | None:
        return ("Cell", f"In[{self.cells[name]}]") if name in self.cells else None


@pytest.fixture
def kernel(monkeypatch: pytest.MonkeyPatch) -> Kernel:
    fake = Kernel()
    module = types.ModuleType("IPython")
    module.get_ipython = lambda: fake  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", module)
    return fake


class Notebook:
    """Cells run in one ``__main__`` namespace, each compiled under a file name made from its text."""

    def __init__(self, kernel: Kernel | None = None, **names: Any) -> None:
        self.ns: dict[str, Any] = {"__name__": "__main__", "tool": tool, **names}
        self.kernel = kernel
        self.files: list[str] = []

    def run(self, source: str, *, cell_id: str | None = None, module: str = "__main__") -> dict[str, Any]:
        filename = f"/tmp/ipykernel_0/{hashlib.sha1(source.encode()).hexdigest()[:10]}.py"
        self.files.append(filename)
        self.ns["__name__"] = module
        if self.kernel is not None:
            metadata = {} if cell_id is None else {"cellId": cell_id}
            self.kernel.parent = {"header": {"msg_type": "execute_request"}, "metadata": metadata}
            self.kernel.cells[filename] = self.kernel.execution_count
        try:
            exec(compile(source, filename, "exec"), self.ns)
        finally:
            self.ns["__name__"] = "__main__"
            if self.kernel is not None:
                self.kernel.execution_count += 1
                self.kernel.parent = {}
        return self.ns


# Not get_weather: registries of other tests may still be alive (a widget lives until it is closed).
NAME = "live_weather"


def weather_cell(version: str, *, decorator: str = "@tool", name: str = NAME) -> str:
    return f'''
{decorator}
def {name}(city: str) -> str:
    """Weather, {version}."""
    return "{version} weather in " + city
'''


def description(registry: ToolRegistry, name: str = NAME) -> str:
    return registry[name].definition.description


@pytest.fixture(scope="module", autouse=True)
def _earlier_objects_set_aside() -> Iterator[None]:
    """Collects once what the tests before this module left, then sets every live object aside (``gc.freeze``), so
    that each test's collection scans only what this module made: in a process that ran many tests, a full
    collection takes about a second."""
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


@pytest.fixture(autouse=True)
def _collect() -> None:
    gc.collect()  # the registries of earlier tests, left in reference cycles


@pytest.fixture
def no_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("error", ToolReplacementWarning)
        yield


# --- the same place: replaced wherever it was handed over -----------------------------------------------------------

HANDOVERS = ["tools=[...]", "registry.register(...)", "@chat.session.tools.tool"]


@pytest.mark.parametrize("cell_id", ["A", None], ids=["cell-ids", "no-cell-ids"])
@pytest.mark.parametrize("handover", HANDOVERS)
def test_rerunning_the_cell_replaces_the_tool_however_it_was_handed_over(
    handover: str, cell_id: str | None, kernel: Kernel, no_warnings: None
) -> None:
    chat = types.SimpleNamespace(session=ChatSession(ScriptedTransport(["hi"])))
    nb = Notebook(kernel, chat=chat)
    decorator = "@chat.session.tools.tool" if handover == HANDOVERS[2] else "@tool"
    old = nb.run(weather_cell("v1", decorator=decorator), cell_id=cell_id)[NAME]
    if handover == HANDOVERS[0]:
        holder = ChatSession(ScriptedTransport(["hi"]), tools=[old]).tools
    elif handover == HANDOVERS[1]:
        holder = ToolRegistry()
        holder.register(old)
    else:
        holder = chat.session.tools
    elsewhere = ToolRegistry([old])  # the same tool handed to another chat as well
    changes: list[str] = []
    holder.subscribe(lambda _registry: changes.append("holder"))
    elsewhere.subscribe(lambda _registry: changes.append("elsewhere"))

    new = nb.run(weather_cell("v2", decorator=decorator), cell_id=cell_id)[NAME]
    assert new is not old
    assert holder[NAME] is new
    assert elsewhere[NAME] is new
    assert sorted(changes) == ["elsewhere", "holder"]  # each told once (a chat's widget refreshes its tool info)
    assert description(holder) == "Weather, v2."
    assert holder.definitions()[0].description == "Weather, v2."
    assert new("Lisbon") == "v2 weather in Lisbon"

    # The same cell with a plain @tool is the same place too.
    newer = nb.run(weather_cell("v3"), cell_id=cell_id)[NAME]
    assert holder[NAME] is newer
    assert elsewhere[NAME] is newer


def test_an_edited_cell_is_the_same_place_although_its_file_name_changes(kernel: Kernel, no_warnings: None) -> None:
    nb = Notebook(kernel)
    old = nb.run(weather_cell("v1"), cell_id="A")[NAME]
    registry = ToolRegistry([old])
    new = nb.run("import math\n" + weather_cell("v2"), cell_id="A")[NAME]
    assert nb.files[0] != nb.files[1]
    assert registry[NAME] is new


def test_a_module_reloaded_replaces_its_tools(no_warnings: None) -> None:
    nb = Notebook()
    old = nb.run(weather_cell("v1"), module="weather.tools")[NAME]
    registry = ToolRegistry([old])
    nb.run(weather_cell("v2"), module="weather.tools")
    assert description(registry) == "Weather, v2."


def test_the_case_of_the_name_does_not_matter_and_the_order_is_kept(kernel: Kernel, no_warnings: None) -> None:
    nb = Notebook(kernel)
    nb.run(weather_cell("v1", name="Live_Weather") + weather_cell("v1", name="live_time"), cell_id="A")
    registry = ToolRegistry([nb.ns["Live_Weather"], nb.ns["live_time"]])
    nb.run(weather_cell("v2", name="live_weather"), cell_id="A")
    assert registry.names() == ["live_weather", "live_time"]
    assert description(registry) == "Weather, v2."


def test_a_new_name_in_the_same_place_is_a_new_tool_not_a_rename(kernel: Kernel, no_warnings: None) -> None:
    nb = Notebook(kernel)
    registry = ToolRegistry([nb.run(weather_cell("v1"), cell_id="A")[NAME]])
    changes: list[ToolRegistry] = []
    registry.subscribe(changes.append)
    nb.run(weather_cell("v2", name="live_forecast"), cell_id="A")
    assert registry.names() == [NAME]
    assert description(registry) == "Weather, v1."
    assert changes == []


def test_a_cell_that_uses_a_function_of_another_cell_does_not_redefine_it(kernel: Kernel, no_warnings: None) -> None:
    """``tool(f)`` (or ``run_tool(f)``) in a cell that does not define ``f`` is not ``f``'s cell running again."""
    nb = Notebook(kernel)
    registry = ToolRegistry([nb.run(weather_cell("v1"), cell_id="A")[NAME]])
    nb.run(weather_cell("v2", decorator=""), cell_id="C")  # a plain function, elsewhere
    nb.run("made = tool(live_weather)", cell_id="D")
    assert description(registry) == "Weather, v1."


def test_a_function_of_a_cell_called_from_another_cell_does_not_redefine_its_tools(
    kernel: Kernel, no_warnings: None
) -> None:
    """Only the top level of the defining cell running again counts, not a function of that cell called later."""
    nb = Notebook(kernel)
    source = f'''
def plain(city: str) -> str:
    """Weather, v1."""
    return city

{NAME} = tool(name="{NAME}")(plain)
def remake():
    return tool(name="{NAME}")(plain)
'''
    registry = ToolRegistry([nb.run(source, cell_id="A")[NAME]])
    again = nb.run("again = remake()", cell_id="C")["again"]
    assert registry[NAME] is nb.ns[NAME]
    # Made away from its cell, a function's place is its module and name (the cell is known only while it runs).
    assert again._place is not None
    assert again._place.key == ("module", "__main__", "plain")


# --- another place: kept, and said so --------------------------------------------------------------------------------


def test_another_cell_warns_naming_both_and_the_chat_keeps_its_tool(kernel: Kernel) -> None:
    nb = Notebook(kernel)
    old = nb.run(weather_cell("v1"), cell_id="cell-A")[NAME]  # In [1]
    session = ChatSession(ScriptedTransport(["hi"]), tools=[old])
    second = ToolRegistry([old])
    with pytest.warns(ToolReplacementWarning) as record:
        new = nb.run(weather_cell("from B"), cell_id="cell-B-0123456789abcdef")[NAME]  # In [2]
    assert len(record) == 1  # one warning for all the registries
    message = str(record[0].message)
    assert "the tool 'live_weather' defined in cell In[2] (id cell-B-0…)" in message
    assert "did not replace the 'live_weather' from cell In[1] (id cell-A) that 2 tool registries hold" in message
    assert "chat.session.tools.register(live_weather)" in message
    assert record[0].filename == nb.files[-1]  # attributed to the cell that defined it, not to ai_widgets
    assert session.tools[NAME] is old
    assert second[NAME] is old

    # Doing what it says switches that chat.
    session.tools.register(new)
    assert description(session.tools) == "Weather, from B."
    assert second[NAME] is old


def test_another_module_warns_and_keeps() -> None:
    nb = Notebook()
    registry = ToolRegistry([nb.run(weather_cell("v1"), module="weather.tools")[NAME]])
    with pytest.warns(ToolReplacementWarning, match=r"module other\.place, live_weather .*module weather\.tools"):
        nb.run(weather_cell("v2"), module="other.place")
    assert description(registry) == "Weather, v1."


def test_a_module_of_the_package_imported_while_another_place_holds_its_tool_warns_at_the_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Before: the warning for the demo's tools skipped the package's frames into the import machinery's frozen
    ones, and warn_explicit raised ImportError ('importlib._bootstrap' is not a frozen module): importing
    ai_widgets.demo failed while any registry held a get_weather of another place."""
    nb = Notebook()
    registry = ToolRegistry([nb.run(weather_cell("mine", name="get_weather"), module="weather.tools")["get_weather"]])
    monkeypatch.delitem(sys.modules, "ai_widgets.demo", raising=False)
    with warnings.catch_warnings(record=True) as record:  # other tests' registries may hold other demo tools
        warnings.simplefilter("always", ToolReplacementWarning)
        importlib.import_module("ai_widgets.demo")
    ours = [w for w in record if "module ai_widgets.demo, get_weather" in str(w.message)]
    assert ours, [str(w.message) for w in record]
    assert all(w.category is ToolReplacementWarning and w.filename == __file__ for w in ours)  # the importer's
    assert description(registry, "get_weather") == "Weather, mine."


def test_one_warning_lists_every_other_place() -> None:
    nb = Notebook()
    first = ToolRegistry([nb.run(weather_cell("v1"), module="weather.one")[NAME]])
    with pytest.warns(ToolReplacementWarning, match="weather.two"):  # vs. first: checked elsewhere
        second = ToolRegistry([nb.run(weather_cell("v1"), module="weather.two")[NAME]])
    with pytest.warns(ToolReplacementWarning) as record:
        nb.run(weather_cell("v2"), module="weather.three")
    assert len(record) == 1
    assert (
        "did not replace the 'live_weather' that tool registries hold from other places "
        "(1 from module weather.one, live_weather; 1 from module weather.two, live_weather;"
    ) in str(record[0].message)
    assert description(first) == description(second) == "Weather, v1."


def test_a_tool_of_that_name_made_inside_a_function_is_kept_with_a_warning() -> None:
    def make() -> Tool:
        @tool
        def live_weather(city: str) -> str:
            """A factory's weather."""
            return city

        return live_weather

    registry = ToolRegistry([make()])
    with pytest.warns(ToolReplacementWarning, match=r"made inside a function"):
        Notebook().run(weather_cell("v1"))
    assert description(registry) == "A factory's weather."


def test_the_warning_shows_every_time_not_once_per_line(kernel: Kernel) -> None:
    nb = Notebook(kernel)
    registry = ToolRegistry([nb.run(weather_cell("v1"), cell_id="A")[NAME]])
    with warnings.catch_warnings(record=True) as log:
        warnings.resetwarnings()  # no filter: the default action, which shows a warning once per line of code
        for _ in range(3):
            kernel.execution_count = 7  # the same text each time, as the cell run again
            nb.run(weather_cell("B"), cell_id="B")
    assert [type(w.message) for w in log] == [ToolReplacementWarning] * 3
    assert description(registry) == "Weather, v1."


def test_the_chats_own_decorator_replaces_there_silently_and_warns_for_the_others(kernel: Kernel) -> None:
    nb = Notebook(kernel)
    old = nb.run(weather_cell("v1"), cell_id="A")[NAME]
    session = ChatSession(ScriptedTransport(["hi"]), tools=[old])
    elsewhere = ToolRegistry([old])
    nb.ns["chat_tools"] = session.tools
    with pytest.warns(ToolReplacementWarning) as record:
        new = nb.run(weather_cell("v2", decorator="@chat_tools.tool"), cell_id="B")[NAME]
    assert "from cell In[1] (id A) that 1 tool registry holds" in str(record[0].message)
    assert session.tools[NAME] is new  # registered there on purpose
    assert elsewhere[NAME] is old


# --- what is never live ----------------------------------------------------------------------------------------------


def test_tools_made_inside_a_function_never_replace_each_other(no_warnings: None) -> None:
    """A factory making one tool per chat (each with its own state) keeps them apart."""

    def make_chat(tag: str) -> ToolRegistry:
        @tool
        def delete(path: str) -> str:
            """Deletes a file."""
            return tag + path

        return ToolRegistry([delete])

    first, second = make_chat("one "), make_chat("two ")
    assert first["delete"]("x") == "one x"
    assert second["delete"]("x") == "two x"


def test_a_tool_built_from_a_definition_is_not_live(kernel: Kernel, no_warnings: None) -> None:
    nb = Notebook(kernel)
    registry = ToolRegistry([nb.run(weather_cell("v1"), cell_id="A")[NAME]])
    nb.ns.update(Tool=Tool, ToolDefinition=ToolDefinition)
    nb.run("dynamic = Tool(ToolDefinition(name='live_weather', description='Dynamic.'), lambda inv: 1)")
    assert description(registry) == "Weather, v1."


class Source:
    """A source of tools (as an MCP server is): listed before every request, never replaced by a definition."""

    def __init__(self, tools: Sequence[Tool]) -> None:
        self.tools = list(tools)

    async def list_tools(self) -> Sequence[Tool]:
        return self.tools


async def test_a_source_of_tools_is_not_touched(kernel: Kernel, no_warnings: None) -> None:
    listed = Tool(ToolDefinition(name="live_weather", description="From the server."), lambda invocation: 1)
    registry = ToolRegistry([Source([listed])])
    await registry.refresh()
    Notebook(kernel).run(weather_cell("v1"), cell_id="A")
    assert registry[NAME] is listed


# --- registries are held weakly --------------------------------------------------------------------------------------


def test_a_registry_nobody_holds_is_collected(kernel: Kernel, no_warnings: None) -> None:
    nb = Notebook(kernel)
    old = nb.run(weather_cell("v1"), cell_id="A")[NAME]
    registry = ToolRegistry([old])
    session = ChatSession(ScriptedTransport(["hi"]), tools=[old])
    refs = [weakref.ref(registry), weakref.ref(session.tools), weakref.ref(session)]
    nb.run(weather_cell("v2"), cell_id="A")  # a replacement holds nothing either
    assert registry[NAME] is nb.ns[NAME]
    del registry, session
    gc.collect()
    assert [ref() for ref in refs] == [None, None, None]
    nb.run(weather_cell("v3"), cell_id="A")  # and defining it again finds nothing to do


# --- calls: a running call keeps its tool, the next request has the new one ------------------------------------------


def weather_model(request: ChatRequest) -> ScriptedReply:
    results = request.tool_results()
    if results:
        return ScriptedReply(text=f"It says: {results[-1].outcome.value}", status=None)  # type: ignore[union-attr]
    return ScriptedReply(tool_calls=[ScriptedToolCall(name=NAME, arguments={"city": "Lisbon"})])


SLOW_CELL = '''
@tool
def live_weather(city: str) -> str:
    """Weather, {version}."""
    started.set()
    assert release.wait(5)
    return "{version} weather in " + city
'''


async def test_a_running_call_finishes_on_the_old_code_and_the_next_request_has_the_new_one(kernel: Kernel) -> None:
    started, release = threading.Event(), threading.Event()
    nb = Notebook(kernel, started=started, release=release)
    old = nb.run(SLOW_CELL.format(version="v1"), cell_id="A")[NAME]
    transport = ScriptedTransport(weather_model)
    session = ChatSession(transport, tools=[old])

    turn = asyncio.create_task(session.send("weather?"))
    assert await asyncio.to_thread(started.wait, 5)  # the old code is running, on its thread
    new = nb.run(SLOW_CELL.format(version="v2"), cell_id="A")[NAME]
    assert session.tools[NAME] is new
    release.set()
    reply = await asyncio.wait_for(turn, 10)

    assert reply.tool_calls[0].outcome is not None
    assert reply.tool_calls[0].outcome.value == "v1 weather in Lisbon"  # finished on the code it started with
    assert [r.tools[0].description for r in transport.requests] == ["Weather, v1.", "Weather, v2."]

    started.clear()
    reply = await asyncio.wait_for(session.send("and now?"), 10)
    assert reply.text == "It says: v2 weather in Lisbon"  # the next call runs the new code
    assert [r.tools[0].description for r in transport.requests[2:]] == ["Weather, v2.", "Weather, v2."]


def test_a_registry_made_not_to_warn_keeps_its_tool_quietly_and_still_follows_its_place(
    kernel: Kernel, no_warnings: None
) -> None:
    """run_tool's registries (a form for one tool) are made so: a chat's version defined elsewhere says nothing."""
    nb = Notebook(kernel)
    old = nb.run(weather_cell("v1"), cell_id="A")[NAME]
    quiet = ToolRegistry([old], warn_when_kept=False)
    nb.run(weather_cell("B"), cell_id="B")
    assert quiet[NAME] is old
    again = nb.run(weather_cell("v2"), cell_id="A")[NAME]
    assert quiet[NAME] is again


def test_methods_of_two_objects_made_tools_in_one_cell_do_not_replace_each_other(
    kernel: Kernel,
) -> None:
    """Before: ``tool(alice.balance)`` and ``tool(bob.balance)`` had one place (the method's qualified name), so
    making Bob's tool silently switched Alice's chat to Bob's account."""
    nb = Notebook(kernel, ToolRegistry=ToolRegistry)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ToolReplacementWarning)
        ns = nb.run(
            '''
class Account:
    def __init__(self, owner):
        self.owner = owner

    def balance(self, currency: str) -> str:
        """The balance."""
        return f"{self.owner}: 10 {currency}"

alices_chat = ToolRegistry([tool(Account("alice").balance)])
bobs_chat = ToolRegistry([tool(Account("bob").balance)])
''',
            cell_id="accounts",
        )
    assert ns["alices_chat"]["balance"]("EUR") == "alice: 10 EUR"
    assert ns["bobs_chat"]["balance"]("EUR") == "bob: 10 EUR"


def test_a_classmethod_tool_is_still_live(kernel: Kernel) -> None:
    """Guards what already held: a method bound to a class (not to an object) keeps its place."""
    nb = Notebook(kernel, ToolRegistry=ToolRegistry)
    cell = '''
class Rates:
    @classmethod
    def rate(cls, currency: str) -> str:
        """The rate, {version}."""
        return "{version}"

rate_tool = tool(Rates.rate)
'''
    registry = ToolRegistry([nb.run(cell.replace("{version}", "v1"), cell_id="rates")["rate_tool"]])
    nb.run(cell.replace("{version}", "v2"), cell_id="rates")
    assert registry["rate"].definition.description == "The rate, v2."


LIVE = "attack_live_weather"


def weather(version: str, risk: str = "normal") -> str:
    return f'''
@tool(risk="{risk}")
def {LIVE}(city: str) -> str:
    """Weather, {version}."""
    return "{version} weather in " + city
'''


def test_a_listener_that_raises_neither_breaks_the_cell_nor_the_other_registries(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Before: the first registry whose listener raised (a closed widget's, a bug) stopped the replacement: the cell
    defining the tool raised, and the registries after it (in no set order) kept the old tool."""
    nb = Notebook()
    old = nb.run(weather("v1"), module="attack.weather")[LIVE]
    registries = [ToolRegistry([old]) for _ in range(5)]
    told: list[int] = []
    for index, registry in enumerate(registries):
        if index % 2:
            registry.subscribe(lambda _registry: 1 / 0)
        registry.subscribe(lambda _registry, index=index: told.append(index))
    new = nb.run(weather("v2"), module="attack.weather")[LIVE]  # raised ZeroDivisionError here
    assert all(registry[LIVE] is new for registry in registries)
    assert sorted(told) == [0, 1, 2, 3, 4]  # every other listener was told too
    assert [r.getMessage() for r in caplog.records].count("an ai_widgets tool registry listener failed") == 2


async def test_what_waits_for_approval_is_what_runs_when_the_tool_is_redefined(kernel: Kernel) -> None:
    """Guards what already held: a call waiting for approval keeps the tool it was resolved with."""
    nb = Notebook(kernel)
    old = nb.run(weather("v1", risk="destructive"), cell_id="W")[LIVE]
    transport = ScriptedTransport(
        [ScriptedReply(tool_calls=[ScriptedToolCall(name=LIVE, arguments={"city": "Oslo"})]), "Done."]
    )
    session = ChatSession(transport, tools=[old])
    turn = asyncio.create_task(session.send("weather"))
    await wait_for(
        lambda: (
            bool(session.messages and session.messages[-1].tool_calls)
            and session.messages[-1].tool_calls[0].state is ToolCallState.AWAITING_APPROVAL
        ),
        timeout=10,
    )
    part = session.messages[-1].tool_calls[0]
    new = nb.run(weather("v2"), cell_id="W")[LIVE]  # redefined (and no longer destructive) while it waits
    assert session.tools[LIVE] is new
    session.approve(part.tool_call_id, "approved")
    reply = await asyncio.wait_for(turn, 10)
    assert reply.tool_calls[0].outcome is not None
    assert reply.tool_calls[0].outcome.value == "v1 weather in Oslo"  # what the person approved
