"""A faster ``__init__`` for the frozen, slotted dataclasses made once per streamed delta (events and changes)."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

__all__ = ["quick_init"]

T = TypeVar("T")


def quick_init(cls: type[T]) -> type[T]:
    """Gives ``cls``, a frozen dataclass with slots, an ``__init__`` that stores each field through its slot's own
    descriptor, where the generated one looks ``object.__setattr__`` up and calls it by name for each field (the
    price of ``frozen``). The same parameters, defaults and result at about half the cost; the instance stays frozen
    (only its construction changes).

    Raises:
        TypeError: ``cls`` is not a frozen dataclass with slots, or a field takes a default factory, is keyword-only or
            left out of ``__init__``, or the class has a ``__post_init__`` (none of them is needed where it is used).
    """
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"quick_init takes a frozen dataclass with slots, not {cls.__name__}")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"quick_init does not run {cls.__name__}.__post_init__")
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    names = [field.name for field in fields]
    for field in fields:
        if not field.init or field.kw_only or field.default_factory is not dataclasses.MISSING:
            raise TypeError(f"quick_init: {cls.__name__}.{field.name} needs the generated __init__")
    namespace: dict[str, object] = {f"set_{name}": cls.__dict__[name].__set__ for name in names}
    signature = []
    for field in fields:
        if field.default is dataclasses.MISSING:
            signature.append(field.name)
        else:
            namespace[f"default_{field.name}"] = field.default
            signature.append(f"{field.name}=default_{field.name}")
    body = "".join(f"\n    set_{name}(self, {name})" for name in names) or "\n    pass"
    exec(f"def __init__(self, {', '.join(signature)}):{body}", namespace)  # as dataclasses builds its own
    init: Any = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init  # type: ignore[method-assign]
    return cls
