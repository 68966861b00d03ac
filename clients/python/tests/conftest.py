"""pytest: with ``ARBITER_EXPECT_INSTALLED=1`` (clients/test.sh runs the tests from a
copy of tests/, so the checkout is not on ``sys.path``), the session fails unless
``arbiter_client`` is the installed wheel's, in the running environment."""

from __future__ import annotations

import os
import sys

import pytest


def pytest_sessionstart(session: pytest.Session) -> None:
    if os.environ.get("ARBITER_EXPECT_INSTALLED") != "1":
        return
    import arbiter_client
    import google.protobuf
    import grpc

    where = arbiter_client.__file__ or ""
    if not where.startswith(sys.prefix):
        raise pytest.UsageError(f"arbiter_client comes from {where}, not from the environment {sys.prefix}")
    print(f"arbiter_client {arbiter_client.__version__} from {os.path.dirname(where)}; "
          f"grpcio {grpc.__version__}, protobuf {google.protobuf.__version__}")
