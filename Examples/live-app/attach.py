#!/usr/bin/env python3
"""The live app with a shell attached (docs/SPEC.md §9): the app (client/, started with --pause)
starts CacheInspector with one line and plays its user session in parts; between them this
script, through `cachesh attach`, records the session, lists the keys, watches the like being
rolled back, invalidates the feed and sees the app fetch it again; then the transcript it recorded
is verified on the virtual clock.

    attach.py CACHESH CLIENT http://127.0.0.1:PORT WORKDIR

Every wait is for a line, with a generous deadline (a busy machine is slow); nothing is timed.
"""
import os
import re
import subprocess
import sys
import threading
import time

DEADLINE = 120


class Process:
    """A child whose standard output and error are collected by threads as they come."""

    def __init__(self, name, argv):
        self.name = name
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.out = bytearray()
        self.err = bytearray()
        self.lock = threading.Condition()
        for stream, into in ((self.proc.stdout, self.out), (self.proc.stderr, self.err)):
            threading.Thread(target=self._collect, args=(stream, into), daemon=True).start()

    def _collect(self, stream, into):
        while True:
            chunk = stream.read1(65536)
            with self.lock:
                if not chunk:
                    self.lock.notify_all()
                    return
                into.extend(chunk)
                self.lock.notify_all()

    def send(self, line):
        self.proc.stdin.write((line + "\n").encode())
        self.proc.stdin.flush()

    def wait_for(self, pattern, stream="out", after=0):
        """Waits until the stream holds `pattern` (a regex) past offset `after`; returns the match's end."""
        deadline = time.monotonic() + DEADLINE
        with self.lock:
            while True:
                text = (self.out if stream == "out" else self.err)[after:].decode("utf-8", "replace")
                found = re.search(pattern, text)
                if found:
                    return after + len(text[:found.end()].encode())
                left = deadline - time.monotonic()
                if left <= 0:
                    fail(f"{self.name} printed no {pattern!r} on std{stream} within {DEADLINE} s")
                self.lock.wait(min(left, 1))

    def text(self):
        return f"--- {self.name} stdout:\n{self.out.decode(errors='replace')}\n--- stderr:\n{self.err.decode(errors='replace')}"


children = []


def fail(message):
    print(f"live-app attach: {message}", file=sys.stderr)
    for child in children:
        print(child.text(), file=sys.stderr)
        if child.proc.poll() is None:
            child.proc.kill()
    sys.exit(1)


def main():
    cachesh, client, base, work = sys.argv[1:5]
    transcript = os.path.join(work, "attached.transcript")
    app = Process("app", [client, base, "--pause"])
    children.append(app)
    app.wait_for(r"(?m)^ready$")
    app.wait_for(r"cachesh inspector: listening on (\S+)", stream="err")
    socket = re.search(r"listening on (\S+)", app.err.decode()).group(1)

    shell = Process("cachesh attach", [cachesh, "attach", socket])
    children.append(shell)
    shell.send(f"record {transcript}")
    mark = shell.wait_for(r"recording the app to .* from here on\n")
    shell.send("watch feed:*")
    mark = shell.wait_for(r"watching: feed:\*\n", after=mark)

    # The session up to the feed shown again: feed, profiles, the like the server fails, an
    # event, a push.
    app.send("")
    app.wait_for(r"(?m)^feed$")
    mark = shell.wait_for(r"\* \S+ rolled-back feed:home ", after=mark)
    shell.send("keys")
    mark = shell.wait_for(r"profile:7 ", after=mark)
    shell.send("invalidate feed:home")
    # The change is streamed during the command: before its answer or after.
    mark = max(shell.wait_for(r"keys: feed:home\n", after=mark),
               shell.wait_for(r"\* \S+ invalidated feed:home stale .*\n", after=mark))
    # The app reads the feed again: it was told it is stale, so it fetches it from its API.
    app.send("")
    app.wait_for(r"feed:home fetched again\n")
    mark = shell.wait_for(r"\* \S+ (refreshed|fetched) feed:home fresh .*\(server\)\n", after=mark)
    app.send("")
    app.wait_for(r"(?m)^done$")
    mark = shell.wait_for(r"\* \S+ cleared feed:home ", after=mark)
    shell.send("record stop")
    shell.wait_for(r"recorded \d+ calls of the app to .*\n", after=mark)
    shell.proc.stdin.close()
    # The app ends; so does the attachment.
    app.send("")
    app.proc.stdin.close()
    if app.proc.wait(timeout=DEADLINE) != 0:
        fail("the app failed")
    if shell.proc.wait(timeout=DEADLINE) != 0:
        fail("cachesh attach failed")
    shell.wait_for(r"cachesh: attach: the app ended the attachment\n", stream="err")
    verified = subprocess.run([cachesh, "--verify", "--safe", transcript], capture_output=True, text=True)
    if verified.returncode != 0:
        fail(f"the recorded transcript does not verify:\n{verified.stdout}{verified.stderr}")
    calls = sum(1 for line in open(transcript) if line.startswith("cachesh> "))
    print(f"live-app: attached, watched the rollback, invalidated the feed, the app fetched it again; "
          f"recorded {calls} commands, verified")


main()
