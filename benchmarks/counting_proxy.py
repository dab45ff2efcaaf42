"""A counting HTTP(S) proxy on 127.0.0.1: tunnels CONNECT (and forwards plain GETs) and counts the bytes that
come back from the internet, so a benchmark can say exactly how much pip or uv downloaded.

    with CountingProxy() as proxy:
        env = {"HTTPS_PROXY": proxy.url, "HTTP_PROXY": proxy.url, "NO_PROXY": "127.0.0.1,localhost"}
        ... run the installer ...
        proxy.bytes_in
"""

from __future__ import annotations

import select
import socket
import socketserver
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import TracebackType


class CountingProxy:
    """CONNECT tunnels only (pip and uv fetch PyPI over HTTPS); counts bytes received from upstream."""

    def __init__(self) -> None:
        self.bytes_in = 0
        self.bytes_out = 0
        self._lock = threading.Lock()
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                client: socket.socket = self.request
                head = b""
                while b"\r\n\r\n" not in head:
                    chunk = client.recv(4096)
                    if not chunk:
                        return
                    head += chunk
                line = head.split(b"\r\n", 1)[0].decode("latin-1")
                method, target, _ = line.split(" ", 2)
                if method != "CONNECT":
                    client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
                    return
                host, _, port = target.rpartition(":")
                try:
                    upstream = socket.create_connection((host, int(port)), timeout=30)
                except OSError:
                    client.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                    return
                client.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                proxy._pump(client, upstream)

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def _pump(self, client: socket.socket, upstream: socket.socket) -> None:
        sockets = [client, upstream]
        try:
            while True:
                readable, _, _ = select.select(sockets, [], [], 120)
                if not readable:
                    return
                for sock in readable:
                    data = sock.recv(262144)
                    if not data:
                        return
                    other = upstream if sock is client else client
                    other.sendall(data)
                    with self._lock:
                        if sock is upstream:
                            self.bytes_in += len(data)
                        else:
                            self.bytes_out += len(data)
        except OSError:
            return
        finally:
            upstream.close()

    def __enter__(self) -> CountingProxy:
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
