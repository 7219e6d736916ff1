#!/usr/bin/env python3
"""The reliability suite: attacks on the built cachesh, each printing what it tried and what held.

    python3 Tests/attack/attack.py BINARY [--smoke] [--seed N] [--fuzz-seconds S]

Kinds of attack (each a number of seeded trials):
  kill     SIGKILL a `--store` session after a random number of acknowledged commands; on
           restart every acknowledged put is there, in order, and the clock is not behind.
  corrupt  flip, zero or cut bytes of a store file; opening it gives the state or one clear error
           line (exit 2), never a crash or a hang.
  twoproc  two processes on one store: the second is refused with one line and exit 2 and the
           first's printed changes are all kept.
  hostile  scripts meant to break it: deep values, huge lines, runaway reads (`source /dev/zero`,
           a FIFO with no writer), special files as targets, control characters; values grown
           by entity patches or brought past 16 MiB, counters near 2^63 and times before 1970 in
           snapshots, numbers that would change, keys given twice, bidirectional characters; each
           must end within its time limit, without a signal, with bounded memory, print no
           control, bidirectional or line-separator character raw, print the limit's message where
           the case names one and, where it names a file it may not touch, leave that file as it
           was. Each case prints what it tried and whether it held.
  store    stores a stranger hands over: damaged older-schema stores (refused and left byte for byte
           as they were, their schema number too), a `meta.schema` or migrations table that
           contradict each other, a 0-byte file, row integers the engine cannot go on from (recency,
           times, log positions), a hard link to a store (refused under both names; nothing a first
           process printed is lost), a file or hard link where the lock file goes (left as it was),
           a mode-0444 store (read-only for root too).
  files    files cachesh writes: `--junit` naming a transcript being verified (by every spelling
           and link: left as it was), `record` on a disk that fills up (the old transcript left
           whole; nothing else left behind), a recording cut at each command (fails --verify),
           names of 248 to 255 bytes (written).
  bounds   work and output a stranger's input can cause: nested `at`, the scheduled budget under
           `--safe` and `--verify`, `--verify`'s alignment of long differing blocks and its matching
           of runs between `...` that nearly match at every line, `replay`'s lists, the timeline's bytes, restored schedules naming files, every `--safe` refusal
           failing a transcript under `--verify`; each case prints what it tried and whether it held.
  fuzz     the libFuzzer targets in Fuzz/ (ScriptFuzzer: scripts; TranscriptFuzzer: `--verify`
           of transcripts and `restore` of snapshots, with Fuzz/transcript.dict and the seed
           corpus in Fuzz/corpus/transcript) for a fixed time (skipped when they cannot be built);
           both with a dictionary of every command, option and flag, read from `help all`.

`--smoke` runs a few trials of each (as `.ci/run` does); without it, hundreds. Exit status 1 when
anything did not hold. Nothing here talks to a network.
"""
import gzip
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

LIMIT_S = 60           # a run longer than this is a hang
END_OF_RECORDING = "cachesh> # end of recording\n"   # the last line of every recording
MEMORY_LIMIT_KB = 1_500_000


class Tally:
    def __init__(self):
        self.rows = []

    def add(self, kind, tried, held, notes):
        self.rows.append((kind, tried, held, notes))
        lost = tried - held
        print(f"{kind:8} tried {tried:5}  held {held:5}  lost {lost:3}" + (f"  ({notes})" if notes else ""), flush=True)

    @property
    def failed(self):
        return any(tried != held for _, tried, held, _ in self.rows)


