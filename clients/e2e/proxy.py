#!/usr/bin/env python3
"""A TCP proxy that a test can cut, to play a network cut or an arbiter outage.

    proxy.py UPSTREAM_HOST:PORT

Listens on 127.0.0.1 (a free port) and forwards every connection to the upstream. It
prints ``listening PORT`` once ready, then reads commands on standard input, one a line,
and acknowledges each on standard output:

    cut       closes every open connection and stops listening: connecting is refused
              (ECONNREFUSED) until ``restore``; prints ``cut``
    restore   listens again on the same port; prints ``restored``
    drop-reply  drops the next reply from the server: the connection that next carries a
              response's HTTP/2 HEADERS frame (a gRPC reply begins with one) is reset
              instead of forwarding it, so the request reached the server and its answer
              never reaches the client; prints ``armed`` at once and ``dropped`` when it
              happened. Meant for a client with one connection and no stream open
              (no Watch), so that the next reply is the one of its next request.

It exits at the end of standard input. Standard library only (asyncio), so it runs on
any python3 >= 3.8.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Optional, Set


class Proxy:
    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.port = 0
        self.server: Optional[asyncio.AbstractServer] = None
        self.writers: Set[asyncio.StreamWriter] = set()
        self.drop_next = False  # drop-reply armed
        self.on_drop = None  # called once a reply was dropped

    async def listen(self) -> None:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", self.port, reuse_address=True)
        self.port = self.server.sockets[0].getsockname()[1]

    async def cut(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None
        for w in list(self.writers):
            w.transport.abort()  # a reset, as when a network path or a server goes away
        self.writers.clear()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.transport.abort()
            return
        pair = {writer, up_writer}
        self.writers |= pair

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while True:
                    data = await src.read(65536)
                    if not data:
                        break
                    dst.write(data)
                    await dst.drain()
            except (OSError, asyncio.CancelledError):
                pass
            finally:
                for w in pair:
                    w.transport.abort()
                self.writers -= pair

        async def replies(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            """Server to client, frame by frame (HTTP/2: a 9-byte header, then the
            payload), so that drop-reply can cut before a response's HEADERS."""
            try:
                while True:
                    head = await src.readexactly(9)
                    body = await src.readexactly(int.from_bytes(head[:3], "big"))
                    stream = int.from_bytes(head[5:9], "big") & 0x7FFFFFFF
                    if self.drop_next and head[3] == 0x1 and stream != 0:  # HEADERS of a reply
                        self.drop_next = False
                        if self.on_drop is not None:
                            self.on_drop()
                        break
                    dst.write(head + body)
                    await dst.drain()
            except (OSError, asyncio.IncompleteReadError, asyncio.CancelledError):
                pass
            finally:
                for w in pair:
                    w.transport.abort()
                self.writers -= pair

        await asyncio.gather(pipe(reader, up_writer), replies(up_reader, writer))


async def main() -> int:
    if len(sys.argv) != 2 or ":" not in sys.argv[1]:
        print("usage: proxy.py UPSTREAM_HOST:PORT", file=sys.stderr)
        return 2
    host, _, port = sys.argv[1].rpartition(":")
    proxy = Proxy(host, int(port))
    await proxy.listen()
    print(f"listening {proxy.port}", flush=True)
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            return 0
        cmd = line.strip()
        if cmd == "cut":
            await proxy.cut()
            print("cut", flush=True)
        elif cmd == "drop-reply":
            proxy.drop_next = True
            proxy.on_drop = lambda: print("dropped", flush=True)
            print("armed", flush=True)
        elif cmd == "restore":
            if proxy.server is None:
                await proxy.listen()
            print("restored", flush=True)
        elif cmd:
            print(f"unknown command {cmd!r}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
