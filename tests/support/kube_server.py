"""A stand-in Kubernetes API server on 127.0.0.1 for the real kubectl: the discovery documents kubectl reads first
(/version, /api, /apis, /api/v1) and /api/v1/nodes, which serves a recorded NodeList (shared/notes/kubernetes.md:
kubectl v1.32 asks for exactly those five). `requests` lists the paths asked for; `kubeconfig(folder)` writes a
kubeconfig whose context "stub" points here.

    with KubeServer(node_list) as api:
        kubectl --kubeconfig {api.kubeconfig(tmp)} get nodes -o json
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path
    from types import TracebackType

VERSION = {"major": "1", "minor": "32", "gitVersion": "v1.32.4", "platform": "linux/amd64"}
API = {
    "kind": "APIVersions",
    "versions": ["v1"],
    "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}],
}
APIS = {"kind": "APIGroupList", "apiVersion": "v1", "groups": []}
RESOURCES = {
    "kind": "APIResourceList",
    "groupVersion": "v1",
    "resources": [
        {
            "name": "nodes",
            "singularName": "node",
            "namespaced": False,
            "kind": "Node",
            "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
            "shortNames": ["no"],
        }
    ],
}


class KubeServer:
    """The API server stub, serving `node_list` (a dict: the API's NodeList) at /api/v1/nodes."""

    def __init__(self, node_list: dict, *, status: int = 200) -> None:
        self.body = json.dumps(node_list).encode()
        self.status = status
        self.requests: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                server.requests.append(self.path)
                path = self.path.split("?", 1)[0]
                documents = {"/version": VERSION, "/api": API, "/apis": APIS, "/api/v1": RESOURCES}
                if path == "/api/v1/nodes":
                    body, status = server.body, server.status
                    if status != 200:
                        body = json.dumps(
                            {
                                "kind": "Status",
                                "apiVersion": "v1",
                                "status": "Failure",
                                "message": 'nodes is forbidden: User "system:anonymous" cannot list resource "nodes"',
                                "reason": "Forbidden",
                                "code": status,
                            }
                        ).encode()
                elif path in documents:
                    body, status = json.dumps(documents[path]).encode(), 200
                else:
                    body, status = b'{"kind":"Status","status":"Failure","code":404}', 404
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> KubeServer:
        self.thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def kubeconfig(self, folder: Path, server: str | None = None) -> Path:
        """A kubeconfig with the context "stub" (current) for this server (or `server`)."""
        path = folder / "kubeconfig"
        path.write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": "stub", "cluster": {"server": server or self.url}}],
                    "users": [{"name": "nobody", "user": {}}],
                    "contexts": [{"name": "stub", "context": {"cluster": "stub", "user": "nobody"}}],
                    "current-context": "stub",
                }
            )
        )
        return path
