"""Checks that locks/test-lowest.txt pins grpcio and protobuf at pyproject.toml's floors
(the ``>=`` of each in ``[project] dependencies``), so that the "lowest" test
environment is the lowest the package claims. Prints the floors; exits 1 naming the
package whose pin differs.

    python3 clients/python/locks/check_floors.py
"""

import os
import re
import sys
import tomllib

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "..", "pyproject.toml"), "rb") as f:
    deps = tomllib.load(f)["project"]["dependencies"]
with open(os.path.join(here, "test-lowest.txt"), encoding="utf-8") as f:
    pins = dict(re.findall(r"^([a-z0-9-]+)==(\S+)", f.read(), re.M))
bad = 0
for name in ("grpcio", "protobuf"):
    spec = next((d for d in deps if re.match(rf"{name}\b", d)), "")
    m = re.search(r">=([0-9][0-9.]*)", spec)
    floor = m.group(1) if m else None
    if floor is None or pins.get(name) != floor:
        print(f"{name}: pyproject.toml says {spec!r}, locks/test-lowest.txt pins {pins.get(name)!r}")
        bad = 1
    else:
        print(f"{name} {floor}: pyproject.toml's floor, locks/test-lowest.txt's pin")
sys.exit(bad)
