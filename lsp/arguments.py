"""``hexplore-lsp``'s command line, checked before anything heavy loads: a refused address or
``--help`` answers in a few milliseconds, without starting the front end's worker."""

from __future__ import annotations

import argparse
import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Arguments:
    tcp: tuple[str, int] | None  # (host, port) for ``--tcp``; None: stdio
    token_file: str | None
    log_level: str


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_args(argv: Sequence[str] | None = None) -> Arguments:
    """The arguments, or exit 2 with the reason (argparse's ``error``)."""
    parser = argparse.ArgumentParser(prog="hexplore-lsp", description="hexplore's language server")
    parser.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
    parser.add_argument(
        "--tcp", metavar="HOST:PORT",
        help="listen on a loopback TCP socket instead (port 0: any free one); clients send the session token",
    )  # fmt: skip
    parser.add_argument(
        "--token-file", metavar="PATH",
        help="with --tcp: where to write the session token (default $XDG_RUNTIME_DIR/hexplore-lsp-PORT.token)",
    )  # fmt: skip
    parser.add_argument("--log-level", default="WARNING", help="logging level on stderr")
    args = parser.parse_args(argv)
    if not args.tcp:
        if args.token_file:
            parser.error("--token-file goes with --tcp")
        return Arguments(None, None, args.log_level)
    host, _, port = args.tcp.rpartition(":")
    if not host or not port.isdigit():
        parser.error(f"--tcp expects HOST:PORT, got {args.tcp!r}")
    if not is_loopback(host):
        parser.error(f"--tcp listens on loopback addresses only (127.0.0.1, ::1, localhost), not {host!r}")
    return Arguments((host, int(port)), args.token_file, args.log_level)