def cap_memory():
    """In the child: no run may take more than 4 GB of address space (a runaway read fails
    inside cachesh instead of exhausting the machine)."""
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def run(binary, args, stdin=b"", cwd=None, timeout=LIMIT_S):
    """Runs cachesh; returns (status, stdout, stderr, maxrss_kb, seconds) of that one process;
    status is -SIG on a signal, "timeout" when it was killed at the time limit."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as inp:
        inp.write(stdin)
        inp.seek(0)
        p = subprocess.Popen([binary, *args], stdin=inp, stdout=out, stderr=err, cwd=cwd, preexec_fn=cap_memory)
        # A timer kills the run at its time limit; the wait itself blocks until the child ends.
        timer = threading.Timer(timeout, p.kill)
        timer.start()
        _, wait_status, usage = os.wait4(p.pid, 0)
        timed_out = not timer.is_alive()
        timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(wait_status)
        status, rss = ("timeout" if timed_out else p.returncode), usage.ru_maxrss
        out.seek(0)
        err.seek(0)
        return status, out.read(), err.read(), rss, time.monotonic() - start


def one_error_line(err):
    lines = err.decode("utf-8", "replace").strip("\n").split("\n")
    return len(lines) == 1 and lines[0].startswith("cachesh: ")


# --- kill -9 -------------------------------------------------------------------------------

def attack_kill(binary, rng, trials, work):
    held, notes = 0, []
    pairs = 3000
    script = "".join(f"put k:{i} {i}\nadvance 1ms\n" for i in range(pairs)).encode()
    for t in range(trials):
        store = os.path.join(work, f"kill-{t}.db")
        stop_after = rng.randint(1, 2 * pairs - 1)
        p = subprocess.Popen([binary, "--store", store, "--json"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
        p.stdin.write(script)
        p.stdin.flush()
        seen = 0
        while seen < stop_after:
            chunk = p.stdout.read1(65536)
            if not chunk:
                break
            seen += chunk.count(b"\n")
        p.kill()
        p.wait()
        try:
            p.stdin.close()
        except BrokenPipeError:
            pass
        status, out, err, _, _ = run(binary, ["--store", store, "--json", "-c", "now; keys"])
        ok = False
        if status == 0:
            lines = out.decode().splitlines()
            if len(lines) == 2:
                now = json.loads(lines[0])["now_ms"]
                keys = [e["key"] for e in json.loads(lines[1])["entries"]]
                m = len(keys)
                ok = (m >= (seen + 1) // 2 and keys == [f"k:{i}" for i in range(m)] and now >= seen // 2
                      and now in (m - 1, m))
        if ok:
            held += 1
        else:
            notes.append(f"trial {t}: killed after {seen} lines: status {status} {err[:200]!r}")
    return held, "; ".join(notes[:3])


# --- corruption ----------------------------------------------------------------------------

def make_store(binary, path):
    script = "ns feed ttl=10m stale=1m max=50\n" + "".join(
        f"server set feed:{i} {{\"id\": {i}, \"likes\": {i}}}\nget feed:{i}\nput note:{i} \"n{i}\"\nadvance 1s\n"
        for i in range(60))
    status, _, err, _, _ = run(binary, ["--store", path], stdin=script.encode())
    return status == 0


def attack_corrupt(binary, rng, trials, work):
    base = os.path.join(work, "base.db")
    if not make_store(binary, base):
        return 0, "could not make the base store"
    data = open(base, "rb").read()
    held, notes = 0, []
    for t in range(trials):
        path = os.path.join(work, f"corrupt-{t}.db")
        damaged = bytearray(data)
        how = rng.choice(["flip", "zero", "cut", "garbage-page"])
        if how == "flip":
            for _ in range(rng.randint(1, 20)):
                i = rng.randrange(len(damaged))
                damaged[i] ^= 1 << rng.randrange(8)
        elif how == "zero":
            i = rng.randrange(len(damaged))
            damaged[i:i + rng.randint(1, 4096)] = bytes(min(4096, len(damaged) - i))
        elif how == "cut":
            damaged = damaged[:rng.randrange(len(damaged))]
        else:
            page = rng.randrange(max(1, len(damaged) // 4096)) * 4096
            damaged[page:page + 4096] = bytes(rng.randrange(256) for _ in range(min(4096, len(damaged) - page)))
        open(path, "wb").write(damaged)
        status, out, err, _, _ = run(binary, ["--store", path, "-c", "keys; stats"])
        if status == 0 or (status == 2 and one_error_line(err) and not out):
            held += 1
        else:
            notes.append(f"trial {t} ({how}): status {status} stderr {err[:200]!r}")
    return held, "; ".join(notes[:3])


# --- two processes -------------------------------------------------------------------------

def attack_twoproc(binary, rng, trials, work):
    held, notes = 0, []
    for t in range(trials):
        store = os.path.join(work, f"two-{t}.db")
        first = subprocess.Popen([binary, "--store", store], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
        first.stdin.write(b"put a:1 1\n")
        first.stdin.flush()
        first.stdout.readline()  # the first is open and has printed its change
        status, out, err, _, _ = run(binary, ["--store", store, "-c", "put b:1 2"])
        first.stdin.write(b"put a:2 2\n")
        first.stdin.close()
        rest = first.stdout.read()
        first.wait(timeout=LIMIT_S)
        after = run(binary, ["--store", store, "--json", "-c", "keys"])
        keys = [e["key"] for e in json.loads(after[1].decode().splitlines()[0])["entries"]] if after[0] == 0 else None
        ok = status == 2 and not out and one_error_line(err) and b"keys: a:2" in rest and keys == ["a:1", "a:2"]
        if ok:
            held += 1
        else:
            notes.append(f"trial {t}: second status {status} {err[:160]!r}; keys after {keys}")
    return held, "; ".join(notes[:3])


# --- hostile scripts -----------------------------------------------------------------------

def far_lines_restore():
    """An inline snapshot of a few KB whose 400 scheduled commands each claim line 10,000,000."""
    scheduled = [{"command": "echo x", "due": "2026-01-01T00:00:00.001Z", "file": "-c", "id": i + 1, "line": 10_000_000}
                 for i in range(400)]
    snapshot = {"clock_start": "2026-01-01T00:00:00.000Z", "entries": [], "format": "cachesh-snapshot", "id_field": "id",
                "namespaces": {"default": {"defined": False, "index": 0, "max": None, "purgeable": False,
                                           "stale_if_error_ms": None, "stale_ms": None, "timeout_ms": None, "ttl_ms": 300000}},
                "now": "2026-01-01T00:00:00.000Z",
                "pending": {"fetching": {}, "queued_mutations": [], "replaying": None, "requests": [], "scheduled": scheduled},
                "push": {}, "seq": 1000,
                "server": {"data": {}, "fail_keys": {}, "fail_next": 0, "id_field": "id", "latencies_ms": {}, "latency_ms": 100,
                           "log": [], "modified_at": {}, "online": True},
                "stats": {"evictions": 0, "expirations": 0, "fetch_failures": 0, "hits": 0, "invalidations": 0, "joined": 0,
                          "misses": 0, "namespaces": {}, "refresh_failures": 0, "refreshes": 0, "requests": 0, "rollbacks": 0,
                          "stale_hits": 0},
                "version": 1, "watches": []}
    return "restore " + json.dumps(snapshot) + "\nadvance 1ms\n"


def snapshot_with(entries=(), **fields):
    """A snapshot document (as `far_lines_restore`'s, no scheduled commands) with `entries` and
    top-level `fields` replaced."""
    snapshot = json.loads(far_lines_restore()[len("restore "):].split("\n")[0])
    snapshot["pending"]["scheduled"] = []
    snapshot["entries"] = list(entries)
    snapshot.update(fields)
    return snapshot


def entry(key, value, **fields):
    """An entry of a snapshot, stored at the clock's start."""
    e = {"expires_at": "2026-01-01T00:05:00.000Z", "key": key, "last_put": 1, "last_write": 1, "seq": 1, "stale_at": None,
         "state": "fresh", "stored_at": "2026-01-01T00:00:00.000Z", "stored_request": 1, "tags": [], "value": value}
    e.update(fields)
    return e


def value_cases(work):
    """Values and numbers a stranger's input brings (SPEC §7.1): each is refused with the
    limit's message (the last element: what must be printed), and nothing grows or traps."""
    copy = '{"id": 7, "pad": "' + "x" * 100 + '"}'
    patch = "{" + ", ".join(f'"{c}": {copy}' for c in "abcdefgh") + "}"
    big = os.path.join(work, "big-value.json")
    with open(big, "w") as f:
        json.dump(snapshot_with([entry("k1", "z" * (17 << 20))]), f)
    extreme = [("seq", snapshot_with(seq=2**63 - 2)), ("stored_at", snapshot_with([entry("k1", 1, stored_at=-2**63)])),
               ("time as ms", snapshot_with([entry("k1", 1, stored_at=1767225600000)])),
               ("state", snapshot_with([entry("k1", 1, state="expired")])),
               ("key twice", None)]
    restores = ""
    for name, document in extreme:
        text = json.dumps(document) if document else json.dumps(snapshot_with()).replace('"seq": 1000', '"seq": 1000, "seq": 2')
        path = os.path.join(work, f"extreme-{name.replace(' ', '-')}.json")
        open(path, "w").write(text)
        restores += f"restore {path}\ndiff {path}\nput a:2 2\nget a:2\n"
    versions = os.path.join(work, "versions.json")
    with open(versions, "w") as f:
        json.dump(snapshot_with([entry("k1", 1, version=2**63 - 1)]), f)
    config = os.path.join(work, "twice.json")
    open(config, "w").write('{"namespaces": {"feed": {"ttl": "1m", "ttl": "2m"}}}')
    return [
        ("entity events growing a value eightfold each", 'put big:1 {"id": 7}\n' + f"event entity 7 {patch}\n" * 8,
         None, [b"more than 16 MiB of patch work"]),
        ("a value past 16 MiB in a snapshot", f"restore {big}\nkeys\n", None, [b"larger than 16 MiB"]),
        ("a value past 16 MiB typed", "put a:1 [" + ",".join(["1e14"] * ((16 << 20) // 18 + 1)) + "]\n", None,
         [b"larger than 16 MiB"]),
        ("counters near the end of 64 bits, times before 1970, times as ms, states that lie, keys twice", restores, None,
         [b"past the largest sequence number", b"is before 1970", b"(a whole number of ms only outside the years",
          b"but the entry's times make it fresh", b'duplicate key "seq"']),
        ("numbers that would change, keys given twice", "put n:1 [1e-400]\nput n:2 99999999999999999999\n"
         'put n:3 {"a": 1, "a": 2}\n' + f"load {config}\n", None,
         [b"it would read as 0", b"must fit in 64 bits", b'duplicate key "a" at a', b'duplicate key "ttl" at namespaces.feed.ttl']),
        ("bidirectional and line-separator characters", 'put a:1 "\\u202eevil\\u2028line"\nget a:1\nput b:\u2066 1\n'
         'echo "\u2029\u200f\u061c"\n', None, [b"\\u202eevil\\u2028line"]),
        ("a put into max=0", "ns feed max=0\nput feed:a 1\n", None, [b"keys: feed:a\n"]),
        ("versions near the end of 64 bits, typed and in a snapshot",
         "server set v:1 1 version=9007199254740992\nget v:1\nserver patch v:1 2\nevent patch v:1 3 version=9007199254740992\n"
         "event patch v:1 3 version=18446744073709551616\nevent patch v:1 3 version=-1\nserver next v:1 version=99999999999999999999\n"
         f"restore {versions}\nkeys\n", None,
         [b"version= must be a whole number from 0 to 9007199254740992", b"entries[0].version: expected a version"]),
    ]


# Bidirectional and line-separator characters in UTF-8: none may reach the terminal raw.
REORDERING = [chr(c).encode() for c in (0x061C, 0x200E, 0x200F, *range(0x2028, 0x202F), *range(0x2066, 0x206A))]


def hostile_cases(work):
    fifo = os.path.join(work, "fifo")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    # A null device of our own (as root; else a plain FIFO stands in): the machine's /dev/null is
    # never a target, whatever the binary under attack does with it.
    device = os.path.join(work, "null-device")
    if not os.path.exists(device):
        try:
            os.mknod(device, 0o666 | 0o020000, os.makedev(1, 3))
        except PermissionError:
            os.mkfifo(device)
    deep = "[" * 512 + "1" + "]" * 512
    cases = [
        ("deep value at the limit", f"put a:1 {deep}\nsnapshot {work}/deep.json\nrestore {work}/deep.json\n", None),
        ("deeper than the limit", "put a:1 " + "[" * 100000 + "\n", None),
        ("entity patches growing at depth", "put d:1 " + "[" * 490 + '{"id": 1}' + "]" * 490 + "\n"
         + "".join('event entity 1 {"c": ' + "[" * 30 + "1" + "]" * 30 + "}\n" for _ in range(50)), None),
        ("a 4 MB line", "echo " + "x" * (4 << 20) + "\n", None),
        ("a 4 MB JSON value", "put a:1 [" + ",".join(["1"] * (1 << 20)) + "]\nkeys\n", None),
        ("source /dev/zero", "source /dev/zero\n", None),
        ("a FIFO with no writer", f"source {fifo}\nload {fifo}\nrestore {fifo}\n", None),
        ("snapshot onto a device", f"snapshot {device}\n", device),
        ("snapshot onto a FIFO", f"snapshot {fifo}\n", fifo),
        ("snapshot onto a directory", f"snapshot {work}\n", None),
        ("control characters everywhere", "put \x1b[31m:1 1\necho \x1b]0;pwned\x07\nput a:1 \"\\u001b[2J\"\nget a:1\n", None),
        ("a runaway schedule", "at 1ms advance 1ms\n" + "at 0ms echo x\n" * 1000 + "advance 1d\n", None),
        ("many namespaces and tags", "".join(f"put n{i}:1 1 tags=t{i}\n" for i in range(20000)) + "invalidate tag:t5\n", None),
        ("big numbers", "put n:1 1e400\nput n:2 {\"x\": 1.7e308}\nevent patch n:2 {\"x\": {\"$inc\": 1.7e308}}\n", None),
        ("scheduled commands naming far lines", far_lines_restore(), None),
        ("the clock's end", "at 106751991167d echo never\npoll a:1 every=1d\nadvance 9223372036854775807ms\n"
         "advance 106751970713d\nadvance 1d\n", None),
        ("a NUL byte and bytes that are not UTF-8", "put a:1 1\nput a:\udcff 1\necho \0\n", None),
        ("expect values split by spaces on long lines", "put a 1\n"
         + 'expect peek a value={"t":"a' + ' "x"' * 300000 + "\n"
         + 'expect peek a value=["a b"' + ", 1" * 300000 + "]\n", None,
         [b"a space splits the value of value= into words; write PATH= then the value as a word of its own"]),
        ("lost answers and commits, valid and not", "ns a timeout=1s\nserver set a:1 {\"n\":1}\nget a:1\n"
         + "server next a:1 --lost-answer\nmutate a:1 {\"n\":{\"$inc\":1}}\n" * 200
         + "server next a:9 --lost-answer\nmutate a:9 2\nserver next a:1 --commit --no-answer latency=106751991167d\n"
         "mutate a:1 3\nmutate entity 1 {}\nserver offline\nmutate a:1 4\nserver online\nadvance 1d\n"
         "server next a:1 --commit value=1\nserver next a:1 --lost-answer --no-answer\nserver next --validate --lost-answer\n"
         "server next a:1 --commit --lost-answer\nserver next a:1 --lost-answer version=1\nserver next a:1 --lost-answer error=\"\"\n"
         "get a:1\nstats\n", None,
         [b"--commit goes with a failure (--fail, error=TEXT or --no-answer), not value=",
          b"not --no-answer and --lost-answer", b"server next --validate has no --lost-answer",
          b"not --lost-answer (a lost answer is applied already)", b"version= goes with an answer that has a value",
          b"error= takes the failure's message"]),
        ("paged lists with hostile keys and forms", "".join(f"put {k}@1 1\npages {k} --next\npages {k} --refetch --nowait\n"
                                                             for k in ["a", "a@1", "a@", "l:" + "x" * 100000, "l:@@", "l:\u00e9"])
         + "pages l:x --next --refetch\npages l:x --refetch --next --nowait\npages tag:x\npages * --next\npages l:x 1\n"
         + "ns l naive=pages-marked-fresh\npages l:" + "x" * 100000 + " --refetch\n", None,
         [b"pages: --next and --refetch do not go together"]),
    ]
    return cases + value_cases(work)


def attack_hostile(binary, rng, smoke, work):
    held, notes = 0, []
    cases = hostile_cases(work)
    for name, script, untouched, *expected in cases:
        path = os.path.join(work, "hostile.cachesh")
        open(path, "w", encoding="utf-8", errors="surrogateescape").write(script)
        stat_before = os.stat(untouched) if untouched else None
        status, out, err, rss, seconds = run(binary, [path], cwd=work)
        problems = []
        if status == "timeout":
            problems.append("hung")
        elif isinstance(status, int) and status < 0:
            problems.append(f"signal {-status}")
        elif status not in (0, 1, 2):
            problems.append(f"exit {status}")
        if rss > MEMORY_LIMIT_KB:
            problems.append(f"{rss // 1024} MB")
        if untouched:
            after = os.stat(untouched)
            if (after.st_mode, after.st_ino) != (stat_before.st_mode, stat_before.st_ino):
                problems.append(f"{untouched} was replaced")
        for stream in (out, err):
            if any(b < 0x20 and b not in (0x0A, 0x09) for b in stream) or b"\x7f" in stream \
                    or any(c in stream for c in REORDERING):
                problems.append("a control, bidirectional or line-separator character reached the terminal")
                break
        for message in (expected[0] if expected else []):
            if message not in out + err:
                problems.append(f"no {message.decode()!r} printed")
        print(f"  hostile: {name}: {'; '.join(problems) if problems else 'held'} "
              f"({status}, {rss // 1024} MB, {seconds:.1f} s)", flush=True)
        if problems:
            notes.append(f"{name}: {', '.join(problems)}")
        else:
            held += 1
    return len(cases), held, "; ".join(notes)


# --- stores a stranger hands over ---------------------------------------------------------

def sqlite_edit(path, sql):
    import sqlite3
    db = sqlite3.connect(path)
    db.executescript(sql)
    db.commit()
    db.close()


def file_state(path):
    """Every byte of a file and of its -wal, for "left as it was"."""
    out = []
    for p in (path, path + "-wal"):
        out.append(open(p, "rb").read() if os.path.exists(p) else None)
    return out


def attack_store(binary, rng, smoke, work):
    """Each trial: (name, prepare(dir) -> store path, check(status, out, err, path, before) -> problem or None)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    fixture5 = os.path.join(root, "Tests", "store-schema5", "store.db")
    fixture4 = os.path.join(root, "Tests", "store-schema4", "store.db")
    fixture6 = os.path.join(root, "Tests", "store-schema6", "store.db")
    fixture7 = os.path.join(root, "Tests", "store-schema7", "store.db")
    fixture8 = os.path.join(root, "Tests", "store-schema8", "store.db")
    trials = []
    # Damaged older-schema stores: refused, every byte (schema number too) left as it was.
    damages = [
        "UPDATE entries SET stored_at = 9000000000000000 WHERE key = (SELECT key FROM entries ORDER BY recency DESC LIMIT 1)",
        "UPDATE entries SET seq = 100000 WHERE key = (SELECT key FROM entries ORDER BY recency LIMIT 1)",
        "UPDATE entries SET recency = -1 WHERE key = (SELECT key FROM entries ORDER BY recency LIMIT 1)",
        "UPDATE entries SET recency = 9223372036854775807 WHERE key = (SELECT key FROM entries ORDER BY recency LIMIT 1)",
        "UPDATE entries SET value = '{' WHERE key = (SELECT key FROM entries ORDER BY recency LIMIT 1)",
        "UPDATE entries SET stored_at = -9223372036854775808, stale_at = NULL WHERE key = (SELECT key FROM entries ORDER BY recency LIMIT 1)",
        "UPDATE state SET body = '{}'",
        "DELETE FROM state",
    ]
    for fixture in (fixture4, fixture5, fixture6, fixture7):
        for damage in (damages[:3] if smoke else damages):
            trials.append((f"schema {os.path.basename(os.path.dirname(fixture))[-1]} + {damage[:48]}", fixture, damage, "refused"))
    # Schema 8 keeps the times and sequence numbers in `fields`: the damages of its other columns,
    # and damaged `fields`; its upgrade (the entry table's declaration) is rolled back with the rest.
    damages8 = [d for d in damages if "stored_at" not in d and "seq" not in d] + [
        "UPDATE entries SET fields = x'7f01' WHERE key = (SELECT key FROM entries ORDER BY recency LIMIT 1)",
        "ALTER TABLE entries ADD COLUMN note TEXT"]
    for damage in (damages8[:2] + damages8[-2:] if smoke else damages8):
        trials.append((f"schema 8 + {damage[:48]}", fixture8, damage, "refused"))
    # meta and the migrations table contradicting each other, on a store this build made.
    metas = ["UPDATE meta SET value = '-1' WHERE name = 'schema'", "UPDATE meta SET value = '0' WHERE name = 'schema'",
             "UPDATE meta SET value = '7x' WHERE name = 'schema'", "INSERT INTO grdb_migrations VALUES ('v10')",
             "INSERT INTO grdb_migrations VALUES ('zz')", "DELETE FROM grdb_migrations WHERE identifier = 'v2'",
             "UPDATE meta SET value = '3' WHERE name = 'schema'", "DELETE FROM meta WHERE name = 'schema'",
             "UPDATE log SET position = position + 1000000", "UPDATE entries SET recency = 4611686018427387904",
             "UPDATE entries SET fields = x'7f01'", "UPDATE entries SET fields = x''", "UPDATE entries SET fields = 12",
             "UPDATE entries SET key = NULL", "UPDATE entries SET recency = NULL",
             "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = 'CREATE TABLE entries (id INTEGER PRIMARY KEY, `key\n\x1b[31mred' WHERE name = 'entries'"]
    for damage in (metas[:4] + metas[-1:] if smoke else metas):
        trials.append((damage[:56], None, damage, "refused"))
    held, notes = 0, []
    base = os.path.join(work, "store-base.db")
    if not os.path.exists(base) and not make_store(binary, base):
        return len(trials) + 5, 0, "could not make the base store"
    for t, (name, fixture, damage, want) in enumerate(trials):
        path = os.path.join(work, f"store-{t}.db")
        shutil.copy(fixture or base, path)
        sqlite_edit(path, damage)
        before = file_state(path)
        status, out, err, _, _ = run(binary, ["--store", path, "-c", "keys; put x:1 1; get x:1; advance 1s; stats"])
        after = file_state(path)
        if status == 2 and one_error_line(err) and not out and after == before:
            held += 1
        else:
            notes.append(f"{name}: status {status} {err[:120]!r}{'' if after == before else ', the file changed'}")
    tried = len(trials)
    # A 0-byte file: refused, still 0 bytes.
    tried += 1
    empty = os.path.join(work, "empty.db")
    open(empty, "wb").close()
    status, out, err, _, _ = run(binary, ["--store", empty, "-c", "put a 1"])
    if status == 2 and one_error_line(err) and os.path.getsize(empty) == 0:
        held += 1
    else:
        notes.append(f"0-byte store: status {status} {err[:120]!r}")
    # A hard link: a process on each name (each name used to get its own lock and -wal, both
    # printed their writes and one side's were lost): both are refused and neither write is there
    # once the link is gone.
    tried += 1
    one, two = os.path.join(work, "linked.db"), os.path.join(work, "linked-too.db")
    shutil.copy(base, one)
    os.link(one, two)
    first = run(binary, ["--store", one], stdin=b"put a:1 1\n")
    status2, out2, err2, _, _ = run(binary, ["--store", two, "-c", "put b:1 2"])
    os.unlink(two)
    after = run(binary, ["--store", one, "--json", "-c", "keys"])
    keys = [e["key"] for e in json.loads(after[1].decode().splitlines()[0])["entries"]] if after[0] == 0 else []
    if first[0] == 2 and one_error_line(first[2]) and status2 == 2 and one_error_line(err2) and "a:1" not in keys and "b:1" not in keys:
        held += 1
    else:
        notes.append(f"hard link: first {first[0]} {first[2][:80]!r}, second {status2} {err2[:80]!r}, keys {keys[:5]}")
    # Files at the lock file's name that cachesh did not make: left as they were.
    for kind in ("text", "hard link", "symlink"):
        tried += 1
        store = os.path.join(work, f"lockname-{kind[0]}.db")
        shutil.copy(base, store)
        lock, precious = store + "-lock", os.path.join(work, f"precious-{kind[0]}.txt")
        open(precious, "w").write("do not touch\n")
        if kind == "text":
            open(lock, "w").write("my notes\n")
        elif kind == "hard link":
            os.link(precious, lock)
        else:
            os.symlink(precious, lock)
        status, out, err, _, _ = run(binary, ["--store", store, "-c", "put a 1"])
        kept = open(precious).read() == "do not touch\n" and os.path.lexists(lock)
        if status == 2 and one_error_line(err) and kept:
            held += 1
        else:
            notes.append(f"{kind} at the lock's name: status {status} {err[:100]!r}, kept {kept}")
    # A mode-0444 store is read-only for everyone, root too.
    tried += 1
    ro = os.path.join(work, "readonly.db")
    shutil.copy(base, ro)
    os.chmod(ro, 0o444)
    before = file_state(ro)
    status, out, err, _, _ = run(binary, ["--store", ro, "-c", "put a 1"])
    if status == 1 and b"read-only" in err and file_state(ro) == before:
        held += 1
    else:
        notes.append(f"mode 0444 (uid {os.geteuid()}): status {status} {err[:100]!r}")
    return tried, held, "; ".join(notes[:4])


# --- files cachesh writes ------------------------------------------------------------------

def attack_files(binary, rng, smoke, work):
    held, notes, tried = 0, [], 0
    folder = os.path.join(work, "files")
    os.makedirs(folder, exist_ok=True)
    transcript = os.path.join(folder, "t.transcript")
    text = "cachesh> echo hi\nhi\n"
    # --junit naming the transcript: every spelling and link.
    open(transcript, "w").write(text)
    os.link(transcript, os.path.join(folder, "hard.transcript"))
    os.symlink("t.transcript", os.path.join(folder, "soft.transcript"))
    for report in ["t.transcript", "./t.transcript", "../files/t.transcript", "hard.transcript", "soft.transcript",
                   transcript, "././/t.transcript"]:
        tried += 1
        status, out, err, _, _ = run(binary, ["--verify", "t.transcript", "--junit", report], cwd=folder)
        if status == 2 and one_error_line(err) and open(transcript).read() == text:
            held += 1
        else:
            notes.append(f"--junit {report}: status {status}, transcript {'kept' if open(transcript).read() == text else 'replaced'}")
    # record on a disk that fills up: the old transcript stays whole and still verifies.
    for limit in ([3, 6] if smoke else [2, 3, 4, 5, 6, 8, 12]):
        tried += 1
        d = os.path.join(work, f"full-{limit}")
        os.makedirs(d, exist_ok=True)
        run(binary, ["-c", "put a 1; record r.transcript; put b 2; get b"], cwd=d)
        old = open(os.path.join(d, "r.transcript")).read()
        script = "put a 1\nrecord r.transcript\n" + "".join(f"put k:{i} \"{'x' * 400}\"\n" for i in range(12)) + "record stop\n"
        open(os.path.join(d, "s.cachesh"), "w").write(script)
        p = subprocess.run(["/bin/sh", "-c", f"trap '' XFSZ; ulimit -f {limit}; exec \"$0\" s.cachesh", binary], cwd=d,
                           capture_output=True, timeout=LIMIT_S)
        now = open(os.path.join(d, "r.transcript")).read()
        verify = run(binary, ["--verify", "r.transcript"], cwd=d)
        left = sorted(os.listdir(d))
        whole = now == old or (p.returncode == 0 and now.endswith("cachesh> put k:11 \"" + "x" * 400 + "\"\nkeys: k:11\n" + END_OF_RECORDING))
        if whole and verify[0] == 0 and left == ["r.transcript", "s.cachesh"]:
            held += 1
        else:
            notes.append(f"record with {limit * 512} bytes of disk: status {p.returncode}, whole {whole}, verify {verify[0]}, left {left}")
    # A recording cut short at a command (it lost its end) fails --verify; the whole one passes.
    d = os.path.join(work, "cut")
    os.makedirs(d, exist_ok=True)
    commands = ["ns feed ttl=1m stale=30s", "put feed:a 1", "advance 45s", "get feed:a", "# a note", "server fail feed:a",
                "advance 1m", "get feed:a", "pending", "stats"]
    script = "record r.transcript\n" + "\n".join(rng.sample(commands, len(commands) if not smoke else 5)) + "\nrecord stop\n"
    open(os.path.join(d, "s.cachesh"), "w").write(script)
    run(binary, ["s.cachesh"], cwd=d)
    lines = open(os.path.join(d, "r.transcript")).read().split("\n")[:-1]
    tried += 1
    if run(binary, ["--safe", "--verify", "r.transcript"], cwd=d)[0] == 0:
        held += 1
    else:
        notes.append("a whole recording did not verify")
    for cut in [i for i in range(2, len(lines)) if lines[i].startswith("cachesh> ")]:
        tried += 1
        open(os.path.join(d, "cut.transcript"), "w").write("\n".join(lines[:cut]) + "\n")
        status, out, err, _, _ = run(binary, ["--safe", "--verify", "cut.transcript"], cwd=d)
        if status == 1 and err.startswith(f"cut.transcript:{cut}: error: a recording cut short: ".encode()) and err.count(b"\n") == 1:
            held += 1
        else:
            notes.append(f"a recording cut at line {cut + 1}: status {status} {err[:100]!r}")
    # Names of 248 to 255 bytes.
    for length in ([248, 255] if smoke else range(248, 256)):
        tried += 1
        d = os.path.join(work, f"long-{length}")
        os.makedirs(d, exist_ok=True)
        name = "n" * length
        status, out, err, _, _ = run(binary, ["-c", f"put a 1; snapshot {name}; record {name}; put b 2"], cwd=d)
        if status == 0 and os.listdir(d) == [name] and open(os.path.join(d, name)).read().endswith("keys: b\n" + END_OF_RECORDING):
            held += 1
        else:
            notes.append(f"a name of {length} bytes: status {status} {err[:100]!r} {os.listdir(d)}")
    return tried, held, "; ".join(notes[:4])


# --- output and work bounded per input; --safe kept by a restored schedule --------------------

def restored_schedule(command):
    """A snapshot (as far_lines_restore's) whose one scheduled command is `command`."""
    text = far_lines_restore().split("\n")[0][len("restore "):]
    snapshot = json.loads(text)
    snapshot["pending"]["scheduled"] = [{"command": command, "due": "2026-01-01T00:00:00.001Z", "file": None, "id": 1, "line": 1}]
    return json.dumps(snapshot)


def bounds_cases(rng, smoke, work):
    """(what was tried, cachesh's arguments, files to write, a check of (status, out, err,
    seconds) that returns what did not hold, or None)."""
    cases = []
    depth = rng.randint(17, 2000 if smoke else 20000)
    script = "".join(f"at {rng.randint(0, 3)}ms " for _ in range(depth)) + "echo x\nadvance 1s\n"
    cases.append((f"at nested {depth} deep", ["s.cachesh"], {"s.cachesh": script},
                  lambda st, out, err, sec: None if len(out) + len(err) < 10 * len(script) + 10_000 and b"at nested more than 16" in err
                  else f"{len(out)} bytes out for {len(script)} in"))
    every = rng.choice([1, 2, 3])
    polls = f"server latency 0ms\npoll a:1 every={every}ms\n" + "advance 16m\n" * 10
    budget_held = lambda st, out, err, sec: None if st == 1 and b"scheduled items in all" in err + out and sec < 30 \
        else f"status {st} after {sec:.1f}s"
    cases.append((f"--safe: polls every {every}ms, ten advances of 16m", ["--safe", "p.cachesh"], {"p.cachesh": polls}, budget_held))
    # Each advance expects its two lines: the budget's one error line cannot pass for them.
    transcript = "".join(f"cachesh> {line}\n" + ("now: [..]\nnow_ms: [..]\n" if line.startswith("advance") else "[..]\n")
                         for line in polls.strip().split("\n"))
    cases.append(("--verify: the same as a transcript", ["--verify", "p.transcript"], {"p.transcript": transcript}, budget_held))
    n, pad = (200, 2000) if smoke else (500, 4000)
    lines = []
    for i in range(n):
        lines += [f"cachesh> put k:{'x' * pad}{i:05d} 1", "[..]"]
    lines += ["cachesh> keys", "[..]"]
    for i in range(n):
        lines += [f"key:    k:{'x' * pad}{i:04d}q", "state:  fresh", "age_ms: 1", ""]
    cases.append((f"--verify: {n} long lines that differ at their ends", ["--verify", "a.transcript"], {"a.transcript": "\n".join(lines) + "\n"},
                  lambda st, out, err, sec: None if st == 1 and sec < 45 else f"status {st} after {sec:.1f}s"))
    # --verify's matching of an output against runs between `...` that nearly match everywhere:
    # it passes, or the file fails with the budget's message, in time proportional to its bytes.
    n = 20_000 if smoke else 80_000
    values = ",".join(['"a"'] * (n - 1) + ['"b"'])
    numbers = ",".join(f'"{i}"' for i in range(n))
    runs = {
        "a run of literal lines that nearly matches at every line": ('        "a",\n' * (n // 2) + '        "b"\n', values),
        "a run of distinct [..] lines": ("".join(f'[..]"{i}",\n' for i in range(1, n - 1)), numbers),
        "a run of the same [..] line": ('[..]"a",\n' * (n // 2) + '[..]"b"\n', values),
        "many ... between two-line runs": ('...\n        "a",\n        "a",\n' * (n // 2 - 1), values),
    }
    for name, (run_lines, array) in runs.items():
        text = f"cachesh> put k [{array}]\nkeys: k\ncachesh> snapshot\n...\n{run_lines}...\n"
        cases.append((f"--verify: {name}, {len(text) // 1000} KB", ["--safe", "--verify", "m.transcript"], {"m.transcript": text},
                      lambda st, out, err, sec: None if sec < 30 and (st == 0 or (st == 1 and b"takes more than --verify spends" in err))
                      else f"status {st} after {sec:.1f}s {err[:120]!r}"))
    ranges = ",".join(f"{rng.randint(1, 1000)}..{rng.randint(10**15, 10**18)}" for _ in range(5000 if smoke else 40000))
    cases.append(("replay: a line of distinct ranges", ["r.cachesh"], {"r.cachesh": f"replay t.txt max={ranges}\n", "t.txt": "a\n"},
                  lambda st, out, err, sec: None if b"more than 256 combinations" in err and sec < 30 else f"status {st} after {sec:.1f}s"))
    # jobs= (SPEC §7.1): every hostile value is one error line before the trace is read; the
    # most jobs on the most combinations, and on a trace that breaks far in, end in bounded time
    # with the rows (or the line's error) of one job.
    bad_jobs = ["0", "65", "-1", "-0", "1.0", "1e1", "0x10", "", "x", "\u0663", "9" * rng.randint(19, 4000),
                "2,3", "1..4", "none", "auto", "\u202e2"]
    rng.shuffle(bad_jobs)
    trace = "".join(f"k{rng.randint(0, 500)}\n" for _ in range(20_000 if smoke else 60_000))
    sweep = "replay t.txt policy=lru,fifo,sieve,lfu max=1..1000 ttl=none,1h"  # 224 combinations
    script = "".join(f"replay t.txt jobs={value} csv=o.csv\n" for value in bad_jobs) + f"{sweep} jobs=64\n{sweep} jobs=1\n" \
        + "replay bad.txt format=timed policy=lru,fifo,sieve max=1,10,100 jobs=64\n"
    broken = "".join(f"{i} k{rng.randint(0, 500)}\n" for i in range(9_000)) + "3 late\n" + "9999 k\n" * 100
    cases.append(("replay: hostile jobs= values, then 64 jobs on 224 combinations", ["j.cachesh"],
                  {"j.cachesh": script, "t.txt": trace, "bad.txt": broken},
                  lambda st, out, err, sec, n=len(bad_jobs): None if st == 1 and sec < 120
                  and err.count(b"use a whole number of jobs from 1 to 64") == n and err.count(b"\n") == n + 1
                  and b"bad.txt:9001: error: time goes backwards" in err and len(err) < 20_000
                  and out.count(b"replayed ") == 2 and out.split(b"replayed ")[1] == out.split(b"replayed ")[2]
                  and not os.path.exists(os.path.join(work, "bounds", "o.csv"))
                  else f"status {st} after {sec:.1f}s, {err.count(b'jobs from 1')} of {n} refused, {err[-200:]!r}"))
    # gzip-compressed traces (SPEC §5.5), read through zlib as a stream: cut at random points,
    # bytes flipped, noise after the magic number, members with noise between them: each replays
    # or is one error line, never a crash; and a bomb (a few KB that inflate to millions of
    # requests) replays in bounded memory (the harness's limit) and time.
    plain = "".join(f"k{rng.randint(0, 300)}\n" for _ in range(30_000)).encode()
    member = gzip.compress(plain, 6)
    gz_files, gz_lines = {}, []
    for i in range(6 if smoke else 30):
        kind = rng.choice(["cut", "flip", "noise", "members"])
        data = bytearray(member)
        if kind == "cut":
            data = data[:rng.randint(1, len(data) - 1)]
        elif kind == "flip":
            for _ in range(rng.randint(1, 8)):
                data[rng.randrange(len(data))] ^= rng.randint(1, 255)
        elif kind == "noise":
            data = data[:2] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 4000)))
        else:
            data = data + bytes(rng.randrange(256) for _ in range(rng.randint(0, 40))) + member
        gz_files[f"g{i}.txt.gz"] = bytes(data)
        gz_lines.append(f"replay g{i}.txt.gz max=10,100 policy=lru,fifo jobs={rng.randint(1, 3)}\n")
    bomb_requests = 2_000_000 if smoke else 10_000_000
    gz_files["bomb.txt.gz"] = gzip.compress(b"a\n" * bomb_requests, 9)
    gz_files["g.cachesh"] = "".join(gz_lines) + "replay bomb.txt.gz max=1,10 policy=lru,sieve jobs=2\nnow\n"
    cases.append((f"replay: {len(gz_lines)} damaged gzip traces, then a bomb of {bomb_requests} requests in "
                  f"{len(gz_files['bomb.txt.gz']) // 1024} KB", ["g.cachesh"], gz_files,
                  lambda st, out, err, sec, n=len(gz_lines), b=bomb_requests: None if sec < 300
                  and out.count(b"replayed ") + err.count(b"\n") == n + 1 and f"replayed {b} requests of bomb".encode() in out
                  and all(b": error: " in line for line in err.split(b"\n") if line) and out.endswith(b"now_ms: 0\n")
                  else f"status {st} after {sec:.1f}s, {out.count(b'replayed ')} replayed, {err[-300:]!r}"))
    # Several traces (SPEC §5.5, §7.1): past 10,000 in a directory, one error line before any is
    # read; names with control, bidirectional and CSV characters come out escaped (the table) or
    # quoted (csv=), one row each; patterns that are not patterns of files are one line each.
    many = {f"many/t{i:05d}.txt": "" for i in range(10_001)}
    cases.append(("replay: a directory of 10001 traces", ["d.cachesh"], {"d.cachesh": "replay many\nnow\n", **many},
                  lambda st, out, err, sec: None if st == 1 and sec < 60
                  and err == b"d.cachesh:1: error: replay: many names more than 10000 traces; at most 10000 in one replay\n"
                  else f"status {st} after {sec:.1f}s {err[:200]!r}"))
    odd_names = ["a\nb.txt", "\u202ertl.txt", 'x,y"z.txt', "\x1b[31mred.txt", "\u00e9t\u00e9.txt", "-x.txt", " space.txt"]
    odd = {f"odd/{name}": "k1\nk2\nk1\n" for name in odd_names}
    patterns = ["odd/[", "odd/[[[[", "odd/*/*", "odd/**/x", "odd/[!a-z]*", "odd/?", "*/" * 30 + "x", "/dev/*"]
    script = "replay odd max=1,2 csv=o.csv\n" + "".join(f"replay {p} max=1\n" for p in patterns) + "now\n"

    def odd_names_held(st, out, err, sec, names=tuple(odd_names)):
        n = len(names)
        import csv, io
        rows = list(csv.reader(io.StringIO(open(os.path.join(work, "bounds", "o.csv"), newline="").read()))) \
            if os.path.exists(os.path.join(work, "bounds", "o.csv")) else []
        table = out.split(b"wrote o.csv\n")[0] + b"wrote o.csv\n"
        # A line per trace, a header and two rows per trace, "wrote o.csv": no name breaks a line.
        if sec > 30 or b"\x1b" in out or "\u202e".encode() in out or len(rows) != 2 * n + 1 \
                or table.count(b"\n") != 3 * n + 2 \
                or sorted({r[0] for r in rows[1:]}) != sorted(f"odd/{name}" for name in names):
            return f"status {st} after {sec:.1f}s, {len(rows)} csv rows, {table[:300]!r} {err[:300]!r}"
        return None if all(b": error: replay: " in line for line in err.split(b"\n") if line) else f"{err[:300]!r}"
    cases.append(("replay: a directory of traces with hostile names, and patterns", ["o.cachesh"], {"o.cachesh": script, **odd}, odd_names_held))
    # 66 changes of 1 MiB pass the timeline's 64 MiB; 200 took over a minute in a debug build on
    # a loaded machine (each patch parses and prints the whole value), which read as a hang.
    changes = 66 if smoke else 80
    big = "put k {\"n\":0,\"s\":\"" + "x" * (1 << 20) + "\"}\n" + "event patch k {\"n\":{\"$inc\":1}}\n" * changes + "timeline z\n"
    cases.append((f"timeline: {changes} changes of a 1 MiB value", ["b.cachesh"], {"b.cachesh": big},
                  lambda st, out, err, sec: None if b"earlier changes are not kept" in out else f"status {st}: nothing dropped"))
    # Clients (SPEC §3 Clients): past 16, names that are not names, each one error line; and
    # polls in every client under --safe still stop at the budget, in time.
    names = [f"c{i}" for i in range(2, 40)] + ["Bad", "a" * 33, "x" * (1 << 20), "t\u202eb", "t\x1bb", "-x", "a:b", "ä"]
    rng.shuffle(names)
    clients = "".join(f"client {name}\n" for name in names) + "client\n"
    bad = len([n for n in names if not n.startswith("c")]) + max(0, len([n for n in names if n.startswith("c")]) - 15)
    cases.append((f"client: {len(names)} names, too many and bad ones", ["c.cachesh"], {"c.cachesh": clients},
                  lambda st, out, err, sec, bad=bad: None if st == 1 and err.count(b"error: client") == bad
                  and b"at most 16 clients" in err and out.count(b" entries)\n") == 16 and len(err) < 200_000
                  else f"status {st}, {err.count(b'error: client')} errors for {bad}, {out.count(b' entries)')} clients"))
    # Each client has the budget (SPEC §7.1), so 16 of them may run 16 times one's work: four
    # keep the case within the time a debug build on a loaded machine takes for it.
    spread = "server latency 0ms\n" + "".join(f"client c{i}\npoll a:1 every=1ms\n" for i in range(2, 6)) + "advance 16m\n" * 10
    cases.append(("--safe: polls every 1ms in 4 clients", ["--safe", "q.cachesh"], {"q.cachesh": spread}, budget_held))
    # A list past its most pages (SPEC §7.1): --next is refused with one line and sends nothing;
    # pages and pages --refetch read the first 1000 only, one request, in bounded time.
    pages = rng.randint(1000, 1100 if smoke else 3000)
    script = "".join(f"put l:x@{i} {i}\n" for i in range(1, pages + 1)) + \
        "pages l:x --next\nexpect stats requests=0\npages l:x --refetch\nadvance 1s\npages l:x\n"
    cases.append((f"a list at its most pages ({pages} put)", ["l.cachesh"], {"l.cachesh": script},
                  lambda st, out, err, sec: None if st == 1 and sec < 30 and err.count(b"\n") == 1
                  and b"has 1000 pages, the most a list may have; nothing was sent" in err
                  and b"l:x@1000  " in out and b"l:x@1001  " not in out else f"status {st} after {sec:.1f}s {err[:160]!r}"))
    # HTTP namespaces (SPEC §8, §7.1): hostile headers=, status= and keys are one error line each
    # and send nothing; many secondary keys keep at most 64 responses, in bounded time.
    lines = rng.randint(101, 2000 if smoke else 20000)
    huge = ",".join(f'"X-{i}":"v"' for i in range(lines))
    hostile = [f"server set api:/a 1 headers={{{huge}}}",
               'server set api:/a 1 headers={"B":"' + "x" * rng.randint(16385, 1 << 20) + '"}',
               'server set api:/a 1 headers={"a b":"c"}', 'server set api:/a 1 headers={"A":"\\u0000"}',
               'server set api:/a 1 headers={"A":"\\u001b[2J"}', 'server set api:/a 1 headers={"A":{"b":1}}',
               'server set api:/a 1 headers={"\\u202e":"x"}', "server set api:/a 1 headers=[1,2]",
               f"server next api:/a status={rng.choice(['0', '99', '600', '-200', '2000', '1e2', 'x'])}",
               "get api:nopath", "get api://evil.example/a", "get api:" + "%/" * rng.randint(1, 5000),
               f"ns api heuristic={rng.choice(['101', '-1', '1000000000000', 'x'])}", "server set plain:1 1 headers={\"A\":\"b\"}",
               "request " + rng.choice(["GET", "get", "CONNECT", "P\\u0000ST", "x" * 5000]) + " api:/a", "request POST plain:1 1",
               "request DELETE api:/a headers={\"A\":[]}"]
    rng.shuffle(hostile)
    script = "ns api http\nserver set api:/a 0 headers={\"ETag\":\"\\\"0\\\"\"}\n" + "\n".join(hostile) + "\nserver log\nserver show api:/a\n"
    cases.append((f"http: {len(hostile)} hostile headers=, status= and keys", ["h.cachesh"], {"h.cachesh": script},
                  lambda st, out, err, sec, n=len(hostile): None if st == 1 and err.count(b"\n") == n and err.count(b": error: ") == n
                  and b"(no requests)" in out and b'"ETag":"\\"0\\""' in out and sec < 30 and len(err) < 200_000
                  else f"status {st}, {err.count(b'error: ')} errors for {n}, {err[:200]!r}"))
    variants = 200 if smoke else 2000
    script = "ns api http\nserver latency 0ms\nserver set api:/v 1 headers={\"Cache-Control\":\"max-age=600\",\"Vary\":\"X-N\"}\n" + \
        "".join(f"get api:/v headers={{\"X-N\":\"{i}\"}}\n" for i in range(variants)) + "get api:/v headers={\"X-N\":\"0\"}\n"
    cases.append((f"http: {variants} secondary keys of one key", ["v.cachesh"], {"v.cachesh": script},
                  lambda st, out, err, sec: None if st == 0 and sec < 60 and out.endswith(b'body:         1\n')
                  and out.count(b"fwd=vary-miss") == variants else f"status {st} after {sec:.1f}s {err[:160]!r}"))
    for command in ["snapshot out.json", "at 1ms replay t.txt csv=out.json", "echo x\nsnapshot out.json", "diff out.json",
                    "at 0ms at 0ms snapshot out.json", "record out.json", "source out.json"]:
        for mode in ([], ["--safe"]):
            restore = f"restore {restored_schedule(command)}\nadvance 1s\n" if mode else "restore state.json\nadvance 1s\n"
            cases.append((f"restore{' --safe' if mode else ''}: a schedule of {command!r}", mode + ["x.cachesh"],
                          {"x.cachesh": restore, "state.json": restored_schedule(command), "t.txt": "a\n"},
                          lambda st, out, err, sec: None if st == 1 and b"restored snapshot may not" in err
                          and not os.path.exists(os.path.join(work, "bounds", "out.json")) else f"status {st}, {err[:120]!r}"))
    # (Some 10 s each in a debug build; what compared every item with every other took minutes.)
    n = 150_000
    for name, document in wide_snapshots(n).items():
        cases.append((f"restore: {n} {name}", ["-c", "restore w.json"], {"w.json": json.dumps(document)},
                      lambda st, out, err, sec: None if st == 0 and out.startswith(b"restored w.json") and sec < 60
                      else f"status {st} after {sec:.1f}s {err[:200]!r}"))
    for command in ["replay t.txt", "replay t.txt plot=o.svg", "snapshot o.json", "source t.txt", "diff t.txt", "restore t.txt",
                    "load t.txt", "record o.transcript"]:
        cases.append((f"--safe --verify: {command!r} claimed refused", ["--safe", "--verify", "v.transcript"],
                      {"v.transcript": f"cachesh> {command}\n[..]\n", "t.txt": "a\n"},
                      lambda st, out, err, sec: None if st == 1 and b"0 passed, 1 failed" in out else f"status {st}: {out[-40:]!r}"))
    return cases


def wide_snapshots(n):
    """Snapshot documents (SPEC §5.2) wide where restore once compared every item of one list
    with every item of another: n fetches in flight, each with a retry and held pages; n
    namespaces, each with statistics; n SIEVE namespaces, each with its hand on its one entry.
    Each restores, in time that grows with its size, not its square."""
    zeros = {name: 0 for name in ["evictions", "expirations", "fetch_failures", "hits", "invalidations", "joined", "misses",
                                  "refresh_failures", "refreshes", "requests", "rollbacks", "stale_hits"]}
    namespace = {"defined": True, "max": None, "purgeable": False, "stale_if_error_ms": None, "stale_ms": None,
                 "timeout_ms": None, "ttl_ms": 300000}
    base = snapshot_with()
    # Each fetch is of a list's second page, holding its first (as `pages LIST --next` leaves it).
    requests = [{"answer": None, "completes_at": None, "id": 10 + i, "invalidated": [False], "keys": [f"a:{i}@2"], "kind": "fetch",
                 "refresh": [False], "started_at": "2026-01-01T00:00:00.000Z", "voided": [False]} for i in range(n)]
    fetches = dict(base, seq=n + 20, namespaces=dict(base["namespaces"], a=dict(namespace, index=1, retry=2, backoff_ms=1000)),
                   pending=dict(base["pending"], requests=requests, fetching={f"a:{i}@2": 10 + i for i in range(n)},
                                retries=[{"due": None, "item": None, "made": 1, "request": 10 + i} for i in reversed(range(n))],
                                held_pages=[{"request": 10 + i, "pages": [{"key": f"a:{i}@1", "value": i}]}
                                            for i in reversed(range(n))]))
    names = dict(base, namespaces=dict(base["namespaces"], **{f"n{i}": dict(namespace, index=1 + i) for i in range(n)}),
                 stats=dict(base["stats"], namespaces={f"n{i}": zeros for i in range(n)}))
    hands = snapshot_with(entries=[entry(f"s{i}:1", i, rank=0) for i in range(n)],
                          namespaces=dict(base["namespaces"], **{f"s{i}": dict(namespace, index=1 + i, policy="sieve", hand=f"s{i}:1",
                                                                                 next_rank=1) for i in range(n)}))
    return {"fetches with retries and held pages": fetches, "namespaces with statistics": names, "SIEVE hands": hands}


def attack_bounds(binary, rng, smoke, work):
    held, notes = 0, []
    cases = bounds_cases(rng, smoke, work)
    for name, args, files, check in cases:
        folder = os.path.join(work, "bounds")
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        for file, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(folder, file)), exist_ok=True)
            open(os.path.join(folder, file), "wb" if isinstance(text, bytes) else "w").write(text)
        status, out, err, rss, seconds = run(binary, args, cwd=folder)
        problem = "hung" if status == "timeout" else f"signal {-status}" if isinstance(status, int) and status < 0 else None
        problem = problem or (f"{rss // 1024} MB" if rss > MEMORY_LIMIT_KB else None) or check(status, out, err, seconds)
        print(f"  bounds: {name}: " + (f"DID NOT HOLD ({problem})" if problem else f"held ({seconds:.1f}s, {rss // 1024} MB)"), flush=True)
        if problem:
            notes.append(f"{name}: {problem}")
        else:
            held += 1
    return len(cases), held, "; ".join(notes)


# --- libFuzzer -----------------------------------------------------------------------------

def catalog_dictionary(binary):
    """libFuzzer dictionary lines for every command of the binary's catalog (`help all`), its
    subcommands, options and flags: a command added to the shell is fuzzed without a list to keep."""
    status, out, err, _, _ = run(binary, ["--json", "-c", "help all"])
    if status != 0:
        raise RuntimeError(f"help all failed: {err.decode(errors='replace')[:200]}")
    words = set()

    def add_names(synopsis):
        for part in synopsis.replace("[", " ").replace("]", " ").replace("|", " ").split():
            if part.startswith("--"):
                words.add(part)
            elif "=" in part and not part.startswith("{"):
                words.add(" " + part.split("=", 1)[0] + "=")

    for command in json.loads(out)["commands"]:
        words.add(command["name"] + " ")
        add_names(command["synopsis"])
        if command["synopsis"] == command["name"] + " SUBCOMMAND ...":
            # Its forms (`server set KEY VALUE`) are the lines of its help.
            for form in json.loads(run(binary, ["--json", "-c", "help " + command["name"]])[1])["arguments"]:
                words.add(" " + form["name"].split()[0] + " ")
                add_names(form["name"])
    return [json.dumps(word) for word in sorted(words)]


def attack_fuzz(root, binary, seconds, work):
    fuzz = os.path.join(root, "Fuzz")
    build = subprocess.run(["swift", "build", "-c", "release", "-Xswiftc", "-sanitize=fuzzer,address"], cwd=fuzz,
                           capture_output=True, text=True)
    if build.returncode != 0:
        return None, "the fuzzer did not build: " + build.stderr.strip().splitlines()[-1][:200]
    corpus = os.path.join(work, "corpus")
    os.makedirs(corpus, exist_ok=True)
    for name in os.listdir(os.path.join(root, "Examples")):
        if name.endswith(".cachesh"):
            shutil.copy(os.path.join(root, "Examples", name), corpus)
    results = []
    # Half the time each: scripts, then transcripts and snapshots (its corpus copied, so the
    # inputs it finds stay out of the repository).
    transcripts = os.path.join(work, "corpus-transcript")
    shutil.copytree(os.path.join(fuzz, "corpus", "transcript"), transcripts)
    commands = catalog_dictionary(binary)
    script_dict = os.path.join(work, "script.dict")
    with open(script_dict, "w") as f:
        f.write("\n".join(commands) + "\n")
    transcript_dict = os.path.join(work, "transcript.dict")
    with open(os.path.join(fuzz, "transcript.dict")) as source, open(transcript_dict, "w") as f:
        f.write(source.read() + "\n".join(commands) + "\n")
    for target, folder, extra in (("ScriptFuzzer", corpus, ["-max_len=512", f"-dict={script_dict}"]),
                                  ("TranscriptFuzzer", transcripts, ["-max_len=4096", f"-dict={transcript_dict}"])):
        p = subprocess.run([os.path.join(fuzz, ".build/release", target), folder, "-timeout=10", "-rss_limit_mb=2048",
                            f"-max_total_time={max(1, seconds // 2)}", f"-artifact_prefix={work}/", *extra],
                           capture_output=True, text=True)
        runs = [line for line in p.stderr.splitlines() if line.startswith("Done ")]
        # libFuzzer's last status line gives the corpus it ended with (`corp: inputs/bytes`).
        corpus = [line.split("corp: ")[1].split()[0] for line in p.stderr.splitlines() if "corp: " in line]
        results.append((p.returncode == 0, f"{target}: " + (runs[-1] if runs else p.stderr.strip().splitlines()[-1])[:160]
                        + (f", corpus {corpus[-1]}" if corpus else "")))
    return all(ok for ok, _ in results), "; ".join(text for _, text in results)


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        print(__doc__)
        sys.exit(2)
    binary = os.path.abspath(args[0])
    smoke = "--smoke" in args
    seed = int(args[args.index("--seed") + 1]) if "--seed" in args else 1
    fuzz_seconds = int(args[args.index("--fuzz-seconds") + 1]) if "--fuzz-seconds" in args else (0 if smoke else 120)
    rng = random.Random(seed)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    tally = Tally()
    with tempfile.TemporaryDirectory() as work:
        print(f"reliability suite: {binary} (seed {seed}{', smoke' if smoke else ''})", flush=True)
        held, notes = attack_kill(binary, rng, 3 if smoke else 60, work)
        tally.add("kill", 3 if smoke else 60, held, notes)
        held, notes = attack_corrupt(binary, rng, 10 if smoke else 300, work)
        tally.add("corrupt", 10 if smoke else 300, held, notes)
        held, notes = attack_twoproc(binary, rng, 2 if smoke else 30, work)
        tally.add("twoproc", 2 if smoke else 30, held, notes)
        tried, held, notes = attack_hostile(binary, rng, smoke, work)
        tally.add("hostile", tried, held, notes)
        tried, held, notes = attack_store(binary, rng, smoke, work)
        tally.add("store", tried, held, notes)
        tried, held, notes = attack_files(binary, rng, smoke, work)
        tally.add("files", tried, held, notes)
        tried, held, notes = attack_bounds(binary, rng, smoke, work)
        tally.add("bounds", tried, held, notes)
        if fuzz_seconds > 0:
            ok, notes = attack_fuzz(root, binary, fuzz_seconds, work)
            if ok is None:
                print(f"fuzz     skipped ({notes})")
            else:
                tally.add("fuzz", 1, 1 if ok else 0, notes)
    print("every attack held" if not tally.failed else "SOME ATTACKS DID NOT HOLD")
    sys.exit(1 if tally.failed else 0)


if __name__ == "__main__":
    main()
