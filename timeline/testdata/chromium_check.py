#!/usr/bin/env python3
"""Checks for timeline/test.sh on what headless Chromium made of a timeline page.

  chromium_check.py dom DOM REPLAY_JSONL   the DOM Chromium dumped (--dump-dom) shows
                                           what the replay printed: every call id
                                           (with its skip or response status), every
                                           decision with its reason (hover title and
                                           the decisions table), every note; and the
                                           page's script ran. Prints the story.
  chromium_check.py expect DOM             the C_on_run2 session: its two call ids, the
                                           skip, the duplicate's cancelled response and
                                           the cancel decision with the stop's reason.
  chromium_check.py inject PAGE JS OUT     a copy of PAGE without its content security
                                           policy, with JS run after the page's script.
  chromium_check.py layout DOM             the layout check's verdict (layoutcheck.js).
  chromium_check.py png FILE W H           FILE is a W x H PNG.
  chromium_check.py console LOG            Chromium's log (--enable-logging=stderr
                                           --v=1) holds no console message: no error,
                                           no policy violation.
"""
import json
import re
import struct
import sys
from html.parser import HTMLParser


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children, self.text = [], []

    def all_text(self):
        out = list(self.text)
        for c in self.children:
            out.append(c.all_text())
        return "".join(out)

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    def title(self):
        for c in self.children:
            if c.tag == "title":
                return c.all_text()
        return ""


VOID = {"meta", "br", "img", "input", "link", "hr", "col", "area", "base", "wbr", "source"}
SVG_EMPTY = {"rect", "line", "circle", "path"}


