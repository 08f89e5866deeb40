"""``_quick_init.quick_init``: the faster ``__init__`` of the events and changes made per delta builds the same
frozen instances as the one dataclasses generates, and refuses a class it cannot build so."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pytest

from ai_widgets._quick_init import quick_init
from ai_widgets.changes import PartAdded, TextAppended
from ai_widgets.events import ReasoningDelta, TextDelta


@dataclass(frozen=True, slots=True)
class Plain:
    a: int
    b: str = "b"
    c: object = None


@quick_init
@dataclass(frozen=True, slots=True)
class Quick:
    a: int
    b: str = "b"
    c: object = None


@pytest.mark.parametrize(
    ("args", "kwargs"), [((1,), {}), ((1, "x"), {}), ((1,), {"c": (2,)}), ((), {"a": 1, "b": "y", "c": None})]
)
def test_it_builds_what_the_generated_init_builds(args: tuple[object, ...], kwargs: dict[str, object]) -> None:
    quick, plain = Quick(*args, **kwargs), Plain(*args, **kwargs)  # type: ignore[arg-type]
    assert dataclasses.astuple(quick) == dataclasses.astuple(plain)
    assert repr(quick) == repr(plain).replace("Plain", "Quick")
    assert quick == Quick(*args, **kwargs)  # type: ignore[arg-type]
    assert hash(quick) == hash(Quick(*args, **kwargs))  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.a = 2  # type: ignore[misc]


def test_wrong_arguments_fail_as_they_would() -> None:
    with pytest.raises(TypeError):
        Quick()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Quick(1, "x", None, 4)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Quick(1, d=2)  # type: ignore[call-arg]


def test_the_hot_events_and_changes_take_it_and_stay_the_same() -> None:
    for cls in (TextDelta, ReasoningDelta, TextAppended, PartAdded):
        assert cls.__init__.__qualname__ == f"{cls.__qualname__}.__init__"
    assert ReasoningDelta("r", provider="p") == ReasoningDelta(text="r", provider="p", provider_data=None)
    assert TextAppended(None, 1, "t").patches == ()  # type: ignore[arg-type]
    assert repr(TextDelta("x")) == "TextDelta(text='x')"


def test_it_refuses_a_class_it_cannot_build() -> None:
    @dataclass(slots=True)
    class Thawed:
        a: int

    @dataclass(frozen=True)
    class Unslotted:
        a: int

    @dataclass(frozen=True, slots=True)
    class Factory:
        a: list[int] = field(default_factory=list)

    @dataclass(frozen=True, slots=True)
    class KeywordOnly:
        a: int = field(kw_only=True)

    @dataclass(frozen=True, slots=True)
    class Checked:
        a: int

        def __post_init__(self) -> None:
            pass

    for cls in (Thawed, Unslotted, Factory, KeywordOnly, Checked):
        with pytest.raises(TypeError, match="quick_init"):
            quick_init(cls)
