#!/usr/bin/env python3
"""Checks that the code snippets a README shows are cut from the agents the tests run.

    python3 clients/e2e/snippets.py README.md clients/node/README.md ...

A fenced code block is checked when the line before its opening fence (blank lines
aside) is an HTML comment naming its source, relative to the repository root:

    <!-- snippet: clients/node/examples/stack-genai.ts -->

Every line of the block must be a line of that file (leading and trailing white space
aside), in the file's order and with no line of the file left out between two of them,
except where the block has a line that is only "..." (or a comment that is only
"..."): there the file may go on for any number of lines. Blank lines count for
neither. Prints one line per snippet checked; exits 1 naming the first line of each
snippet that drifted from its file, 2 on a usage error or a source that does not exist.
"""
import os
import re
import sys

MARKER = re.compile(r"^\s*<!--\s*snippet:\s*(\S+)\s*-->\s*$")
FENCE = re.compile(r"^\s*```")
ELISION = re.compile(r"^(\.\.\.|#\s*\.\.\.|//\s*\.\.\.)$")


def snippets(path):
    """Yields (source, first line number, lines) for each marked block of a markdown file."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    source = None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = MARKER.match(line)
        if m:
            source = m.group(1)
        elif FENCE.match(line):
            start = i + 1
            j = start
            while j < len(lines) and not FENCE.match(lines[j]):
                j += 1
            if source is not None:
                yield source, start + 1, lines[start:j]
            source = None
            i = j
        elif line.strip():
            source = None  # a marker names the block right after it, nothing further
        i += 1


def drift(block, text):
    """Returns the first line of block that does not follow from text, or None."""
    src = [l.strip() for l in text.splitlines() if l.strip()]
    want = [l.strip() for l in block if l.strip()]
    # Groups of consecutive lines, split at the elisions.
    groups, cur = [], []
    for l in want:
        if ELISION.match(l):
            if cur:
                groups.append(cur)
            cur = []
        else:
            cur.append(l)
    if cur:
        groups.append(cur)
    at = 0
    for g in groups:
        found = -1
        for k in range(at, len(src) - len(g) + 1):
            if src[k:k + len(g)] == g:
                found = k
                break
        if found < 0:
            # Name the first line of the group that breaks the run.
            for n in range(len(g), 0, -1):
                if any(src[k:k + n] == g[:n] for k in range(at, len(src) - n + 1)):
                    return g[n] if n < len(g) else g[0]
            return g[0]
        at = found + len(g)
    return None


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    bad = 0
    checked = 0
    for md in argv[1:]:
        for source, line, block in snippets(md):
            checked += 1
            p = os.path.join(root, source)
            if not os.path.isfile(p):
                print(f"{md}:{line}: snippet source {source} does not exist", file=sys.stderr)
                return 2
            with open(p, encoding="utf-8") as f:
                d = drift(block, f.read())
            if d is None:
                print(f"ok   {md}:{line} is cut from {source}")
            else:
                bad += 1
                print(f"FAIL {md}:{line} is not cut from {source}: {d!r}")
    if checked == 0:
        print("no marked snippets found", file=sys.stderr)
        return 2
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
