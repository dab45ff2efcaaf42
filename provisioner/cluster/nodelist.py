"""A NodeList's nodes, one at a time, from the document's text read in chunks: `kubectl get nodes -o json` prints
`{"apiVersion": "v1", "items": [...], "kind": "List", ...}` (the API server itself says "NodeList"); only one
node's objects are alive at once, so the memory does not grow with the cluster.

`read_nodes(chunks, origin, each)` calls `each(index, node)` for every item and returns the document's `kind`;
BadInput (one line) for a document that is not a NodeList, or is not JSON."""

from __future__ import annotations

import json

from provisioner.errors import BadInput
from provisioner.validate import json_decoder

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

LIST_KINDS = ("NodeList", "List")  # the API's kind; kubectl's for every `get ... -o json` of several objects
_HINT = "save it with `kubectl get nodes -o json > nodes.json`"
_WHITESPACE = " \t\n\r"
_DECODER = json_decoder()  # validate.py's limits: integer digits, no NaN
_KEEP = 1 << 20  # drop what was read once this much of the buffer is behind


class _Reader:
    """A cursor over text arriving in chunks; `value()` decodes the next JSON value whole."""

    def __init__(self, chunks: Iterable[str], origin: str) -> None:
        self.chunks: Iterator[str] = iter(chunks)
        self.origin = origin
        self.buffer = ""
        self.at = 0
        self.done = False

    def _more(self) -> bool:
        if self.done:
            return False
        for chunk in self.chunks:
            if chunk:
                if self.at > _KEEP:
                    self.buffer, self.at = self.buffer[self.at :], 0
                self.buffer += chunk
                return True
        self.done = True
        return False

    def bad(self, what: str) -> BadInput:
        return BadInput(f"{self.origin} is not a NodeList: {what}", hint=_HINT)

    def peek(self) -> str:
        """The next character that is not white space ("" at the end)."""
        while True:
            while self.at < len(self.buffer) and self.buffer[self.at] in _WHITESPACE:
                self.at += 1
            if self.at < len(self.buffer):
                return self.buffer[self.at]
            if not self._more():
                return ""

    def expect(self, char: str, what: str) -> None:
        if self.peek() != char:
            raise self.bad(what)
        self.at += 1

    def value(self) -> object:
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buffer, self.at)
            except json.JSONDecodeError as exc:
                if self._more():
                    continue  # the value goes on in the next chunk
                raise BadInput(f"{self.origin} is not JSON: {exc.msg}", hint=_HINT) from None
            except ValueError as exc:  # validate's limits
                raise BadInput(f"{self.origin} {exc}", hint=_HINT) from None
            except RecursionError:
                raise self.bad("it nests too deeply") from None
            if end == len(self.buffer) and not isinstance(value, (dict, list, str)) and self._more():
                continue  # a number or word may go on in the next chunk
            self.at = end
            return value


def read_nodes(chunks: Iterable[str], origin: str, each: Callable[[int, dict], None]) -> str:
    """Call `each(index, node)` for every item of the NodeList in `chunks`; the document's kind."""
    reader = _Reader(chunks, origin)
    if reader.peek() != "{":
        raise reader.bad("it is not a JSON object")
    reader.at += 1
    kind: object = None
    seen_items = False
    while reader.peek() != "}":
        key = reader.value()
        if not isinstance(key, str):
            raise BadInput(f"{origin} is not JSON: an object key is not a string", hint=_HINT)
        reader.expect(":", "a key without a value")
        if key == "items":
            seen_items = True
            _items(reader, each)
        else:
            value = reader.value()
            if key == "kind":
                kind = value
                if kind not in LIST_KINDS:
                    raise reader.bad(f"its kind is {value!r}, not NodeList")
        if reader.peek() == ",":
            reader.at += 1
        elif reader.peek() != "}":
            raise BadInput(f"{origin} is not JSON: ',' or '}}' expected", hint=_HINT)
    reader.at += 1
    if reader.peek() != "":
        raise BadInput(f"{origin} is not JSON: extra data after the document", hint=_HINT)
    if kind is None:
        raise reader.bad("it has no kind")
    if not seen_items:
        raise reader.bad("it has no items")
    return str(kind)


def _items(reader: _Reader, each: Callable[[int, dict], None]) -> int:
    """Hand the array's items to `each`, one at a time; how many there were."""
    if reader.peek() == "n":  # "items": null, as an empty list prints in some clients
        if reader.value() is not None:
            raise reader.bad("its items are not a list")
        return 0
    reader.expect("[", "its items are not a list")
    index = 0
    while reader.peek() != "]":
        item = reader.value()
        if not isinstance(item, dict):
            raise reader.bad(f"item {index} is not an object")
        node_kind = item.get("kind", "Node")  # the API's items carry no kind; kubectl's List names each one
        if node_kind != "Node":
            raise reader.bad(f"item {index} is a {node_kind}, not a Node")
        each(index, item)
        index += 1
        if reader.peek() == ",":
            reader.at += 1
        elif reader.peek() != "]":
            raise BadInput(f"{reader.origin} is not JSON: ',' or ']' expected", hint=_HINT)
    reader.at += 1
    return index
