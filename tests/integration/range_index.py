"""A package index on 127.0.0.1 for `matrix update` tests: a PEP 691 JSON project page and wheel files
served with HTTP Range support (206 + Content-Range), counting the bytes it sends per file."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path


class RangeIndex:
    """Serves /simple/<project>/ from `pages[project]` (a PEP 691 dict) and /files/<name> from `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.pages: dict[str, dict[str, Any]] = {}
        self.sent: dict[str, int] = {}
        self.full_downloads: list[str] = []
        self.fail_next: int = 0  # answer this many requests with HTTP 503 first
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> RangeIndex:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        index = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

            def _reply(self, status: int, body: bytes, headers: dict[str, str]) -> None:
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802
                with index.lock:
                    if index.fail_next:
                        index.fail_next -= 1
                        self._reply(503, b"busy", {})
                        return
                page = re.fullmatch(r"/simple/([^/]+)/", self.path)
                if page:
                    data = index.pages.get(page.group(1))
                    if data is None:
                        self._reply(404, b"not found", {})
                        return
                    wants_json = "application/vnd.pypi.simple.v1+json" in self.headers.get("Accept", "")
                    assert wants_json, "the client must ask for PEP 691 JSON"
                    self._reply(
                        200,
                        json.dumps(data).encode(),
                        {"Content-Type": "application/vnd.pypi.simple.v1+json"},
                    )
                    return
                found = re.fullmatch(r"/files/([^/?#]+)", self.path)
                path = index.root / found.group(1) if found else None
                if path is None or not path.is_file():
                    self._reply(404, b"not found", {})
                    return
                data = path.read_bytes()
                wanted = re.fullmatch(r"bytes=(\d+)-(\d+)", self.headers.get("Range", ""))
                if wanted:
                    start, end = int(wanted.group(1)), min(int(wanted.group(2)), len(data) - 1)
                    body = data[start : end + 1]
                    headers = {"Content-Range": f"bytes {start}-{end}/{len(data)}", "Accept-Ranges": "bytes"}
                    status = 206
                else:
                    body, headers, status = data, {}, 200
                    index.full_downloads.append(path.name)
                with index.lock:
                    index.sent[path.name] = index.sent.get(path.name, 0) + len(body)
                self._reply(status, body, {"Content-Type": "application/octet-stream", **headers})

        return Handler
