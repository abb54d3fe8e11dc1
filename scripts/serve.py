"""Serve a folder (the built page in dist/) over HTTP on localhost.

The page needs HTTP rather than file:// (browsers block module scripts and fetch there), and
the right MIME types for .mjs and .wasm, which `python -m http.server` only gets right when
the machine's /etc/mime.types knows them; this server sets them itself. Used by
`./build.sh serve` and by the browser test.
"""

from __future__ import annotations

import argparse
import functools
import http.server
from pathlib import Path

MIME_TYPES = {
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".wasm": "application/wasm",
    ".json": "application/json",
    ".py": "text/x-python; charset=utf-8",
    ".zip": "application/zip",
}


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **MIME_TYPES}

    def end_headers(self) -> None:
        # A rebuild must show up on reload without fighting the browser cache.
        self.send_header("Cache-Control", "no-cache")
        # Cross-origin isolation: without it browsers coarsen performance.now() to 100 us,
        # too coarse for the per-stage timings. Everything is same-origin, so nothing breaks.
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        super().end_headers()


class QuietHandler(Handler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def make_server(
    directory: str | Path, host: str = "127.0.0.1", port: int = 0, quiet: bool = False
) -> http.server.ThreadingHTTPServer:
    """A server for `directory`; port 0 picks a free port (read it from server_address)."""
    handler = functools.partial(QuietHandler if quiet else Handler, directory=str(directory))
    return http.server.ThreadingHTTPServer((host, port), handler)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    server = make_server(args.directory, args.host, args.port)
    host, port = server.server_address[:2]
    print(f"Serving {args.directory} at http://{host}:{port}/  (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
