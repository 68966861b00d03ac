"""Helpers of the end-to-end tests that run through clients/e2e/proxy.py (test_outage,
test_retried_event): the proxy as a subprocess, driven by its stdin commands, and the
``arbiter_client`` logger's lines captured."""

from __future__ import annotations

import asyncio
import logging
import os
import sys

PROXY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "e2e", "proxy.py")


class LogLines(logging.Handler):
    """Captures the ``arbiter_client`` logger's messages at INFO and above in
    ``lines`` while attached (``attach``; ``detach`` restores the logger's level)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []
        self._level = logging.NOTSET

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())

    def attach(self) -> "LogLines":
        logger = logging.getLogger("arbiter_client")
        self._level = logger.level
        logger.addHandler(self)
        logger.setLevel(logging.INFO)
        return self

    def detach(self) -> None:
        logger = logging.getLogger("arbiter_client")
        logger.removeHandler(self)
        logger.setLevel(self._level)


class Proxy:
    """clients/e2e/proxy.py in front of ``target``; ``address`` is where to connect."""

    def __init__(self, proc: asyncio.subprocess.Process, port: int) -> None:
        self.proc = proc
        self.address = f"127.0.0.1:{port}"

    @classmethod
    async def start(cls, target: str) -> "Proxy":
        proc = await asyncio.create_subprocess_exec(
            sys.executable, PROXY, target, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 10)).decode()
        if not line.startswith("listening "):
            proc.kill()
            raise AssertionError(f"proxy.py: {line!r}")
        return cls(proc, int(line.split()[1]))

    async def say(self, cmd: str, *answers: str) -> None:
        """Sends a command line ("cut", "restore", "drop-reply"; "" sends nothing) and
        checks the next lines it prints are ``answers``."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        if cmd:
            self.proc.stdin.write(cmd.encode() + b"\n")
            await self.proc.stdin.drain()
        for want in answers:
            got = (await asyncio.wait_for(self.proc.stdout.readline(), 10)).decode().strip()
            if got != want:
                raise AssertionError(f"proxy.py answered {got!r} to {cmd!r}, want {want!r}")

    async def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), 5)
        except asyncio.TimeoutError:
            self.proc.kill()
            await self.proc.wait()
