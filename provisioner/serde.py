"""Generic JSON round trip for the frozen dataclasses of the data model.

`to_jsonable` turns a dataclass tree into plain dicts/lists; `from_jsonable(cls, data)` rebuilds it,
checking types as it goes and raising ValueError with the path of the offending field.
"""

from __future__ import annotations

import dataclasses
import types

TYPE_CHECKING = False  # `typing` costs ~7 ms to import; the fast path of `ortprov plan` does without it
if TYPE_CHECKING:
    from typing import Any, TypeVar

    T = TypeVar("T")

_HINTS: dict[type, dict[str, Any]] = {}


def to_jsonable(obj: Any) -> Any:
    """Dataclasses to dicts, tuples to lists, recursively."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(item) for item in obj]
    if isinstance(obj, dict):
        return {str(key): to_jsonable(value) for key, value in obj.items()}
    return obj


def _hints(cls: type) -> dict[str, Any]:
    import typing

    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def from_jsonable(cls: type[T], data: Any, path: str = "$") -> T:
    """Rebuild a dataclass of type `cls` from `data`; unknown keys are ignored (forward compatible)."""
    result: T = _convert(cls, data, path)
    return result


def _convert(tp: Any, data: Any, path: str) -> Any:
    import typing
    from typing import Any, Union, get_args, get_origin

    origin = get_origin(tp)
    if tp is Any:
        return data
    if origin in (Union, types.UnionType):
        args = get_args(tp)
        if data is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _convert(arg, data, path)
            except ValueError as exc:
                errors.append(str(exc))
        raise ValueError(errors[0] if errors else f"{path}: unexpected null")
    if origin is typing.Literal:
        if data not in get_args(tp):
            raise ValueError(f"{path}: {data!r} is not one of {list(get_args(tp))}")
        return data
    if origin in (tuple, list):
        if not isinstance(data, (list, tuple)):
            raise ValueError(f"{path}: expected a list, got {type(data).__name__}")
        args = get_args(tp)
        item_type = args[0] if args else Any
        items = [_convert(item_type, item, f"{path}[{i}]") for i, item in enumerate(data)]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected an object, got {type(data).__name__}")
        _, value_type = get_args(tp) or (str, Any)
        return {str(k): _convert(value_type, v, f"{path}.{k}") for k, v in data.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected an object for {tp.__name__}, got {type(data).__name__}")
        hints = _hints(tp)
        kwargs = {}
        for field in dataclasses.fields(tp):
            if field.name in data:
                kwargs[field.name] = _convert(hints[field.name], data[field.name], f"{path}.{field.name}")
            elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
                raise ValueError(f"{path}: missing required key '{field.name}'")
        return tp(**kwargs)
    if tp is float:
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            raise ValueError(f"{path}: expected a number, got {data!r}")
        return float(data)
    if tp in (int, str, bool):
        if not isinstance(data, tp) or (tp is int and isinstance(data, bool)):
            raise ValueError(f"{path}: expected {tp.__name__}, got {data!r}")
        return data
    raise ValueError(f"{path}: cannot convert to {tp!r}")
