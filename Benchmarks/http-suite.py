#!/usr/bin/env python3
"""The public HTTP cache test suite (../shared/cache-tests, see its RUNNING.md) against caches
put in front of its origin server, each in the same run, counts side by side.

    python3 Benchmarks/http-suite.py [--cache none] [--cache squid] [--cache cachesh] [--cache 'NAME=COMMAND']
                                     [--runs N] [--suite DIR] [--json FILE] [--expected FILE]

Each --cache is measured in turn (default: none and squid):
  none          the suite's client talks to the origin straight (no cache: the floor);
  squid         Debian's squid as a reverse proxy, configured as RUNNING.md says;
  cachesh       `cachesh proxy` (CACHESH_BIN, else .build/release/cachesh, else .build/debug/cachesh),
                its log in the run's folder;
  NAME=COMMAND  any reverse proxy started by COMMAND, where {port} is the port it must listen on
                and {origin} the origin server's (e.g. a build of `cachesh proxy`).
Every server listens on a free loopback port and is stopped afterwards. It prints, per cache,
how many of the suite's tests pass in each run (out of those it reports: 365), then a table by suite section and
the required tests (not `kind: optimal` or `check`) each cache fails. The suite pauses on the
real clock: a run takes about a minute. Nothing here is timed: the counts are the figures.

With --expected FILE (make test-http: Tests/http/expected-pass.txt, one test id a line, `#`
comments; an id followed by `timing` may fail, as it depends on the real clock's timing), it
exits 1 when a listed test fails in any run of the one cache measured: a regression.
"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# The suite beside the checkout (RUNNING.md there), or where CACHE_TESTS says.
DEFAULT_SUITE = os.environ.get("CACHE_TESTS") or os.path.normpath(os.path.join(HERE, "..", "..", "shared", "cache-tests"))

SQUID_CONF = """http_port 127.0.0.1:{port} accel defaultsite=localhost no-vhost
cache_peer 127.0.0.1 parent {origin} 0 no-query no-digest originserver default name=myAccel
acl our_sites dstdomain localhost
cache_peer_access myAccel allow all
http_access allow all
shutdown_lifetime 1 second
connect_retries 3
pid_filename {dir}/squid.pid
cache_log {dir}/cache.log
access_log none
cache_mem 64 MB
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, process, what, deadline=60):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if process.poll() is not None:
            sys.exit(f"{what} exited ({process.returncode}) before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"{what} did not listen on {port} within {deadline} s")


def stop(process):
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def suite_sections(suite):
    """Each section of the suite: id, name and its tests' ids and kinds, read from tests/index.mjs."""
    script = ("import t from " + json.dumps("file://" + os.path.join(suite, "tests", "index.mjs")) + ";"
              "console.log(JSON.stringify(t.map(s => ({id: s.id, name: s.name,"
              " tests: s.tests.map(x => ({id: x.id, kind: x.kind || 'required'}))}))))")
    out = subprocess.run(["node", "--input-type=module", "-e", script], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def start_origin(suite, directory):
    port = free_port()
    env = dict(os.environ, npm_config_protocol="http", npm_config_port=str(port),
               npm_config_pidfile=os.path.join(directory, "origin.pid"))
    process = subprocess.Popen(["node", "test-engine/server/server.mjs"], cwd=suite, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    wait_for_port(port, process, "the suite's origin server")
    return process, port


def cachesh_binary():
    if os.environ.get("CACHESH_BIN"):
        return os.path.abspath(os.environ["CACHESH_BIN"])
    for kind in ("release", "debug"):
        path = os.path.join(HERE, "..", ".build", kind, "cachesh")
        if os.path.exists(path):
            return os.path.normpath(path)
    sys.exit("no cachesh binary: run swift build (or set CACHESH_BIN)")


def start_cache(name, command, origin, directory, inspect=None):
    """The cache `name` in front of `origin`; returns its process (or None) and the port to test.
    `inspect`: a socket path cachesh proxy starts its inspector on (`--inspect`)."""
    if name == "none":
        return None, origin
    port = free_port()
    if name == "cachesh":
        argv = [cachesh_binary(), "proxy", "--listen", f"127.0.0.1:{port}", "--upstream", f"http://127.0.0.1:{origin}",
                "--log", os.path.join(directory, "proxy.log")] + (["--inspect", inspect] if inspect else [])
    elif name == "squid":
        conf = os.path.join(directory, "squid.conf")
        with open(conf, "w") as f:
            f.write(SQUID_CONF.format(port=port, origin=origin, dir=directory))
        argv = ["squid", "-N", "-f", conf]
    else:
        argv = ["sh", "-c", command.format(port=port, origin=origin)]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    wait_for_port(port, process, name)
    return process, port


def run_suite(suite, port):
    env = dict(os.environ, npm_config_base=f"http://127.0.0.1:{port}", npm_package_config_id="")
    out = subprocess.run(["node", "--no-warnings", "test-engine/cli.mjs"], cwd=suite, env=env,
                         capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        sys.exit(f"the suite's client failed ({out.returncode}): {out.stderr[-2000:]}")
    return json.loads(out.stdout)


def attached(inspect_socket, directory, run):
    """Runs `run()` with a shell attached to the proxy's inspector (`cachesh attach SOCKET -c
    'watch proxy:*'`), then, the origin still serving, asks the proxy's stats through another
    attachment; exits 1 unless the watching shell saw the suite's responses stored and the proxy
    answered hits. Returns what `run()` returned."""
    for _ in range(200):
        if os.path.exists(inspect_socket):
            break
        time.sleep(0.05)
    watched = os.path.join(directory, "watch.out")
    with open(watched, "w") as out:
        watcher = subprocess.Popen([cachesh_binary(), "attach", inspect_socket, "-c", "watch proxy:*"], stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    try:
        result = run()
        stats = subprocess.run([cachesh_binary(), "attach", inspect_socket, "--json", "-c", "stats proxy"],
                               capture_output=True, text=True, timeout=60)
    finally:
        stop(watcher)
    with open(watched) as f:
        seen = f.read()
    changes = sum(1 for line in seen.splitlines() if " proxy:" in line and not line.startswith("watching"))
    try:
        hits = json.loads(stats.stdout)["hits"]
    except (ValueError, KeyError, TypeError):
        sys.exit(f"http-suite: attach: stats proxy gave {stats.returncode}: {stats.stdout[:500]} {stats.stderr[:500]}")
    print(f"attach: a shell attached to cachesh proxy while the suite ran saw {changes} changes; the proxy's stats: {hits} hits")
    if changes == 0 or hits == 0:
        sys.exit(f"http-suite: attach: expected changes and hits through the inspector\n{seen[:2000]}")
    return result


def measure(name, command, suite, runs, attach=False):
    results = []
    with tempfile.TemporaryDirectory(prefix="http-suite-") as directory:
        origin, origin_port = start_origin(suite, directory)
        try:
            for _ in range(runs):
                inspect_socket = os.path.join(directory, "inspect.sock") if attach and name == "cachesh" else None
                cache, port = start_cache(name, command, origin_port, directory, inspect=inspect_socket)
                try:
                    if inspect_socket:
                        results.append(attached(inspect_socket, directory, lambda: run_suite(suite, port)))
                    else:
                        results.append(run_suite(suite, port))
                finally:
                    if cache is not None:
                        stop(cache)
        finally:
            stop(origin)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", action="append", help="none, squid or NAME=COMMAND (repeatable)")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--suite", default=DEFAULT_SUITE)
    parser.add_argument("--json", help="write every result here")
    parser.add_argument("--expected", help="the test ids expected to pass (exit 1 when one fails)")
    parser.add_argument("--attach", action="store_true",
                        help="cachesh proxy starts its inspector, and a shell attached with watch proxy:* must see the run")
    args = parser.parse_args()
    caches = []
    for spec in args.cache or ["none", "squid"]:
        name, _, command = spec.partition("=")
        if name not in ("none", "squid", "cachesh") and not command:
            sys.exit(f"--cache {spec}: give NAME=COMMAND, with {{port}} and {{origin}} in COMMAND")
        caches.append((name, command))
    if not os.path.isfile(os.path.join(args.suite, "tests", "index.mjs")):
        message = (f"http-suite: the public HTTP cache test suite is not at {args.suite} "
                   "(it is read from ../shared/cache-tests beside the checkout, or CACHE_TESTS=DIR)")
        if args.expected:
            # make test on a checkout without the suite beside it: said loudly, not failed.
            print(message + ": the suite was not run", file=sys.stderr)
            sys.exit(0)
        sys.exit(message)
    sections = suite_sections(args.suite)

    measured = {}
    for name, command in caches:
        measured[name] = measure(name, command, args.suite, args.runs, attach=args.attach)
        counts = [f"{sum(1 for v in r.values() if v is True)} of {len(r)}" for r in measured[name]]
        print(f"{name}: {', '.join(counts)} passed", flush=True)

    # By section, from each cache's first run.
    width = max(len(s["name"]) for s in sections)
    print()
    print(f"{'section':<{width}}  " + "  ".join(f"{name:>9}" for name, _ in caches))
    for section in sections:
        row = []
        for name, _ in caches:
            result = measured[name][0]
            row.append(f"{sum(1 for t in section['tests'] if result.get(t['id']) is True)}/{len(section['tests'])}")
        print(f"{section['name']:<{width}}  " + "  ".join(f"{cell:>9}" for cell in row))
    for name, _ in caches:
        result = measured[name][0]
        failed = [t["id"] for s in sections for t in s["tests"]
                  if t["kind"] == "required" and t["id"] in result and result[t["id"]] is not True]
        not_run = [t["id"] for s in sections for t in s["tests"] if t["id"] not in result]
        print(f"\n{name}: {len(failed)} required tests fail" + (": " + ", ".join(failed) if failed else "")
              + (f" ({len(not_run)} not run for a proxy: {', '.join(not_run)})" if not_run else ""))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(measured, f, indent=1, sort_keys=True)
    if args.expected:
        sys.exit(check_expected(args.expected, caches, measured))


def check_expected(path, caches, measured):
    """1 when a test the file lists (not marked `timing`) failed in a run of the last cache measured."""
    expected, timing = [], set()
    with open(path) as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            expected.append(words[0])
            if "timing" in words[1:]:
                timing.add(words[0])
    name = caches[-1][0]
    regressions = []
    for i, result in enumerate(measured[name]):
        for test in expected:
            if result.get(test) is not True and test not in timing:
                regressions.append(f"run {i + 1}: {test}: {json.dumps(result.get(test, 'not run'))}")
    tolerated = sorted({t for r in measured[name] for t in timing if r.get(t) is not True})
    if tolerated:
        print(f"\n{name}: failed, tolerated (real-clock timing): {', '.join(tolerated)}")
    newly = sorted({t for r in measured[name] for t, v in r.items() if v is True} - set(expected))
    if newly:
        print(f"{name}: passed, not in {path} (add them): {', '.join(newly)}")
    if regressions:
        print(f"\n{name}: {len(regressions)} regressions against {path}:\n  " + "\n  ".join(regressions))
        return 1
    print(f"{name}: every test in {path} passed")
    return 0


if __name__ == "__main__":
    main()
