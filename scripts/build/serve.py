"""Serve a folder (the built page in dist/) over HTTP on localhost.

The page needs HTTP rather than file:// (browsers block module scripts and fetch there), and
the right MIME types for .mjs and .wasm, which `python -m http.server` only gets right when
the machine's /etc/mime.types knows them; this server sets them itself. Used by
`./build.sh serve` and by the browser tests.

By default it also sends no-cache and the cross-origin isolation headers (finer timers for the
per-stage timings). `--plain` drops both, so the folder is served the way an ordinary static
host serves it; `--prefix /demo/tokenprism/` serves it under a sub-path instead of at `/`.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import threading
import urllib.parse
from contextlib import contextmanager
from pathlib import Path

MIME_TYPES = {
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".wasm": "application/wasm",
    ".json": "application/json",
    ".py": "text/x-python; charset=utf-8",
    ".zip": "application/zip",
}


def normalize_prefix(prefix: str) -> str:
    """'/demo/tokenprism' and 'demo/tokenprism/' both become '/demo/tokenprism/'."""
    parts = [p for p in prefix.split("/") if p]
    if any(p in (".", "..") for p in parts):
        raise ValueError(f"prefix must not contain . or .. segments: {prefix!r}")
    return "/" + "".join(p + "/" for p in parts)


# The page's Content-Security-Policy (README "Publish"), the <meta> in web/index.html plus
# frame-ancestors, which only a header can carry. Workers get their policy from their own
# response, so the header also covers the tokenizer workers (they compile wasm too).
CSP = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; worker-src 'self'; object-src 'none'; "
    "base-uri 'self'; form-action 'none'; frame-ancestors 'self'"
)


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **MIME_TYPES}
    prefix = "/"
    plain = False

    def _strip_prefix(self) -> bool:
        """Maps a request under the prefix onto the folder; False if it lies outside."""
        if self.prefix == "/":
            return True
        url = urllib.parse.urlsplit(self.path)
        if url.path == self.prefix[:-1]:
            # The sub-path without its slash: relative links would resolve one level up.
            self.send_response(301)
            self.send_header("Location", self.prefix + (f"?{url.query}" if url.query else ""))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return False
        if not url.path.startswith(self.prefix):
            self.send_error(404, "outside the served prefix")
            return False
        self.path = "/" + self.path[len(self.prefix) :]
        return True

    def do_GET(self) -> None:
        if self._strip_prefix():
            super().do_GET()

    def do_HEAD(self) -> None:
        if self._strip_prefix():
            super().do_HEAD()

    def end_headers(self) -> None:
        if not self.plain:
            # A rebuild must show up on reload without fighting the browser cache.
            self.send_header("Cache-Control", "no-cache")
            # Cross-origin isolation: without it browsers coarsen performance.now() to 100 us,
            # too coarse for the per-stage timings. Everything is same-origin, so nothing
            # breaks. The page works without these headers too (see --plain).
            self.send_header("Cross-Origin-Opener-Policy", "same-origin")
            self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
            self.send_header("Content-Security-Policy", CSP)
        super().end_headers()

    def send_header(self, keyword: str, value: str) -> None:
        # SimpleHTTPRequestHandler redirects a folder without its slash to path + "/", built
        # from the stripped path; put the prefix back in front of it.
        if (
            keyword == "Location"
            and self.prefix != "/"
            and value.startswith("/")
            and not value.startswith(self.prefix)
        ):
            value = self.prefix + value[1:]
        super().send_header(keyword, value)


class QuietHandler(Handler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def make_server(
    directory: str | Path,
    host: str = "127.0.0.1",
    port: int = 0,
    quiet: bool = False,
    prefix: str = "/",
    plain: bool = False,
) -> http.server.ThreadingHTTPServer:
    """A server for `directory` under `prefix`; port 0 picks a free port (read it from
    server_address)."""
    base = QuietHandler if quiet else Handler
    handler_class = type(
        base.__name__, (base,), {"prefix": normalize_prefix(prefix), "plain": plain}
    )
    handler = functools.partial(handler_class, directory=str(directory))
    return http.server.ThreadingHTTPServer((host, port), handler)


@contextmanager
def background(directory: str | Path, prefix: str = "/", plain: bool = False):
    """Serves `directory` under `prefix` on a free port from a daemon thread (quiet); yields
    the site's URL and shuts the server down after."""
    server = make_server(directory, port=0, quiet=True, prefix=prefix, plain=plain)
    with serving(server, prefix) as url:
        yield url


@contextmanager
def serving(server: http.server.ThreadingHTTPServer, prefix: str = "/"):
    """Runs a server from make_server (its handler possibly changed) on a daemon thread;
    yields the site's URL and shuts the server down after."""
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    try:
        yield f"http://{host}:{port}{normalize_prefix(prefix)}"
    finally:
        server.shutdown()
        server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--prefix", default="/", help="serve the folder under this sub-path")
    parser.add_argument(
        "--plain",
        action="store_true",
        help="only the MIME types: no no-cache, no cross-origin isolation headers",
    )
    args = parser.parse_args()
    server = make_server(args.directory, args.host, args.port, prefix=args.prefix, plain=args.plain)
    host, port = server.server_address[:2]
    url = f"http://{host}:{port}{normalize_prefix(args.prefix)}"
    print(f"Serving {args.directory} at {url}  (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
