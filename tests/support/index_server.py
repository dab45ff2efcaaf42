"""A PEP 503 package index on 127.0.0.1, served from a folder of wheels by a threaded http.server.

    with IndexServer(wheel_dir) as index:
        pip install --index-url {index.url} onnxruntime-gpu
        index.inject("onnxruntime_gpu-1.31.1-py3-none-any.whl", Fault.DROP)

Faults, per file: DROP (the connection closes half-way through the download), BAD_HASH (the index advertises
a sha256 the file does not have), STALL (half the file is sent, then the server waits until `release()`:
use it to interrupt or kill an installer while it downloads; `wait_requested(name)` says when it started).
Each wheel's METADATA is served as PEP 658 metadata, so pip's and uv's resolvers (and dry runs) never
download a wheel: only the install itself does.
"""

from __future__ import annotations

import enum
import hashlib
import html
import re
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import TracebackType


class Fault(enum.Enum):
    """What goes wrong when a file is served."""

    DROP = "drop"
    BAD_HASH = "bad-hash"
    STALL = "stall"


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _metadata_of(wheel: Path) -> bytes:
    """The wheel's METADATA (served as PEP 658 metadata, so that resolving never downloads a wheel)."""
    with zipfile.ZipFile(wheel) as archive:
        # the wheel's own, at the top (a vendored package's dist-info lies deeper)
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
        return archive.read(name)


def _project_of(filename: str) -> str:
    return _normalize(filename.split("-", 1)[0])


def _served(path: Path) -> bool:
    """Wheels, and source distributions (NVIDIA's TensorRT stubs are .tar.gz)."""
    return path.name.endswith((".whl", ".tar.gz"))


class IndexServer:
    """A simple index over `root` (*.whl files), listening on 127.0.0.1 at an ephemeral port."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.faults: dict[str, Fault] = {}
        self.requests: list[str] = []
        self.bytes_sent = 0
        self._requested: dict[str, threading.Event] = {}
        self._release = threading.Event()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The index URL to give pip/uv: http://127.0.0.1:PORT/simple/"""
        return f"http://127.0.0.1:{self._server.server_address[1]}/simple/"

    def inject(self, filename: str, fault: Fault) -> None:
        """Make serving `filename` fail in the given way."""
        self.faults[filename] = fault

    def clear(self) -> None:
        """Serve everything correctly again."""
        self.faults.clear()
        self._release.set()

    def release(self) -> None:
        """Let stalled downloads end (they close the connection)."""
        self._release.set()

    def downloads(self, filename: str) -> int:
        """How many times the file itself (not its metadata) was requested."""
        return self.requests.count(f"/files/{filename}")

    def wait_requested(self, filename: str, timeout: float = 60.0) -> bool:
        """Block until a download of `filename` has started."""
        return self._event(filename).wait(timeout)

    def _event(self, filename: str) -> threading.Event:
        with self._lock:
            return self._requested.setdefault(filename, threading.Event())

    def start(self) -> IndexServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> IndexServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # -- serving ---------------------------------------------------------------------------------------

    def _files_of(self, project: str) -> list[Path]:
        return sorted(p for p in self.root.iterdir() if _served(p) and _project_of(p.name) == project)

    def _project_page(self, project: str) -> bytes | None:
        files = self._files_of(project)
        if not files:
            return None
        links = []
        for path in files:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            if self.faults.get(path.name) is Fault.BAD_HASH:
                digest = hashlib.sha256(b"not the file").hexdigest()
            name = html.escape(path.name)
            if not path.name.endswith(".whl"):  # an sdist: no PEP 658 metadata
                links.append(f'<a href="/files/{name}#sha256={digest}">{name}</a><br>')
                continue
            meta = hashlib.sha256(_metadata_of(path)).hexdigest()
            links.append(
                f'<a href="/files/{name}#sha256={digest}" data-dist-info-metadata="sha256={meta}" '
                f'data-core-metadata="sha256={meta}">{name}</a><br>'
            )
        body = f"<!DOCTYPE html><html><body><h1>Links for {project}</h1>{''.join(links)}</body></html>"
        return body.encode()

    def _root_page(self) -> bytes:
        projects = sorted({_project_of(p.name) for p in self.root.iterdir() if _served(p)})
        links = "".join(f'<a href="/simple/{p}/">{p}</a><br>' for p in projects)
        return f"<!DOCTYPE html><html><body>{links}</body></html>".encode()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        index = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet
                pass

            def _send(self, status: int, body: bytes, content_type: str = "text/html") -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                index.bytes_sent += len(body)

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                path = self.path.split("?", 1)[0].split("#", 1)[0]
                with index._lock:
                    index.requests.append(path)
                if path in ("/simple", "/simple/"):
                    return self._send(200, index._root_page())
                match = re.fullmatch(r"/simple/([^/]+)/?", path)
                if match:
                    page = index._project_page(_normalize(match.group(1)))
                    return self._send(200, page) if page else self._send(404, b"not found")
                match = re.fullmatch(r"/files/([^/]+\.whl)\.metadata", path)
                if match and (index.root / match.group(1)).is_file():
                    return self._send(200, _metadata_of(index.root / match.group(1)), "text/plain")
                match = re.fullmatch(r"/files/([^/]+)", path)
                if match and (index.root / match.group(1)).is_file():
                    return self._serve_file(match.group(1))
                return self._send(404, b"not found")

            def do_HEAD(self) -> None:  # noqa: N802 - uv asks before downloading
                path = self.path.split("?", 1)[0]
                match = re.fullmatch(r"/files/([^/]+)", path)
                file = index.root / match.group(1) if match else None
                self.send_response(200 if file and file.is_file() else 404)
                self.send_header("Content-Length", str(file.stat().st_size if file and file.is_file() else 0))
                self.end_headers()

            def _serve_file(self, filename: str) -> None:
                data = (index.root / filename).read_bytes()
                fault = index.faults.get(filename)
                index._event(filename).set()
                if fault not in (Fault.DROP, Fault.STALL):
                    return self._send(200, data, "application/octet-stream")
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                if fault is Fault.STALL:
                    index._release.wait(300)
                self.close_connection = True
                self.connection.shutdown(2)

        return Handler