class Tree(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", [], None)
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.text.append(data)


def parse(path):
    t = Tree()
    with open(path, encoding="utf-8") as f:
        t.feed(f.read())
    return t.root


failures = []


def fail(msg):
    failures.append(msg)


def groups(root, kind):
    return [n for n in root.walk() if n.tag == "g" and n.attrs.get("data-kind") == kind]


def job_norm(j):
    # A job id carries the session's epoch ("job-1.xe50bk"): another session's differs.
    return re.sub(r"\..*$", "", j or "")


def story(root):
    """What the page says, with job ids without their epoch, for comparing pages."""
    s = []
    for g in groups(root, "call"):
        s.append("call %s %s job=%s" % (g.attrs.get("data-call"), g.attrs.get("data-status"), job_norm(g.attrs.get("data-job"))))
    for g in groups(root, "decision"):
        reason = g.title().split("reason: ", 1)[-1].split("\n")[0]
        s.append("decision %s opened-by=%s %s: %s" % (job_norm(g.attrs.get("data-job")), g.attrs.get("data-call"), g.attrs.get("data-decision"), reason))
    for g in groups(root, "hold"):
        s.append("hold %s utt=%s" % (job_norm(g.attrs.get("data-job")), g.attrs.get("data-utt", "")))
    for g in groups(root, "utterance"):
        texts = [t.all_text() for t in g.walk() if t.tag == "text" and t.attrs.get("class") != "inside"]
        s.append("utterance %s %s" % (g.attrs.get("data-utt"), " ".join(texts)))
    for g in groups(root, "note"):
        s.append("note %s %s" % (job_norm(g.attrs.get("data-job")), g.title().split("\n")[-1]))
    return sorted(s)


def check_dom(dom_path, replay_path):
    root = parse(dom_path)
    html = next((n for n in root.walk() if n.tag == "html"), None)
    if html is None or html.attrs.get("data-timeline") != "ready":
        fail("the page's script did not run to its end (no data-timeline=ready on <html>)")
    lines = [json.loads(l) for l in open(replay_path, encoding="utf-8") if l.strip()]
    calls = {g.attrs.get("data-call"): g for g in groups(root, "call")}
    decisions = groups(root, "decision")
    rows = [n for n in root.walk() if n.tag == "tr"]
    notes = groups(root, "note")
    if not lines:
        fail("the replay printed nothing")
    for l in lines:
        out = l.get("out")
        if out == "call":
            if l["call_id"] not in calls:
                fail("no call %s in the picture" % l["call_id"])
            if not any(r.attrs.get("data-call") == l["call_id"] for r in rows):
                fail("no call %s in the calls table" % l["call_id"])
        elif out == "skip":
            g = calls.get(l["call_id"])
            if g is None or g.attrs.get("data-status") != "skip" or l["reason"] not in g.title():
                fail("call %s is not drawn skipped (%s)" % (l["call_id"], l["reason"]))
        elif out == "response" and l.get("final", True):
            g = calls.get(l["call_id"])
            want = l["payload"].get("status", "")
            if g is None or g.attrs.get("data-status") != want:
                fail("call %s is not drawn answered %s" % (l["call_id"], want))
        elif out == "decision":
            match = [g for g in decisions if g.attrs.get("data-job") == l["job_id"] and g.attrs.get("data-decision") == l["decision"]
                     and g.attrs.get("data-call") == l["call_id"]]
            if not match:
                fail("no %s decision on %s in the picture" % (l["decision"], l["job_id"]))
                continue
            if "reason: " + l["reason"] not in match[0].title():
                fail("decision on %s: its hover title lacks the reason %r" % (l["job_id"], l["reason"]))
            label = "".join(t.all_text() for t in match[0].walk() if t.tag == "text").rstrip("…")
            if not (l["decision"] + ": " + l["reason"]).startswith(label) or len(label) < 20:
                fail("decision on %s: the label beside it is %r" % (l["job_id"], label))
            if not any(r.attrs.get("data-job") == l["job_id"] and l["reason"] in r.all_text() for r in rows):
                fail("decision on %s: not in the decisions table with its reason" % l["job_id"])
        elif out == "note":
            if not any(l["text"] in g.title() for g in notes):
                fail("no note %r in the picture" % l["text"])
    print("\n".join(story(root)))


def check_expected(dom_path):
    root = parse(dom_path)
    calls = {g.attrs.get("data-call"): g for g in groups(root, "call")}
    first, reissue = "fc_1792165045038015411", "fc_7334104368860656461"
    if sorted(calls) != sorted([first, reissue]):
        fail("calls %s, want %s and %s" % (sorted(calls), first, reissue))
    if first in calls and (calls[first].attrs.get("data-status") != "skip" or "abandoned" not in calls[first].title()):
        fail("%s is not skipped as abandoned" % first)
    if reissue in calls and calls[reissue].attrs.get("data-status") != "cancelled":
        fail("%s is not answered cancelled" % reissue)
    d = groups(root, "decision")
    reason = 'stop intent in user speech: "Actually, stop. Don\'t book it."'
    if len(d) != 1 or d[0].attrs.get("data-decision") != "cancel" or d[0].attrs.get("data-call") != first or reason not in d[0].title():
        fail("the decision is not one cancel of %s's job with the stop's reason: %s" % (first, [(g.attrs, g.title()) for g in d]))
    holds = groups(root, "hold")
    if len(holds) != 1 or "abandoned" not in holds[0].title():
        fail("the job is not drawn held by abandonment: %s" % [g.title() for g in holds])
    lanes = [n.attrs.get("data-lane") for n in root.walk() if n.tag == "g" and "data-lane" in n.attrs]
    if lanes != ["user", "model", "calls", "jobs", "notes"]:
        fail("lanes %s" % lanes)


def inject(page, js, out):
    with open(page, encoding="utf-8") as f:
        s = f.read()
    s = "\n".join(l for l in s.split("\n") if 'http-equiv="Content-Security-Policy"' not in l)
    with open(js, encoding="utf-8") as f:
        s = s.replace("</body>", "<script>" + f.read() + "</script>\n</body>")
    with open(out, "w", encoding="utf-8") as f:
        f.write(s)


def check_layout(dom_path):
    with open(dom_path, encoding="utf-8") as f:
        m = re.search(r'<pre id="layout-check">(\{.*?)</pre>', f.read(), re.S)
    if not m:
        fail("the layout check did not run")
        return
    raw = m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    v = json.loads(raw)
    if v["texts"] < 5:
        fail("only %d texts drawn" % v["texts"])
    for p in v["problems"]:
        fail(p)


def check_png(path, w, h):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        fail("%s is not a PNG" % path)
        return
    gw, gh = struct.unpack(">II", head[16:24])
    if (gw, gh) != (int(w), int(h)):
        fail("%s is %dx%d, want %sx%s" % (path, gw, gh, w, h))


def check_console(log):
    with open(log, encoding="utf-8", errors="replace") as f:
        msgs = [l.strip() for l in f if ":CONSOLE" in l]
    for m in msgs:
        fail("console: " + m)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    {"dom": check_dom, "expect": check_expected, "inject": inject, "layout": check_layout, "png": check_png, "console": check_console}[cmd](*args)
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
