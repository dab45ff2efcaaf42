"""Capture what a user sees while `ortprov apply` downloads: a real apply (a new venv, real pip) against the
loopback index serving padded wheels at a throttled rate, run in a pseudo-terminal (what a terminal receives,
byte for byte), then again with stderr a pipe (a CI log). Writes the two transcripts to docs/progress.md's
folder (docs/progress-terminal.txt, docs/progress-pipe.txt).

    python benchmarks/capture_progress.py [--rate-mb 25] [--size-mb 150]

The terminal transcript shows each redraw of the status line on a line of its own (the terminal overwrites
them in place: `\\r`); a pause of the capture is marked with the seconds since the start.
"""

from __future__ import annotations

import argparse
import os
import pty
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from provisioner.plan import Plan, Step  # noqa: E402
from tests.support.envs import clean_env  # noqa: E402
from tests.support.index_server import IndexServer  # noqa: E402
from tests.support.wheels import WheelSpec, build_wheels, nvidia_lib, ort_gpu  # noqa: E402


class SlowIndex(IndexServer):
    """The loopback index, sending wheels at `rate` bytes per second (pages and metadata at full speed)."""

    def __init__(self, root: Path, rate: float) -> None:
        self.rate = rate  # before the server is built
        super().__init__(root)

    def _handler_class(self) -> Any:
        base = super()._handler_class()
        rate = self.rate

        class Slow(base):  # type: ignore[misc,valid-type]
            def _send(self, status: int, body: bytes, content_type: str = "text/html") -> None:
                if content_type != "application/octet-stream":
                    return super()._send(status, body, content_type)
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                chunk, began = 256 * 1024, time.monotonic()
                for start in range(0, len(body), chunk):
                    self.wfile.write(body[start : start + chunk])
                    ahead = (start + chunk) / rate - (time.monotonic() - began)
                    if ahead > 0:
                        time.sleep(ahead)
                return None

        return Slow


def run_in_pty(argv: list[str], env: dict[str, str]) -> tuple[int, list[tuple[float, bytes]]]:
    """Run argv with a pty as stdin, stdout and stderr (80 columns); (exit code, [(seconds, bytes read)])."""
    leader, follower = pty.openpty()
    import fcntl
    import struct
    import termios

    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    began = time.monotonic()
    proc = subprocess.Popen(argv, stdin=follower, stdout=follower, stderr=follower, env=env)
    os.close(follower)
    chunks: list[tuple[float, bytes]] = []
    while True:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if not ready:
            if proc.poll() is not None:
                break
            continue
        try:
            data = os.read(leader, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append((time.monotonic() - began, data))
    os.close(leader)
    return proc.wait(), chunks


def transcript(chunks: list[tuple[float, bytes]]) -> str:
    """The pty's bytes as text: each `\\r` redraw of the status line on a line of its own, one per second of the
    capture, prefixed with `[t=12.3s]`; the lines that stay (ended by a newline) as they are."""
    lines: list[str] = []
    last_second = -1
    pending = ""

    def frame(seconds: float, shown: str) -> None:
        nonlocal last_second
        if shown.strip() and int(seconds) != last_second:
            lines.append(f"[t={seconds:4.1f}s] {shown.rstrip()}")
            last_second = int(seconds)

    for seconds, data in chunks:
        pending += data.decode("utf-8", "replace").replace("\r\n", "\n")
        *complete, pending = pending.split("\n")
        for line in complete:
            *redraws, stays = line.split("\r")
            for shown in redraws:
                frame(seconds, shown)
            if stays.strip():
                lines.append(stays.rstrip())
        *redraws, pending = pending.split("\r")
        for shown in redraws:
            frame(seconds, shown)
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate-mb", type=float, default=25.0, help="download rate of the index, MB/s")
    parser.add_argument("--size-mb", type=int, default=150, help="size of the NVIDIA wheels together, MB")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        wheels = tmp / "wheels"
        third = args.size_mb * 1_000_000 // 3
        build_wheels(
            wheels,
            [
                WheelSpec("numpy-stub", "1.0.0", files={"numpy_stub/__init__.py": ""}),
                ort_gpu("1.31.1", "12"),
                nvidia_lib("nvidia-cuda-runtime-cu12", "12.4.127", "cuda_runtime", padding=third // 4),
                nvidia_lib("nvidia-cublas-cu12", "12.4.5.8", "cublas", padding=third * 2),
                nvidia_lib("nvidia-cudnn-cu12", "9.1.0.70", "cudnn", padding=third),
            ],
        )
        plan = Plan(
            ort_version="1.31.1",
            package="onnxruntime-gpu",
            cuda_version="12.0",
            cudnn_version="9",
            steps=(Step("install", ("onnxruntime-gpu[cuda,cudnn]==1.31.1",), "the GPU build and its NVIDIA wheels"),),
        )
        plan_file = tmp / "plan.json"
        plan_file.write_text(plan.to_json(), encoding="utf-8")
        out = ROOT / "docs"
        for where in ("terminal", "pipe"):
            env = clean_env(tmp / where, TERM="xterm-256color", COLUMNS="100")
            env.pop("NO_COLOR", None)
            with SlowIndex(wheels, args.rate_mb * 1_000_000) as index:
                argv = [
                    *("ortprov", "apply", "--plan", str(plan_file), "--venv", str(tmp / where / "venv")),
                    *("--index-url", index.url, "--installer", "pip", "--no-verify", "-y"),
                ]
                shown_argv = "$ ortprov apply --plan plan.json --venv venv --index-url http://127.0.0.1:PORT/simple/ "
                shown_argv += "--installer pip --no-verify -y"
                command = [sys.executable, "-m", "provisioner", *argv[1:]]
                began = time.monotonic()
                if where == "terminal":
                    code, chunks = run_in_pty(command, env)
                    text = transcript(chunks)
                else:
                    done = subprocess.run(command, env=env, capture_output=True, text=True)
                    code, text = done.returncode, "stderr:\n" + done.stderr + "stdout:\n" + done.stdout
                seconds = time.monotonic() - began
            text = text.replace(str(tmp / where), "/tmp/demo").replace(index.url, "http://127.0.0.1:PORT/simple/")
            header = f"{shown_argv}\n# exit {code} after {seconds:.1f} s; index at {args.rate_mb:g} MB/s, "
            header += f"{args.size_mb} MB of wheels; stderr a {'terminal (pty)' if where == 'terminal' else 'pipe'}\n"
            (out / f"progress-{where}.txt").write_text(header + text, encoding="utf-8")
            print(f"{where}: exit {code}, {seconds:.1f} s -> docs/progress-{where}.txt")


if __name__ == "__main__":
    main()
