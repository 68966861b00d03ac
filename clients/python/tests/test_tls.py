"""Issue 15 / 14 end to end: TLS, client certificates, bearer tokens and trace context.

Real processes: certificates made here with ``openssl`` (a CA, a server certificate for
127.0.0.1, a client certificate), then ``arbiter serve --tls-cert --tls-key
--tls-client-ca --auth-tokens-file`` with ``OTEL_TRACES_EXPORTER=console`` (its spans on
standard output, flushed when it stops). Checked: a client with the CA, its certificate
and a good token works; a wrong token gets UNAUTHENTICATED; no client certificate fails
(the handshake); the W3C traceparent the client sends (the ``traceparent`` option:
OpenTelemetry is not installed here) is the trace of the arbiter's spans.

clients/test.sh runs it with ARBITER_BIN set to the arbiter binary; skipped otherwise:

    ARBITER_BIN=/tmp/arbiter python3 -m unittest -v tests.test_tls
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import grpc  # noqa: E402

from arbiter_client import ArbiterClient, ArbiterError, UnauthenticatedError  # noqa: E402
from arbiter_client.v1 import arbiter_pb2 as pb  # noqa: E402

BIN = os.environ.get("ARBITER_BIN")
TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "testdata", "tools", "booking.yaml")
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"


def openssl(*args: str, cwd: str) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_certs(d: str) -> None:
    """ca.pem; server.pem/.key (127.0.0.1, localhost); client.pem/.key; EC P-256, 1 day."""
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=arbiter test CA",
            cwd=d)
    for name, ext in (("server", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth"),
                      ("client", "extendedKeyUsage=clientAuth")):
        with open(os.path.join(d, f"{name}.ext"), "w") as f:
            f.write(ext + "\n")
        openssl("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN=arbiter test {name}", cwd=d)
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", f"{name}.pem", "-days", "1", "-extfile", f"{name}.ext", cwd=d)


@unittest.skipUnless(BIN and shutil.which("openssl"), "set ARBITER_BIN (and install openssl)")
class TLSTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.dir = tempfile.mkdtemp(prefix="arbiter-tls-")
        make_certs(self.dir)
        self.path = lambda name: os.path.join(self.dir, name)
        with open(self.path("tokens.yaml"), "w") as f:
            f.write('"good-token-5b1d0e": acme\n')
        self.out = open(self.path("serve.out"), "w+b")
        self.err = open(self.path("serve.err"), "w+b")
        self.arbiter = await asyncio.create_subprocess_exec(
            BIN, "serve", "--listen", "127.0.0.1:0", "--tools", TOOLS,
            "--tls-cert", self.path("server.pem"), "--tls-key", self.path("server.key"),
            "--tls-client-ca", self.path("ca.pem"), "--auth-tokens-file", self.path("tokens.yaml"),
            stdout=self.out, stderr=self.err, env={**os.environ, "OTEL_TRACES_EXPORTER": "console"})
        self.addr = None
        for _ in range(100):
            self.err.seek(0)
            m = re.search(rb"arbiter serving.* addr=(\S+)", self.err.read())
            if m:
                self.addr = m.group(1).decode()
                break
            await asyncio.sleep(0.1)
        self.assertIsNotNone(self.addr, self.log())

    def log(self) -> str:
        self.err.seek(0)
        return self.err.read().decode(errors="replace")

    async def asyncTearDown(self):
        if self.arbiter.returncode is None:
            self.arbiter.terminate()
            await self.arbiter.wait()
        self.out.close()
        self.err.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def client(self, **kw) -> ArbiterClient:
        opts = dict(ca_file=self.path("ca.pem"), cert_file=self.path("client.pem"), key_file=self.path("client.key"),
                    token="good-token-5b1d0e", timeout=5.0)
        opts.update(kw)
        return ArbiterClient(self.addr, **{k: v for k, v in opts.items() if v is not None})

    async def test_tls_tokens_and_traceparent(self):
        sid = f"tls-{os.getpid()}"
        async with self.client(traceparent=lambda: TRACEPARENT) as good:
            await good.report_speech(pb.ReportSpeechRequest(session_id=sid, event=pb.SPEECH_EVENT_USER_ACTIVITY_START))
            got = await good.get_session(pb.GetSessionRequest(session_id=sid))
            self.assertEqual(got.session_id, sid)
        async with self.client(token="wrong-token") as wrong:
            with self.assertRaises(UnauthenticatedError) as cm:
                await wrong.get_session(pb.GetSessionRequest(session_id=sid))
            self.assertEqual(cm.exception.code, grpc.StatusCode.UNAUTHENTICATED)
        async with self.client(cert_file=None, key_file=None, timeout=1.5) as anonymous:  # CA and token, no certificate
            with self.assertRaises(ArbiterError) as cm:
                await anonymous.get_session(pb.GetSessionRequest(session_id=sid))
            self.assertIn(cm.exception.code, (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED))
        # The arbiter's spans are in the trace the client named (console exporter,
        # flushed as it stops).
        self.arbiter.terminate()
        await self.arbiter.wait()
        self.out.seek(0)
        spans = self.out.read().decode(errors="replace")
        self.assertIn(TRACE_ID, spans, spans[:2000] + self.log())


if __name__ == "__main__":
    unittest.main()
