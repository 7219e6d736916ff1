#!/usr/bin/env python3
"""Real HAR files, and a second RFC 9111 cache, against `cachesh replay FILE.har`.

The app's requests (scenarios.py) go to a loopback origin whose header fields the scenario sets,
twice:
- through mitmproxy (`mitmdump --set hardump=`, in its own virtual environment): no cache on the
  way, so its HAR is the app's network log, every request with the origin's answer;
- through hishel (httpx with hishel's private cache, in its own environment): what a second
  implementation of RFC 9111 does with each request, read from what reached the origin (nothing,
  a conditional request answered 304, or a request) and from hishel's own report.
Then `cachesh replay LOG.har --json` says what cachesh's cache does with each entry of the log.
Every exchange where the two decide differently must be listed in docs/http-conformance.md with
the RFC section that decides; this script writes that file from the run (--update) or checks it.

Usage: run.py [--update] [--keep DIR]   (CACHESH_BIN: the binary; CACHESH_PEER_VENVS: the venvs)
"""
import argparse
import difflib
import email.utils
import http.client
import http.server
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
from scenarios import EXAMPLE, SCENARIOS  # noqa: E402

CONFORMANCE = ROOT / "docs" / "http-conformance.md"
# Where cachesh and hishel decide one exchange differently: the scenario and request, then each
# one's decision and the reason with the RFC section. An exchange that differs and is not named
# here fails the run, and so does a named one where either side decides otherwise.
KNOWN_DIFFERENCES = {
    ("stale-by-age-revalidated", 2): ("revalidated", "hit",
        "hishel leaves the response's `Age` field out of its current age, so a response older than "
        "its `max-age` when it arrives is fresh to it. RFC 9111 §4.2.3 counts it "
        "(`corrected_age_value = age_value + response_delay`): the response is stale, and cachesh "
        "validates it."),
    ("stale-while-revalidate", 2): ("stale-revalidate", "hit",
        "hishel leaves the `Age` field out of its current age (RFC 9111 §4.2.3), so the response is "
        "fresh to it; to cachesh it is 600 s stale, within `stale-while-revalidate=86400`, so it is "
        "served at once and validated in the background (RFC 5861 §3)."),
    ("changed-behind-same-url", 3): ("revalidated", "fetched",
        "hishel keeps both `200` responses and picks the one with the latest `Date` (RFC 9111 §4); "
        "both carry the same second, and of two equal dates it takes the first stored, so it "
        "validates with `If-None-Match: \"v1\"` and the origin sends the whole body once more. "
        "cachesh stores the full response that answered its conditional request in place of the "
        "one it validated (RFC 9111 §4.3.3: that response is the one to use), so it sends "
        "`\"v2\"` and gets a `304`. With a later `Date` on the second response both send `\"v2\"`."),
    ("unsafe-method-invalidates", 4): ("fetched", "hit",
        "hishel does not invalidate the target of a successful `POST`, and serves the stored "
        "response. RFC 9111 §4.4: a cache MUST invalidate the target URI after a non-error answer "
        "to an unsafe method; cachesh fetches it again."),
    ("vary-star", 1): ("not-stored", "fetched",
        "Both send every request. A response with `Vary: *` always fails to match a later request "
        "(RFC 9111 §4.1), so cachesh does not store it; hishel stores it (and never serves it)."),
    ("vary-star", 2): ("not-stored", "fetched",
        "As for the first request: hishel stores a response that can never be selected (RFC 9111 "
        "§4.1), cachesh does not."),
    ("request-max-age-0", 2): ("revalidated", "hit",
        "hishel does not honour the request's `max-age=0`, and serves the stored response. RFC 9111 "
        "§5.2.1.1: the client is unwilling to accept a response whose age is more than 0 seconds, "
        "so cachesh validates it."),
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on port {port} after the deadline")


class Origin:
    """A loopback origin: serves what the scenario set, answers conditional requests itself."""

    def __init__(self) -> None:
        self.representations: dict[str, tuple[int, list, bytes]] = {}
        self.log: list[dict] = []
        self.lock = threading.Lock()
        origin = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def answer(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                path = self.path
                inm = self.headers.get("If-None-Match")
                ims = self.headers.get("If-Modified-Since")
                with origin.lock:
                    status, fields, body = origin.representations.get(path, (404, [], b""))
                    if method not in ("GET", "HEAD"):
                        status, fields, body = 200, [("Content-Type", "application/json")], b'{"ok":true}'
                    conditional = method in ("GET", "HEAD") and (inm is not None or ims is not None)
                    if conditional and status == 200 and origin.not_modified(fields, inm, ims):
                        status, body = 304, b""
                    origin.log.append({"method": method, "path": path, "conditional": conditional,
                                       "validator": inm or ims, "status": status})
                # send_response_only: BaseHTTPRequestHandler's send_response adds its own Date and Server.
                self.send_response_only(status)
                names = {name.lower() for name, _ in fields}
                if "date" not in names:
                    self.send_header("Date", email.utils.formatdate(usegmt=True))
                for name, value in fields:
                    self.send_header(name, value)
                if "content-type" not in names and status != 304:
                    self.send_header("Content-Type", "application/json")
                if status != 304:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if method != "HEAD" and status != 304:
                    self.wfile.write(body)

            def do_GET(self) -> None:
                self.answer("GET")

            def do_HEAD(self) -> None:
                self.answer("HEAD")

            def do_POST(self) -> None:
                self.answer("POST")

            def do_PUT(self) -> None:
                self.answer("PUT")

            def do_DELETE(self) -> None:
                self.answer("DELETE")

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @staticmethod
    def not_modified(fields: list, inm: str | None, ims: str | None) -> bool:
        etag = next((v for n, v in fields if n.lower() == "etag"), None)
        if inm is not None:
            if inm.strip() == "*":
                return True
            weak = lambda tag: tag.strip().removeprefix("W/")  # noqa: E731
            return etag is not None and any(weak(t) == weak(etag) for t in inm.split(","))
        modified = next((v for n, v in fields if n.lower() == "last-modified"), None)
        if ims is None or modified is None:
            return False
        try:
            return email.utils.parsedate_to_datetime(modified) <= email.utils.parsedate_to_datetime(ims)
        except (TypeError, ValueError):
            return False

    def set(self, path: str, status: int, fields: list, body: bytes) -> None:
        with self.lock:
            self.representations[path] = (status, fields, body)

    def requests_since(self, mark: int) -> list[dict]:
        with self.lock:
            return self.log[mark:]

    def mark(self) -> int:
        with self.lock:
            return len(self.log)


def venv_python(venvs: pathlib.Path, name: str) -> pathlib.Path:
    python = venvs / name / "bin" / "python"
    if not python.exists():
        raise SystemExit(f"no {name} environment at {venvs / name}: run Tests/http-peers/venvs.sh")
    return python


def hishel_decision(method: str, report: dict, reached: list[dict]) -> str:
    """What hishel did with one request, in `replay FILE.har`'s words (SPEC §5.5), from what
    reached the origin and hishel's report."""
    if method not in ("GET", "HEAD"):
        return "forwarded"
    if not reached:
        return "hit" if report["from_cache"] else "no-request"
    last = reached[-1]
    if last["conditional"] and last["status"] == 304:
        return "revalidated"
    return "fetched" if report["stored"] else "not-stored"


def record(venvs: pathlib.Path, workdir: pathlib.Path, scenarios=SCENARIOS) -> tuple[pathlib.Path, list[dict]]:
    """Runs every scenario through mitmproxy (the HAR) and hishel; returns the HAR and the rows."""
    origin = Origin()
    mitm_port = free_port()
    har = workdir / "peers.har"
    mitmdump = venvs / "mitmproxy" / "bin" / "mitmdump"
    venv_python(venvs, "mitmproxy")
    proxy = subprocess.Popen(
        [str(mitmdump), "-q", "--mode", f"reverse:http://127.0.0.1:{origin.port}",
         "--listen-host", "127.0.0.1", "--listen-port", str(mitm_port),
         "--set", f"hardump={har}", "--set", f"confdir={workdir / 'mitmproxy-conf'}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    hishel = subprocess.Popen([str(venv_python(venvs, "hishel")), str(HERE / "hishel_worker.py")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    rows = []
    try:
        wait_for_port(mitm_port, time.monotonic() + 60)
        for name, rfc, steps in scenarios:
            step_number = 0
            for step in steps:
                if step[0] == "set":
                    _, path, status, fields, body = step
                    origin.set(path, status, fields, body)
                    continue
                method, path, fields = step[0].upper(), step[1], step[2]
                body = b'{"x":1}' if method in ("POST", "PUT", "PATCH") else None
                # The app's request as the network log shows it: no cache between it and mitmproxy.
                connection = http.client.HTTPConnection("127.0.0.1", mitm_port, timeout=30)
                connection.request(method, path, body=body, headers=dict(fields))
                connection.getresponse().read()
                connection.close()
                # The same request through hishel, straight to the origin.
                mark = origin.mark()
                hishel.stdin.write(json.dumps({
                    "method": method, "url": f"http://127.0.0.1:{origin.port}{path}",
                    "headers": fields, "body": body.decode() if body else None}) + "\n")
                hishel.stdin.flush()
                line = hishel.stdout.readline()
                if not line:
                    raise SystemExit("hishel's worker ended early")
                report = json.loads(line)
                step_number += 1
                reached = origin.requests_since(mark)
                rows.append({"scenario": name, "step": step_number, "rfc": rfc, "method": method,
                             "path": path, "request_headers": fields,
                             "hishel": hishel_decision(method, report, reached),
                             "hishel_sent": [r["validator"] or "" for r in reached]})
    finally:
        hishel.stdin.close()
        hishel.wait(timeout=60)
        proxy.send_signal(signal.SIGINT)
        try:
            _, err = proxy.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proxy.kill()
            raise SystemExit("mitmdump did not stop")
        origin.server.shutdown()
    if not har.exists():
        raise SystemExit(f"mitmdump wrote no HAR: {err.strip()[-400:]}")
    return har, rows


def cachesh_rows(har: pathlib.Path) -> list[dict]:
    """`cachesh replay LOG.har --json`'s rows (SPEC §5.5)."""
    binary = os.environ.get("CACHESH_BIN", str(ROOT / ".build" / "debug" / "cachesh"))
    done = subprocess.run([binary, "--json", "-c", f"replay {har}"], capture_output=True, text=True,
                          timeout=120)
    if done.returncode != 0:
        raise SystemExit(f"cachesh replay failed ({done.returncode}): {done.stderr.strip()[-600:]}")
    return json.loads(done.stdout)["rows"]


def transcripts_verify(har: pathlib.Path, workdir: pathlib.Path) -> list[str]:
    """`cachesh --transcribe LOG.har` (plain and `--redact`) verifies under `--safe`: the problems."""
    binary = os.environ.get("CACHESH_BIN", str(ROOT / ".build" / "debug" / "cachesh"))
    problems = []
    for extra in ([], ["--redact"]):
        done = subprocess.run([binary, "--transcribe", str(har)] + extra, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            problems.append(f"--transcribe {' '.join(extra)} failed: {done.stderr.strip()[-400:]}")
            continue
        transcript = workdir / ("redacted.transcript" if extra else "plain.transcript")
        transcript.write_text(done.stdout)
        verify = subprocess.run([binary, "--verify", "--safe", str(transcript)], capture_output=True, text=True, timeout=120)
        if verify.returncode != 0:
            problems.append(f"the transcript of --transcribe {' '.join(extra)} does not verify: "
                            f"{(verify.stdout + verify.stderr).strip()[-600:]}")
    return problems


def compare(rows: list[dict], replayed: list[dict]) -> tuple[str, list[str]]:
    """The conformance page, and what is wrong: an unexplained difference, or a listed one gone."""
    if len(replayed) != len(rows):
        return "", [f"cachesh replayed {len(replayed)} rows of a log of {len(rows)} requests"]
    problems = []
    table = ["| scenario | request | decided by | cachesh | hishel |", "|---|---|---|---|---|"]
    differences = []
    for row, got in zip(rows, replayed):
        ident = (row["scenario"], row["step"])
        if got["method"] != row["method"] or not got["key"].endswith(":" + row["path"]):
            problems.append(f"{ident}: cachesh's row is {got['method']} {got['key']}, the log's "
                            f"{row['method']} {row['path']}")
            continue
        fields = "".join(f" ({n}: {v})" for n, v in row["request_headers"])
        mark = ""
        known = KNOWN_DIFFERENCES.get(ident)
        if known is not None and (got["decision"], row["hishel"]) != known[:2]:
            problems.append(f"{row['scenario']} request {row['step']}: cachesh {got['decision']}, "
                            f"hishel {row['hishel']}; the listed difference is cachesh {known[0]}, "
                            f"hishel {known[1]}")
            continue
        if got["decision"] != row["hishel"]:
            if known is None:
                problems.append(f"{row['scenario']} request {row['step']}: cachesh {got['decision']}, "
                                f"hishel {row['hishel']}, and no reason is listed")
                continue
            reason = known[2]
            differences.append(f"- **{row['scenario']}**, request {row['step']} "
                               f"({row['method']} {row['path']}): cachesh `{got['decision']}`, hishel "
                               f"`{row['hishel']}`. {reason}")
            mark = " ≠"
        table.append(f"| {row['scenario']} | {row['step']}: {row['method']} {row['path']}{fields} "
                     f"| {row['rfc']} | {got['decision']}{mark} | {row['hishel']} |")
    page = "\n".join([
        "# HTTP conformance: cachesh beside hishel",
        "",
        "Generated by `Tests/http-peers/run.py --update`; `make test-http-peers` (part of `make test`)",
        "checks it. The app's requests of `Tests/http-peers/scenarios.py` go to a loopback origin",
        "twice: through mitmproxy, with no cache, to make a real network log (HAR), and through",
        "hishel's private cache (a second implementation of RFC 9111, in Python). `cachesh replay",
        "LOG.har` then decides each request of the log with a private HTTP namespace. The columns",
        "use `replay`'s words (docs/SPEC.md §5.5): what each cache did with the request. Versions:",
        f"{pinned('mitmproxy')}, {pinned('hishel')}.",
        "",
        *table,
        "",
        "## Where they differ, and the RFC section that decides",
        "",
        *(differences or ["Nowhere."]),
        "",
    ])
    return page, problems


def pinned(name: str) -> str:
    for line in (HERE / f"requirements-{name}.txt").read_text().splitlines():
        if line.lower().startswith(name + "=="):
            return line.replace("==", " ")
    return name


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--update", action="store_true", help="rewrite docs/http-conformance.md")
    parser.add_argument("--keep", help="copy the HAR and the rows to this folder")
    parser.add_argument("--example", help="record scenarios.EXAMPLE's session as DIR/app.har, and stop")
    args = parser.parse_args()
    venvs = pathlib.Path(os.environ.get("CACHESH_PEER_VENVS", ROOT / ".build" / "peer-venvs"))
    if args.example:
        with tempfile.TemporaryDirectory(prefix="cachesh-peers-") as tmp:
            har, _ = record(venvs, pathlib.Path(tmp), EXAMPLE)
            pathlib.Path(args.example).mkdir(parents=True, exist_ok=True)
            shutil.copy(har, pathlib.Path(args.example) / "app.har")
        return 0
    with tempfile.TemporaryDirectory(prefix="cachesh-peers-") as tmp:
        workdir = pathlib.Path(tmp)
        har, rows = record(venvs, workdir)
        if args.keep:
            keep = pathlib.Path(args.keep)
            keep.mkdir(parents=True, exist_ok=True)
            shutil.copy(har, keep / "peers.har")
            (keep / "hishel.json").write_text(json.dumps(rows, indent=1) + "\n")
        replayed = cachesh_rows(har)
        transcribed = transcripts_verify(har, workdir)
    page, problems = compare(rows, replayed)
    problems += transcribed
    for problem in problems:
        print(f"http-peers: {problem}", file=sys.stderr)
    if problems:
        return 1
    if args.update:
        CONFORMANCE.write_text(page)
        print(f"wrote {CONFORMANCE.relative_to(ROOT)}")
    elif not CONFORMANCE.exists() or CONFORMANCE.read_text() != page:
        was = CONFORMANCE.read_text().splitlines() if CONFORMANCE.exists() else []
        name = str(CONFORMANCE.relative_to(ROOT))
        difference = difflib.unified_diff(was, page.splitlines(), name, "this run", lineterm="", n=0)
        print(f"http-peers: {name} is not what this run gives (run Tests/http-peers/run.py --update "
              "if the change is right):", file=sys.stderr)
        print("\n".join(list(difference)[:60]), file=sys.stderr)
        return 1
    same = sum(1 for r, g in zip(rows, replayed) if r["hishel"] == g["decision"])
    print(f"http-peers: {len(rows)} requests in a real HAR; cachesh and hishel decide {same} alike, "
          f"{len(rows) - same} differently, each for its listed RFC reason; its transcripts, plain and "
          "redacted, verify under --safe")
    return 0


if __name__ == "__main__":
    sys.exit(main())
