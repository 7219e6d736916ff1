#!/usr/bin/env python3
"""End-to-end tests of the interactive shell: the real binary in a terminal (tmux, and pyte for
a terminal that does not re-wrap lines on resize), checked on the rendered screen.

    CACHESH_BIN=.build/debug/cachesh python3 Tests/interactive/test_interactive.py [NAME...]

Prints one line per test and exits non-zero if any failed. Each run uses a private tmux server
(its own socket), killed at the end.
"""

import json
import os
import re
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import traceback

BIN = os.path.abspath(os.environ.get("CACHESH_BIN", ".build/debug/cachesh"))
SOCKET = f"cachesh-test-{os.getpid()}"
# Seconds to wait for what the screen must show. Generous, because a deadline only matters when a
# test fails: on a busy machine a debug build can take seconds to start or to answer a key, and a
# test must not fail for that.
WAIT = 60.0
SGR = re.compile(r"\x1b\[[0-9;]*m")
BANNER = re.compile(r"cachesh \d+\.\d+\.\d+: type help for the commands, quit to leave")
# The tmux servers' configuration: every window keeps its pane once the program in it exits
# (remain-on-exit), from the moment it is made. Set on a session after `new-session`, a script
# that ends at once could end first, and its window be gone ("no such window").
TMUX_CONF = os.path.join(tempfile.mkdtemp(prefix="cachesh-tmux-"), "tmux.conf")
with open(TMUX_CONF, "w") as conf:
    conf.write("set-option -gw remain-on-exit on\n")


def tmux(*args, check=True):
    result = subprocess.run(["tmux", "-L", SOCKET, "-f", TMUX_CONF, *args],
                            capture_output=True, text=True)
    if check and result.returncode != 0:
        raise RuntimeError(f"tmux {' '.join(args)}: {result.stderr.strip()}")
    return result.stdout


def keep_server_alive():
    """A session that outlives the tests', so the server does not exit between them."""
    if "keepalive" not in tmux("list-sessions", "-F", "#{session_name}", check=False).split():
        tmux("new-session", "-d", "-s", "keepalive", "sleep 100000", check=False)


def new_session(*args):
    """`tmux new-session -d ARGS`. On a loaded machine the tmux server has been seen to exit
    under a new session's feet ("server exited unexpectedly"); the session is then made again
    (each attempt a process of its own, so no timer paces them), on a new server once the old
    one is gone, at most 20 times; any other error is raised at once."""
    for attempt in range(20):
        result = subprocess.run(["tmux", "-L", SOCKET, "-f", TMUX_CONF, "new-session", "-d", *args],
                                capture_output=True, text=True)
        if result.returncode == 0:
            return
        if "server exited unexpectedly" not in result.stderr or attempt == 19:
            raise RuntimeError(f"tmux new-session {' '.join(args)}: {result.stderr.strip()}")
        keep_server_alive()


class Shell:
    """cachesh running in a tmux window of its own, with a private HOME."""

    count = 0

    def __init__(self, home, env=None, args=(), cwd=None, width=100, height=30, first_prompt=True, script=False):
        """`script`: cachesh is run by a shell script (`sh -c`, in its process group, as a script
        that calls it would), which then prints `status=` and its exit status, and ` echo` or
        ` -echo` as the terminal's echo setting is."""
        Shell.count += 1
        self.name = f"t{Shell.count}"
        self.home = home
        environment = {
            "HOME": home,
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "TERM": "screen",
            "LANG": "C.UTF-8",
            "EDITRC": "",
            "CACHESH_HISTORY": os.path.join(home, "history"),
        }
        environment.update(env or {})
        command = ["env", "-i"] + [f"{k}={v}" for k, v in environment.items() if v is not None]
        if script:
            quoted = " ".join(shell_quote(c) for c in [BIN, *args])
            command += ["sh", "-c", f"{quoted}; echo status=$?; stty -a | grep -o -- ' -*echo ' | head -1; sleep 600"]
        else:
            command += [BIN, *args]
        new_session("-s", self.name, "-x", str(width), "-y", str(height),
                    "-c", cwd or home, " ".join(shell_quote(c) for c in command))
        # A control-mode client reports each write to the pane (%output), so waiting for the
        # screen to change blocks on those reports instead of polling on a timer. Its own size
        # must not resize the window.
        tmux("set-option", "-t", self.name, "window-size", "manual")
        self.control = subprocess.Popen(["tmux", "-L", SOCKET, "-f", TMUX_CONF, "-C", "attach", "-t", self.name],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        if first_prompt:
            self.wait_for(lambda s: s.prompt_line() is not None, "the first prompt")

    # Driving

    def type(self, text):
        tmux("send-keys", "-t", self.name, "-l", "--", text)

    def keys(self, *keys):
        tmux("send-keys", "-t", self.name, *keys)

    def run(self, command, wait=WAIT):
        """Types a command and Enter, then waits for the next (empty) prompt at the bottom."""
        self.type(command)
        self.wait_for(lambda s: s.last_line() != "cachesh>", f"{command!r} typed")
        self.keys("Enter")
        self.wait_for(lambda s: s.last_line() == "cachesh>", f"the prompt after {command!r}", wait)

    def close(self):
        tmux("kill-session", "-t", self.name, check=False)
        self.control.kill()
        self.control.wait()

    # Reading the screen

    def lines(self, attributes=False, banner=False):
        """The screen's lines; without the start-up banner while it is the first (unless `banner`)."""
        args = ["capture-pane", "-p", "-t", self.name] + (["-e"] if attributes else [])
        lines = [line.rstrip().replace("\u00a0", " ").rstrip() for line in tmux(*args).split("\n")]
        if not banner and lines and BANNER.fullmatch(SGR.sub("", lines[0])):
            lines = lines[1:]
        return lines

    def text(self):
        return "\n".join(self.lines()).rstrip()

    def prompt_line(self):
        """The last line that starts with a prompt, stripped; None before any."""
        for line in reversed(self.lines()):
            if line.startswith("cachesh>") or line.startswith("...>"):
                return line
        return None

    def last_line(self):
        """The last line that is not empty."""
        return next((line for line in reversed(self.lines()) if line), "")

    def prompt_count(self):
        return sum(1 for line in self.lines() if line.startswith("cachesh>"))

    def dead(self):
        """(whether the shell has ended, its exit status once known)."""
        out = tmux("display-message", "-p", "-t", self.name, "#{pane_dead} #{pane_dead_status} #{pane_pid}")
        dead, status, pid = out.rstrip("\n").split(" ")
        if dead == "1" and not status:
            # tmux marks the pane dead when the terminal closes but sometimes leaves the exited
            # process unreaped; its exit status is then still in the kernel's record of the zombie.
            status = zombie_exit_status(pid)
        return (dead == "1", int(status) if status else None)

    def wait_for(self, condition, what, wait=WAIT):
        deadline = time.monotonic() + wait
        while True:
            if condition(self):
                return
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"timed out waiting for {what}; screen:\n{self.text()}")
            # Block until tmux reports activity in the pane (output, or the process ending); the
            # cap only bounds how late a change that produces no report (an exit) is noticed.
            watched = [] if self.control.stdout.closed else [self.control.stdout]
            ready, _, _ = select.select(watched, [], [], min(remaining, 0.5))
            if ready and not os.read(self.control.stdout.fileno(), 65536):
                self.control.stdout.close()  # the session is gone: no more reports

    def holds_for(self, seconds, condition, what):
        """Checks that `condition` holds for `seconds`, at the start and at each change of the
        pane (what must not happen yet, as a command held back)."""
        deadline = time.monotonic() + seconds
        while True:
            expect(condition(self), what, self)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            watched = [] if self.control.stdout.closed else [self.control.stdout]
            ready, _, _ = select.select(watched, [], [], remaining)
            if ready and not os.read(self.control.stdout.fileno(), 65536):
                self.control.stdout.close()

    def wait_for_line(self, expected, what=None):
        self.wait_for(lambda s: s.prompt_line() == expected, what or f"the line {expected!r}")

    def pid(self):
        return cachesh_pid(self.name)

    def echo(self):
        """Whether the terminal echoes what is typed (off while a line is edited)."""
        return terminal_echoes(self.name)


class Screen:
    """cachesh in a pseudo-terminal drawn by pyte, a terminal emulator that, like xterm and the
    Linux console, does not re-wrap lines when its width changes (tmux does, so it cannot show
    what a resize leaves on such a terminal). It answers cursor-position reports as a terminal
    does. The screen is read on a deadline, never after a fixed sleep."""

    running = []  # closed after each test, whether it passed or not

    def __init__(self, home, env=None, width=40, height=12):
        import pexpect  # noqa: PLC0415 — only these tests need them (scripts/install-deps.sh)
        import pyte  # noqa: PLC0415
        self.pexpect = pexpect
        environment = {
            "HOME": home,
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "TERM": "xterm",
            "LANG": "C.UTF-8",
            "EDITRC": "",
            "CACHESH_HISTORY": os.path.join(home, "history"),
        }
        environment.update(env or {})
        self.screen = pyte.Screen(width, height)
        self.screen.write_process_input = lambda text: self.child.send(text.encode())
        self.stream = pyte.ByteStream(self.screen)
        self.child = pexpect.spawn(BIN, [], env={k: v for k, v in environment.items() if v is not None},
                                   cwd=home, dimensions=(height, width))
        Screen.running.append(self)
        self.wait_for(lambda s: any(r.startswith("cachesh>") for r in s.rows()), "the first prompt")

    def rows(self):
        return [row.rstrip() for row in self.screen.display]

    def text(self):
        return "\n".join(f"{i:2}|{row}" for i, row in enumerate(self.rows())) + \
            f"\ncursor at row {self.screen.cursor.y}, column {self.screen.cursor.x}"

    def pump(self, timeout):
        """Feeds what the shell wrote within `timeout` seconds to the screen."""
        try:
            self.stream.feed(self.child.read_nonblocking(65536, timeout=timeout))
        except self.pexpect.TIMEOUT:
            pass

    def wait_for(self, condition, what, wait=WAIT):
        deadline = time.monotonic() + wait
        while not condition(self):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"timed out waiting for {what}; screen:\n{self.text()}")
            self.pump(min(remaining, 0.5))

    def type(self, text):
        self.child.send(text.encode())

    def resize(self, width, height):
        """What a terminal does when its window changes size: its screen first, then the
        kernel's record of the size, which sends SIGWINCH to the shell."""
        self.pump(0)
        self.screen.resize(height, width)
        self.child.setwinsize(height, width)

    def close(self):
        self.child.close(force=True)


def zombie_exit_status(pid):
    """The exit status of an exited, unreaped process (the last field of /proc/PID/stat), or ""."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return ""
    if fields[0] != "Z":
        return ""
    wait_status = int(fields[-1])
    return str(wait_status >> 8) if wait_status & 0x7F == 0 else ""


def cachesh_pid(session):
    """The pid of the cachesh process in a tmux session's pane: the pane's process or one of its
    descendants, whose first argument is this cachesh binary."""
    pane = int(tmux("display-message", "-p", "-t", session, "#{pane_pid}").strip())
    seen, queue = [], [pane]
    while queue:
        pid = queue.pop(0)
        seen.append(pid)
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            if os.path.realpath(argv[0].decode()) == os.path.realpath(BIN):
                return pid
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as f:
                    queue += [int(child) for child in f.read().split()]
        except (OSError, UnicodeDecodeError):
            continue
    raise AssertionError(f"no cachesh process under the pane of {session} (processes {seen})")


def terminal_echoes(session):
    """Whether the terminal of a tmux session's pane has echo on (`stty -a` from outside)."""
    tty = tmux("display-message", "-p", "-t", session, "#{pane_tty}").strip()
    out = subprocess.run(["stty", "-F", tty, "-a"], capture_output=True, text=True, check=True).stdout
    return re.search(r"(^|\s)echo(\s|$)", out) is not None


def shell_quote(word):
    return "'" + word.replace("'", "'\\''") + "'"


def expect(condition, message, shell=None):
    if not condition:
        raise AssertionError(message + (f"; screen:\n{shell.text()}" if shell else ""))


# --- Tests -------------------------------------------------------------------------------

NO_HINTS = {"CACHESH_HINTS": "0"}


def test_prompt(home):
    sh = Shell(home)
    expect(BANNER.fullmatch(sh.lines(banner=True)[0]), "the first line says the version and how to go on", sh)
    expect(sh.lines()[0] == "cachesh>", "then the prompt", sh)


def test_habits_of_other_shells(home):
    sh = Shell(home, env=NO_HINTS)
    sh.run("?")
    expect(any(l.startswith("Commands by topic") for l in sh.lines()), "? is help", sh)
    for word in ["exit", "\\q", ".quit"]:
        again = Shell(home, env=NO_HINTS)
        again.type(word)
        again.wait_for_line("cachesh> " + word)
        again.keys("Enter")
        # tmux marks the pane dead before it has the exit status: wait for both.
        again.wait_for(lambda s: s.dead()[1] is not None, f"{word} quits")
        expect(again.dead() == (True, 0), f"{word} quits with status 0, got {again.dead()}", again)
        again.close()


def test_help_fits_an_80x24_screen(home):
    sh = Shell(home, env=NO_HINTS, width=80, height=24)
    sh.run("help")
    lines = sh.lines(banner=True)
    expect(lines[1] == "cachesh> help" and lines[2].startswith("Commands by topic"),
           "help's list starts below the command, nothing scrolled away", sh)
    expect(all(len(l) <= 80 for l in lines), "no line wraps", sh)


def test_long_help_is_paged_then_quit(home):
    sh = Shell(home, env={**NO_HINTS, "PAGER": None}, width=80, height=24)
    sh.type("help all")
    sh.wait_for_line("cachesh> help all")
    sh.keys("Enter")
    sh.wait_for(lambda s: s.last_line() == ":", "the pager's prompt")
    expect("cachesh>" not in sh.last_line(), "the shell waits for the pager", sh)
    sh.keys("q")
    sh.wait_for(lambda s: s.last_line() == "cachesh>", "the prompt after the pager")


def test_no_pager_prints_help_whole(home):
    sh = Shell(home, env=NO_HINTS, args=["--no-pager"], width=80, height=24)
    sh.run("help all")
    shown = [l for l in sh.lines() if l]
    expect(shown[-2].startswith("help COMMAND explains one command"), "the whole list, then the prompt", sh)


def test_command_name_completes(home):
    sh = Shell(home, NO_HINTS)
    sh.type("ge")
    sh.keys("Tab")
    sh.wait_for_line("cachesh> get")
    sh.type("x")
    sh.wait_for_line("cachesh> get x")  # a space was inserted after `get`


def test_ambiguous_completion_lists_on_second_tab(home):
    sh = Shell(home, NO_HINTS)
    sh.type("s")
    sh.keys("Tab")
    sh.keys("Tab")
    sh.wait_for(lambda s: any("server" in l and "source" in l for l in s.lines()), "the list of commands")
    lines = sh.lines()
    listing = next(i for i, l in enumerate(lines) if "server" in l)
    expect(lines[0] == "cachesh> s", "the typed line stays above the list", sh)
    expect(any(l == "cachesh> s" for l in lines[listing:]), "the line is drawn again below the list", sh)
    # After an edit, the next Tab is a first Tab again: it does not list.
    sh.keys("C-u")
    sh.type("s")
    sh.keys("Tab")
    sh.type("ource")
    sh.wait_for_line("cachesh> source")
    expect(sum(1 for l in sh.lines() if "server" in l and "source" in l) == 1, "listed only once", sh)


def test_second_tab_lists_the_values_of_an_enumerated_option(home):
    """As for a command name: a second Tab on a value with several candidates lists them (bash's
    habit), for `policy=` and for each name of `naive=`'s list; a unique one completes."""
    sh = Shell(home, NO_HINTS)
    sh.type("ns feed policy=")
    sh.keys("Tab")
    sh.keys("Tab")
    sh.wait_for(lambda s: any(re.search(r"fifo\s+lfu\s+lru\s+sieve", l) for l in s.lines()), "the list of policies")
    expect(sh.prompt_line() == "cachesh> ns feed policy=", "the line is drawn again below the list", sh)
    sh.type("s")
    sh.keys("Tab")
    sh.wait_for_line("cachesh> ns feed policy=sieve")
    sh.keys("C-u")
    sh.type("ns feed naive=")
    sh.keys("Tab")
    sh.keys("Tab")
    # The list is laid out in columns, so wait for its first and last
    # names wherever they fall, below the line that asked for it.
    def listed(s):
        lines = s.lines()
        asked = next((i for i, l in enumerate(lines) if l.startswith("cachesh> ns feed naive=")), None)
        below = " ".join(lines[asked + 1:]) if asked is not None else ""
        return "answer-drops-mutations" in below and "serve-expired" in below and re.search(r"\bnone\b", below)
    sh.wait_for(listed, "the list of naive behaviours")
    sh.type("join-refetch,se")
    sh.keys("Tab")
    sh.wait_for_line("cachesh> ns feed naive=join-refetch,serve-expired")


def test_subcommand_completes(home):
    sh = Shell(home, NO_HINTS)
    sh.type("server of")
    sh.keys("Tab")
    sh.wait_for_line("cachesh> server offline")
    sh.keys("C-u")
    sh.type("event pa")
    sh.keys("Tab")
    sh.wait_for_line("cachesh> event patch")


def test_option_completes(home):
    sh = Shell(home, NO_HINTS)
    sh.type("get feed:x --f")
    sh.keys("Tab")
    sh.wait_for_line("cachesh> get feed:x --force")
    sh.keys("C-u")
    sh.type("ns feed tt")
    sh.keys("Tab")
    sh.type("5m")
    sh.wait_for_line("cachesh> ns feed ttl=5m")  # no space after `=`


def test_key_with_colon_completes(home):
    sh = Shell(home, NO_HINTS)
    sh.run("put feed:home 1")
    sh.run("put feed:hot 2")
    sh.type("get feed:h")
    sh.keys("Tab")
    sh.wait_for_line("cachesh> get feed:ho")
    sh.keys("Tab")
    sh.keys("Tab")
    sh.wait_for(lambda s: any(re.fullmatch(r"feed:home\s+feed:hot", l) for l in s.lines()), "the two keys listed")
    sh.type("m")
    sh.keys("Tab")
    sh.type("x")
    sh.wait_for_line("cachesh> get feed:home x")


def test_keys_complete_from_the_current_client(home):
    # With several clients, Tab offers the keys of the client the next command runs in.
    sh = Shell(home, NO_HINTS)
    sh.run("put feed:main 1")
    sh.run("client tab2")
    sh.run("put feed:tab2 2")
    sh.type("get feed:")
    sh.keys("Tab")
    sh.wait_for_line("cachesh> get feed:tab2")
    sh.keys("C-u")
    sh.run("client main")
    sh.type("get feed:")
    sh.keys("Tab")
    sh.wait_for_line("cachesh> get feed:main")


def test_namespace_and_tag_complete(home):
    sh = Shell(home, NO_HINTS)
    sh.run("put profile:42 1 tags=people,vip")
    sh.type("clear prof")
    sh.keys("Tab")
    sh.wait_for_line("cachesh> clear profile")
    sh.keys("C-u")
    sh.type("invalidate tag:pe")
    sh.keys("Tab")
    sh.wait_for_line("cachesh> invalidate tag:people")


def test_push_type_completes(home):
    config = os.path.join(home, "config.json")
    with open(config, "w") as f:
        json.dump({"push": {"friend-blocked": {"invalidate": ["profile:{user}"]}}}, f)
    sh = Shell(home, NO_HINTS, args=("--config", config))
    sh.type("push fr")
    sh.keys("Tab")
    sh.wait_for_line("cachesh> push friend-blocked")
    sh.type("u")
    sh.keys("Tab")
    sh.wait_for_line("cachesh> push friend-blocked user=")


def test_file_name_completes(home):
    work = os.path.join(home, "work")
    os.makedirs(os.path.join(work, "scripts"))
    open(os.path.join(work, "scripts", "demo.cachesh"), "w").close()
    sh = Shell(home, NO_HINTS, cwd=work)
    sh.type("source scr")
    sh.keys("Tab")
    sh.wait_for_line("cachesh> source scripts/")
    sh.keys("Tab")
    sh.wait_for_line("cachesh> source scripts/demo.cachesh")


def test_continuation_prompt(home):
    sh = Shell(home, NO_HINTS)
    sh.type("put doc:1 {")
    sh.keys("Enter")
    sh.wait_for_line("...>")
    sh.type('"a": [1,')
    sh.keys("Enter")
    sh.wait_for(lambda s: s.lines()[2] == "...>", "a second continuation line")
    sh.type("2]}")
    sh.keys("Enter")
    sh.wait_for_line("cachesh>")
    expect(sh.lines()[:3] == ["cachesh> put doc:1 {", '...> "a": [1,', "...> 2]}"], "the command as typed", sh)
    expect(not any(l.startswith("error") for l in sh.lines()), "the value was accepted", sh)
    sh.run("peek doc:1")
    expect(any("fresh" in l for l in sh.lines()), "the entry is cached", sh)


def test_history_across_restart(home):
    sh = Shell(home, NO_HINTS)
    sh.run("echo first")
    sh.type("put doc:2 {")
    sh.keys("Enter")
    sh.wait_for_line("...>")
    sh.run('"b": 2}')
    sh.run(" echo secret")
    sh.keys("C-d")
    sh.wait_for(lambda s: s.dead()[0], "the shell to quit")
    sh.close()

    again = Shell(home, NO_HINTS)
    again.keys("Up")
    again.wait_for_line('cachesh> put doc:2 { "b": 2}', "the multi-line command as one entry")
    again.keys("Up")
    again.wait_for_line("cachesh> echo first")
    again.keys("Down", "Down")
    again.wait_for_line("cachesh>")


def test_two_shells_at_once_keep_each_others_history(home):
    """Two shells on one history file at once: each one's commands are in the file, in the order
    they were run (the second to save wrote its whole history over the first's); each shell's
    Up goes over its own."""
    a = Shell(home, NO_HINTS)
    b = Shell(home, NO_HINTS)
    a.run("echo one")
    b.run("echo two")
    a.run("echo three")
    a.keys("Up")
    a.wait_for_line("cachesh> echo three")
    a.keys("Up")
    a.wait_for_line("cachesh> echo one", "a's own command before, not b's")
    a.keys("C-u")
    a.wait_for_line("cachesh>")
    b.keys("C-d")
    b.wait_for(lambda s: s.dead()[0], "b to quit")
    a.keys("C-d")
    a.wait_for(lambda s: s.dead()[0], "a to quit")
    again = Shell(home, NO_HINTS)
    for line in ("echo three", "echo two", "echo one"):
        again.keys("Up")
        again.wait_for_line(f"cachesh> {line}", "the commands of both shells, newest first")


def test_a_shell_waits_for_another_saving_the_history(home):
    """Two shells pressing Enter at once: the one saving the history holds `history.lock`
    (flock) while it reads the file, adds its command and writes it back, and the other waits
    for it, then reads the file with that command in it. The test plays the first shell: it
    takes the lock and reads the file, the real shell gets Enter, and the test writes its own
    command after what it read and lets the lock go. Without the lock the real shell wrote its
    command in between, and the test's write lost it."""
    waits_for_the_lock(home, os.path.join(home, "history"), os.path.join(home, "history"))


def test_a_shell_on_a_link_to_the_history_takes_the_files_lock(home):
    """A history named through a symbolic link is written where the link leads: the lock is the
    one beside that file, the one a shell naming the file itself takes."""
    os.makedirs(os.path.join(home, "real"))
    link = os.path.join(home, "history-link")
    os.symlink(os.path.join(home, "real", "history"), link)
    waits_for_the_lock(home, link, os.path.join(home, "real", "history"))


def waits_for_the_lock(home, named, history):
    import fcntl
    sh = Shell(home, {**NO_HINTS, "CACHESH_HISTORY": named})
    sh.run("echo before")
    lock = os.open(history + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    with open(history) as f:
        text = f.read()
    expect(text.startswith("_HiStOrY_V2_\n") and "echo\\040before" in text, "the history in libedit's form", sh)
    sh.type("echo waited")
    sh.wait_for(lambda s: s.last_line() == "cachesh> echo waited", "the command typed")
    sh.keys("Enter")
    # While the lock is held the shell does not go on (it saves the history before it runs
    # the command): its output must not come. Half a second, well inside the shell's own
    # 3 s bound on the wait.
    sh.holds_for(0.5, lambda s: "waited" not in s.lines() and s.prompt_count() == 2, "no output while the lock is held")
    other = history + ".other"
    with open(other, "w") as f:
        f.write(text + "echo\\040from\\040the\\040other\n")
    os.rename(other, history)
    os.unlink(history + ".lock")
    os.close(lock)
    sh.wait_for(lambda s: s.prompt_count() == 3 and "waited" in s.lines(), "the command's output once the lock is free")
    expect(not os.path.exists(history + ".lock"), "no lock file left behind", sh)
    sh.keys("C-d")
    sh.wait_for(lambda s: s.dead()[0], "the shell to quit")
    again = Shell(home, {**NO_HINTS, "CACHESH_HISTORY": named})
    for line in ("echo waited", "echo from the other", "echo before"):
        again.keys("Up")
        again.wait_for_line(f"cachesh> {line}", "the commands of both shells, newest first")


def test_a_history_file_libedit_cannot_read_gets_the_shells_whole_history(home):
    """A history file not in libedit's format (no header line: written by hand) is not read;
    the first command then saves the shell's whole history over it, as before (the file is in
    libedit's format from then on). A history file cleared while the shell runs stays cleared:
    the next command is its only one."""
    with open(os.path.join(home, "history"), "w") as f:
        f.write("echo by hand\n")
    sh = Shell(home, NO_HINTS)
    sh.run("echo one")
    sh.run("echo two")
    sh.keys("C-d")
    sh.wait_for(lambda s: s.dead()[0], "the shell to quit")
    again = Shell(home, NO_HINTS)
    for line in ("echo two", "echo one"):
        again.keys("Up")
        again.wait_for_line(f"cachesh> {line}", "both commands of the shell before")
    again.keys("C-u")
    again.wait_for_line("cachesh>")
    open(os.path.join(home, "history"), "w").close()
    again.run("echo three")
    again.keys("C-d")
    again.wait_for(lambda s: s.dead()[0], "the shell to quit")
    last = Shell(home, NO_HINTS)
    last.keys("Up")
    last.wait_for_line("cachesh> echo three")
    last.keys("Up")
    last.wait_for_line("cachesh> echo three", "nothing before it: the cleared history stayed cleared")


def test_ctrl_c_drops_the_line(home):
    sh = Shell(home, NO_HINTS)
    sh.type("evict nothing:here")
    sh.keys("C-c")
    sh.wait_for_line("cachesh>")
    sh.run("echo after")
    expect(sh.lines()[:2] == ["cachesh> echo after", "after"], "nothing ran and no line was left behind", sh)


def test_ctrl_c_drops_an_unfinished_value(home):
    sh = Shell(home, NO_HINTS)
    sh.type("put doc:3 {")
    sh.keys("Enter")
    sh.wait_for_line("...>")
    sh.type('"a": 1,')
    sh.keys("Enter")
    sh.wait_for(lambda s: s.lines()[2] == "...>", "a second continuation line")
    sh.type('"b"')
    sh.keys("C-c")
    sh.wait_for(lambda s: s.lines()[3] == "cachesh>", "a fresh prompt below the dropped value")
    expect(sh.lines()[:3] == ["cachesh> put doc:3 {", '...> "a": 1,', "...> ^C"],
           "the lines already accepted stay on the screen, the interrupted one says ^C", sh)
    sh.run("peek doc:3")
    expect(any("absent" in l for l in sh.lines()), "nothing was stored", sh)


def test_signals_from_another_process_while_a_line_is_edited(home):
    """While a line is typed, signals sent by another process act on the shell alone, never on
    the script that ran it (libedit's own handlers passed each on to the whole process group):
    SIGINT drops the line as Ctrl-C does; SIGTERM ends the shell with status 143, the line as typed and the terminal as it was, and
    the script goes on."""
    sh = Shell(home, NO_HINTS, script=True)
    pid = sh.pid()
    sh.type("evict nothing:here")
    sh.wait_for_line("cachesh> evict nothing:here")
    os.kill(pid, signal.SIGINT)
    sh.wait_for_line("cachesh>", "the line dropped, as by Ctrl-C")
    sh.wait_for(lambda s: not s.echo(), "the editor's mode while the next line is edited")
    # Ctrl-Z with no job-control shell above (the system does not stop the job): the line is
    # edited on, as it was, drawn once.
    line = "echo " + "y" * 150  # two rows at 100 columns
    sh.type(line)
    sh.wait_for(lambda s: [l for l in s.lines() if l][-2:] == [("cachesh> " + line)[:100], ("cachesh> " + line)[100:]],
                "the line typed, on two rows")
    sh.keys("C-z")
    sh.keys("C-a")
    sh.type("#")
    commented = "cachesh> #" + line
    sh.wait_for(lambda s: [l for l in s.lines() if l][-2:] == [commented[:100], commented[100:]],
                "Ctrl-A and # edit the line after Ctrl-Z")
    expect(sum(1 for l in sh.lines() if l.startswith("cachesh> ")) == 1, "the line drawn once", sh)
    sh.keys("Enter")
    sh.wait_for(lambda s: s.last_line() == "cachesh>", "the next prompt")
    sh.type("peek a")
    sh.wait_for(lambda s: s.last_line() == "cachesh> peek a", "the next line typed")
    os.kill(pid, signal.SIGTERM)
    sh.wait_for(lambda s: any(line.startswith("status=") for line in s.lines()), "the shell's end")
    # (sh says "Terminated" of the command it ran.)
    sh.wait_for(lambda s: [line for line in s.lines() if line and line != "Terminated"][-3:]
                == ["cachesh> peek a", "status=143", " echo"],
                "the line as typed, then the script's next lines: status 143, the terminal's echo on")
    expect(not sh.dead()[0], "the script that ran the shell goes on", sh)
    sh.close()


def test_stopped_then_fg_or_killed_under_a_job_control_shell(home):
    """Under a job-control shell (bash): SIGTSTP from another process while a line is typed stops
    the shell with the terminal as it was (bash says so); `fg` gives it back in the editor's mode
    with the line drawn again below bash's lines (a line that wraps erases none of them), and it
    is edited and run. Ctrl-Z in a shell run by a script stops the whole job, as the terminal's
    own suspend key does (bash gets the terminal back), and `kill %1` then ends it."""
    name = "jobs"
    new_session("-s", name, "-x", "100", "-y", "30", "-c", home,
                " ".join(shell_quote(c) for c in ["env", "-i", f"HOME={home}", "PATH=" + os.environ.get("PATH", "/usr/bin:/bin"),
                                                   "TERM=screen", "LANG=C.UTF-8", "EDITRC=", "CACHESH_HINTS=0",
                                                   f"CACHESH_HISTORY={home}/history", "PS1=$ ",
                                                   "bash", "--norc", "--noprofile", "-i"]))
    lines = lambda: [line.rstrip() for line in tmux("capture-pane", "-p", "-t", name).split("\n") if line.strip()]

    def wait(condition, what):
        deadline = time.monotonic() + WAIT
        while not condition():
            expect(time.monotonic() < deadline, f"timed out waiting for {what}; screen: {lines()}")
            time.sleep(0.05)

    def type_line(text):
        tmux("send-keys", "-t", name, "-l", "--", text)
        tmux("send-keys", "-t", name, "Enter")

    wait(lambda: lines()[-1:] == ["$"], "bash's prompt")
    type_line(shell_quote(BIN))
    wait(lambda: lines()[-1:] == ["cachesh>"], "the shell's prompt")
    line = "echo " + "y" * 150  # two rows at 100 columns
    rows = [("cachesh> " + line)[:100], ("cachesh> " + line)[100:]]
    tmux("send-keys", "-t", name, "-l", "--", line)
    wait(lambda: lines()[-2:] == rows, "the line typed, on two rows")
    pid = cachesh_pid(name)
    os.kill(pid, signal.SIGTSTP)
    wait(lambda: any("Stopped" in l for l in lines()) and lines()[-1] == "$" and process_state(pid) == "T",
         "the shell stopped, bash's prompt")
    type_line("stty -a | grep -o -- ' -*echo ' | head -1")
    wait(lambda: lines()[-2:] == [" echo", "$"], "the terminal as it was (echo on)")
    type_line("fg")
    wait(lambda: lines()[-2:] == rows and not terminal_echoes(name),
         "the line drawn again, the terminal in the editor's mode")
    expect("$ fg" in lines() and " echo" in lines() and any("Stopped" in l for l in lines()),
           f"bash's lines above the line, not erased; screen: {lines()}")
    tmux("send-keys", "-t", name, "C-a")
    tmux("send-keys", "-t", name, "-l", "--", "#")
    wait(lambda: lines()[-2] == ("cachesh> #" + line)[:100], "Ctrl-A and # edit the line (a comment)")
    tmux("send-keys", "-t", name, "End")
    tmux("send-keys", "-t", name, "Enter")
    wait(lambda: lines()[-1:] == ["cachesh>"], "the next prompt")
    # Ctrl-Z, `bg`, a command of bash's (the shell in the background reads nothing, so it is not
    # stopped again), then `fg`, which sends no signal to a running job: the line comes back.
    # Then stopped in the background and `fg` again: the line (two rows) is drawn once.
    long = "peek " + "b" * 120
    rows = [("cachesh> " + long)[:100], ("cachesh> " + long)[100:]]
    tmux("send-keys", "-t", name, "-l", "--", long)
    wait(lambda: lines()[-2:] == rows, "the line typed, on two rows")
    tmux("send-keys", "-t", name, "C-z")
    wait(lambda: lines()[-1:] == ["$"] and process_state(pid) == "T", "the shell stopped by Ctrl-Z")
    type_line("bg")
    wait(lambda: lines()[-1:] == ["$"] and "$ bg" in lines() and process_state(pid) in ("S", "R"), "the shell running in the background")
    type_line("echo hi")
    wait(lambda: lines()[-2:] == ["hi", "$"], "bash's command run")
    expect(process_state(pid) in ("S", "R"), f"the shell in the background still running; screen: {lines()}")
    type_line("fg")
    wait(lambda: lines()[-2:] == rows and not terminal_echoes(name), "the line back in the foreground")
    tmux("send-keys", "-t", name, "C-z")
    wait(lambda: lines()[-1:] == ["$"] and process_state(pid) == "T", "the shell stopped by Ctrl-Z again")
    type_line("bg")
    wait(lambda: lines()[-1:] == ["$"] and lines().count("$ bg") == 2 and process_state(pid) in ("S", "R"), "in the background again")
    type_line("kill -STOP %1")
    wait(lambda: process_state(pid) == "T" and lines()[-1:] == ["$"], "stopped in the background")
    type_line("fg")
    wait(lambda: lines()[-2:] == rows and not terminal_echoes(name), "the line back after a stop in the background")
    expect(lines().count(rows[0]) == 3, f"the line drawn once more (after each stop's own), not twice; screen: {lines()}")
    tmux("send-keys", "-t", name, "-l", "--", "x")
    wait(lambda: lines()[-1:] == [rows[1] + "x"], "the line edited")
    tmux("send-keys", "-t", name, "Enter")
    wait(lambda: lines()[-1:] == ["cachesh>"] and any("absent" in l for l in lines()), "the line run")
    # In the background, a resize and a SIGINT draw nothing over bash's screen; at `fg` the
    # SIGINT drops the line.
    tmux("send-keys", "-t", name, "-l", "--", "peek c")
    wait(lambda: lines()[-1:] == ["cachesh> peek c"], "the line typed")
    tmux("send-keys", "-t", name, "C-z")
    wait(lambda: lines()[-1:] == ["$"] and process_state(pid) == "T", "the shell stopped by Ctrl-Z")
    type_line("bg")
    wait(lambda: lines()[-1:] == ["$"] and lines().count("$ bg") == 3 and process_state(pid) in ("S", "R"), "in the background")
    tmux("resize-window", "-t", name, "-x", "90")
    os.kill(pid, signal.SIGINT)
    before = lines()
    holds = time.monotonic() + 1.0
    while time.monotonic() < holds:
        expect(lines() == before and process_state(pid) in ("S", "R"), f"nothing drawn, nothing read; screen: {lines()}")
        time.sleep(0.05)
    type_line("fg")
    wait(lambda: lines()[-1:] == ["cachesh>"] and not terminal_echoes(name), "the line dropped at fg")
    tmux("resize-window", "-t", name, "-x", "100")
    type_line("quit")
    wait(lambda: lines()[-1:] == ["$"] and "cachesh> quit" in lines(), "the shell's end, bash's prompt again")

    tmux("send-keys", "-t", name, "C-l")
    wait(lambda: lines() == ["$"], "a clear screen")
    type_line("sh -c " + shell_quote(shell_quote(BIN) + "; echo status=$?"))
    wait(lambda: lines()[-1:] == ["cachesh>"], "the shell's prompt, under a script")
    tmux("send-keys", "-t", name, "-l", "--", "peek a")
    wait(lambda: lines()[-1:] == ["cachesh> peek a"], "the line typed")
    pid2 = cachesh_pid(name)
    script = parent_pid(pid2)  # sh
    tmux("send-keys", "-t", name, "C-z")
    wait(lambda: any("Stopped" in l for l in lines()) and lines()[-1] == "$"
         and process_state(pid2) == "T" and process_state(script) == "T", "the whole job stopped, bash's prompt")
    type_line("kill %1")
    # (What bash then says of the job is not checked: it may say "Stopped" again, and even in
    # `jobs` after both processes ended, as it reports the job before it has reaped them.)
    wait(lambda: process_state(pid2) in ("", "Z") and process_state(script) in ("", "Z"),
         "the shell and the script that ran it ended, while stopped")
    expect(not any(l.startswith("status=") for l in lines()), f"the script ended with it; screen: {lines()}")
    command = "stty -a | grep -o -- ' -*echo ' | head -1"
    type_line(command)

    def echo_shown():
        shown = lines()
        at = shown.index("$ " + command) if "$ " + command in shown else -1
        return at >= 0 and shown[at + 1:at + 2] == [" echo"] and shown[-1] == "$"

    # (bash may print the job's end between the command and its output's prompt.)
    wait(echo_shown, "the terminal's echo on")


def parent_pid(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def process_state(pid):
    """A process's state letter (R, S, T...) from /proc, or "" once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


def test_home_and_end_move_whatever_term_says(home):
    # tmux sends ESC[1~ / ESC[4~ for Home and End, which xterm's terminfo does not name.
    sh = Shell(home, env={**NO_HINTS, "TERM": "xterm"})
    sh.type("cho hom")
    sh.keys("Home")
    sh.type("e")
    sh.keys("End")
    sh.type("e")
    sh.wait_for_line("cachesh> echo home")
    sh.keys("Enter")
    sh.wait_for(lambda s: "home" in s.lines()[1:], "echo ran with the text as meant")


def test_wide_keys_align_in_tables(home):
    sh = Shell(home, NO_HINTS)
    sh.run("put feed:日本 1")
    sh.run("put feed:ab 2")
    sh.run("keys")
    lines = sh.lines()
    row_cjk = next(l for l in lines if l.startswith("feed:日本"))
    row_ascii = next(l for l in lines if l.startswith("feed:ab "))
    # On the screen, "日本" takes four cells: the state column starts at the same cell.
    def cells(text):
        return sum(2 if "\u3000" <= ch <= "\u9fff" else 1 for ch in text)
    expect(cells(row_cjk[:row_cjk.index("fresh")]) == cells(row_ascii[:row_ascii.index("fresh")]),
           "the state column is aligned", sh)


def test_tables_fit_the_terminal_width(home):
    """On a terminal a table is laid out for its width (as psql's \\x auto): at 200 columns one too
    wide for 80 stays a table; after a resize to 80 it is records again. A recording of the same
    session, the same commands piped, and --echo keep 80 columns: records, byte for byte."""
    slow = 60
    setup = "ns feed ttl=5m stale=1m naive=join-refetch"
    table = re.compile(r"namespace\s+ttl\s+stale\s+max\s+policy\s+stale-if-error\s+timeout\s+purgeable\s+entries\s+naive")
    sh = Shell(home, NO_HINTS, width=200, height=50)
    sh.run("record wide.transcript", slow)
    sh.run(setup, slow)
    sh.run("ns", slow)
    sh.wait_for(lambda s: any(table.fullmatch(l) for l in s.lines()), "the namespaces as a table at 200 columns")
    expect(any(re.fullmatch(r"feed\s+5m\s+1m\s+-\s+lru\s+-\s+-\s+no\s+0\s+join-refetch", l) for l in sh.lines()),
           "its row", sh)
    expect(not any(l.startswith("namespace:") for l in sh.lines()), "no records at 200 columns", sh)
    sh.run("record stop", slow)
    # The width is read again before each command.
    tmux("resize-window", "-t", sh.name, "-x", "80", "-y", "50")
    sh.run("ns", slow)
    sh.wait_for(lambda s: "namespace:      feed" in s.lines(), "the namespaces as records at 80 columns")
    piped = subprocess.run([BIN], input=setup + "\nns\n", capture_output=True, text=True, timeout=slow)
    records = piped.stdout.split("\n")[1:]
    expect(records[0] == "namespace:      feed" and "naive:          join-refetch" in records
           and not any(table.fullmatch(l) for l in records), f"piped, the same command prints records:\n{piped.stdout}")
    with open(os.path.join(home, "wide.transcript"), encoding="utf-8") as f:
        recorded = f.read()
    expect("cachesh> ns\nnamespace:      feed\n" in recorded, f"the recording keeps 80 columns:\n{recorded}")
    run = subprocess.run([BIN, "--verify", os.path.join(home, "wide.transcript")], capture_output=True, text=True, timeout=slow)
    expect(run.returncode == 0, f"the recording verifies: {run.stdout}{run.stderr}")
    # A script on a 200-column terminal: a table; with --echo (a transcript), records.
    script = os.path.join(home, "wide.cachesh")
    with open(script, "w") as f:
        f.write(setup + "\nns\n")
    batch = Shell(home, NO_HINTS, args=(script,), width=200, height=30, first_prompt=False)
    batch.wait_for(lambda s: s.dead()[0], "the script to end", slow)
    expect(any(table.fullmatch(l) for l in batch.lines()), "a script on a terminal fits its width", batch)
    echoed = Shell(home, NO_HINTS, args=("--echo", script), width=200, height=30, first_prompt=False)
    echoed.wait_for(lambda s: s.dead()[0], "the echoed script to end", slow)
    expect("namespace:      feed" in echoed.lines() and not any(table.fullmatch(l) for l in echoed.lines()),
           "--echo writes a transcript: 80 columns", echoed)


def test_ctrl_d_quits_with_status_0(home):
    sh = Shell(home, NO_HINTS)
    sh.run("put a:1 1")
    sh.keys("C-d")
    sh.wait_for(lambda s: s.dead()[1] is not None, "the shell to quit")
    expect(sh.dead() == (True, 0), f"exit status 0, got {sh.dead()}", sh)


def test_non_ascii_input(home):
    sh = Shell(home, NO_HINTS)
    sh.run("echo café")
    expect(sh.lines()[:2] == ["cachesh> echo café", "café"], "café survives", sh)
    sh.run('put menu:1 "crème brûlée"')
    sh.run("peek menu:1")
    expect(any("crème brûlée" in l for l in sh.lines()), "the value keeps its accents", sh)


def test_hints_shown_and_erased(home):
    sh = Shell(home)
    sh.run("put feed:home 1")
    sh.type("get ")
    sh.wait_for(lambda s: (s.prompt_line() or "").startswith("cachesh> get") and "KEY" in s.prompt_line(),
                "the synopsis hint")
    hinted = next(l for l in sh.lines(attributes=True) if l.startswith("cachesh> get"))
    expect("\x1b[2m" in hinted, f"the hint is dim: {hinted!r}", sh)
    sh.type("feed:home")
    sh.wait_for(lambda s: re.fullmatch(r"cachesh> get feed:home\s+fresh, expires in 5m", s.prompt_line() or ""),
                "the key's state and expiry")
    sh.keys("Enter")
    sh.wait_for(lambda s: s.last_line() == "cachesh>", "the next prompt")
    expect(sh.lines()[2] == "cachesh> get feed:home", "the hint was erased from the accepted line", sh)
    # Completion works with hints on too.
    sh.type("peek feed:h")
    sh.keys("Tab")
    sh.type("x")
    sh.wait_for_line("cachesh> peek feed:home x", "the completed key")


def test_hints_hidden(home):
    for env in ({"CACHESH_HINTS": "0"}, {"NO_COLOR": "1"}, {"TERM": "dumb"}):
        sh = Shell(home, env)
        sh.type("get ")
        sh.type("x")
        sh.wait_for_line("cachesh> get x", f"no hint with {env}")
        sh.close()


def test_no_colour_under_no_color(home):
    coloured = Shell(home)
    coloured.run("put a:1 1")
    coloured.run("peek a:1")
    state = next(l for l in coloured.lines(attributes=True) if l.startswith("state:"))
    expect(SGR.search(state), f"the state is coloured on a terminal: {state!r}", coloured)
    coloured.close()

    plain = Shell(home, {"NO_COLOR": "1"})
    plain.run("put a:1 1")
    plain.run("peek a:1")
    expect(not any(SGR.search(l) for l in plain.lines(attributes=True)), "no colour under NO_COLOR", plain)


def test_completion_over_100k_keys(home):
    script = os.path.join(home, "fill.cachesh")
    with open(script, "w") as f:
        f.write("ns feed max=200000\n")
        for i in range(100_000):
            f.write(f"put feed:{i} {i}\n")
    sh = Shell(home, NO_HINTS)
    started = time.monotonic()
    sh.type(f"source {script}")
    sh.keys("Enter")
    # While a command runs the line editor has handed the terminal back (canonical mode).
    tty = tmux("display-message", "-p", "-t", sh.name, "#{pane_tty}").strip()
    sh.wait_for(lambda s: "icanon" in subprocess.run(["stty", "-F", tty, "-a"], capture_output=True,
                                                     text=True).stdout.split(), "the command to be running")
    sh.wait_for(lambda s: s.last_line() == "cachesh>", "the prompt after the 100,000 puts", 300)
    print(f"    (source of 100,000 puts, index rebuilt: {time.monotonic() - started:.1f} s)")
    sh.type("get feed:9999")
    sh.wait_for_line("cachesh> get feed:9999")
    start = time.monotonic()
    sh.keys("Tab", "Tab")  # no further common prefix, then the list of feed:9999 and feed:99990..99999
    sh.wait_for(lambda s: any(re.search(r"feed:99990\s+feed:99992", l) for l in s.lines()), "the list of keys")
    elapsed = time.monotonic() - start
    print(f"    (Tab Tab over 100,000 keys: the list was on screen within {elapsed * 1000:.0f} ms)")


def test_ctrl_c_stops_a_replay(home):
    """Ctrl-C while replay runs stops it with an error; the shell and the session go on unchanged."""
    trace = os.path.join(home, "big.txt")
    with open(trace, "w") as f:
        for i in range(2_000_000):
            f.write(f"k{(i * 7919) % 50_000}\n")
    sh = Shell(home, NO_HINTS)
    sh.type(f"replay {trace} policy=lru,fifo,sieve,lfu max=10,100,1000,10000 ttl=1m,5m stale=none,10s")
    sh.keys("Enter")
    tty = tmux("display-message", "-p", "-t", sh.name, "#{pane_tty}").strip()
    sh.wait_for(lambda s: "icanon" in subprocess.run(["stty", "-F", tty, "-a"], capture_output=True,
                                                     text=True).stdout.split(), "the replay to be running")
    sh.keys("C-c")
    sh.wait_for(lambda s: any("error: replay: interrupted after" in l for l in s.lines()), "the interrupted replay", 60)
    sh.wait_for(lambda s: s.last_line() == "cachesh>", "the prompt after the interrupt")
    expect(not sh.dead()[0], "Ctrl-C during replay does not end the shell", sh)
    sh.run("now")
    sh.wait_for(lambda s: any(l.startswith("now_ms: 0") for l in s.lines()), "the clock unchanged by the replay")


def test_a_long_replay_shows_its_progress_then_erases_it(home):
    """A replay that runs past a second shows a progress line on the terminal (standard error),
    erased when it ends: the screen then holds the command and its reply only. Piped, nothing."""
    trace = os.path.join(home, "big.txt")
    with open(trace, "w") as f:
        for i in range(1_000_000):
            f.write(f"k{(i * 7919) % 50_000}\n")
    command = f"replay {trace} policy=lru,fifo max=1000,10000"
    progress = re.compile(r"replay: \d+% of " + re.escape(trace) + r", \d+ requests \(Ctrl-C stops it\)")
    sh = Shell(home, NO_HINTS, width=200)
    sh.type(command)
    sh.keys("Enter")
    sh.wait_for(lambda s: any(progress.fullmatch(l) for l in s.lines()), "the progress line", 120)
    sh.wait_for(lambda s: s.last_line() == "cachesh>", "the prompt after the replay", 300)
    lines = [l for l in sh.lines() if l]
    expect(not any("% of" in l for l in lines), "the progress line is erased", sh)
    at = lines.index("cachesh> " + command)
    expect(lines[at + 1].startswith("replayed 1000000 requests of "), "the reply follows the command", sh)
    piped = subprocess.run([BIN, "-c", command], capture_output=True, text=True, timeout=300)
    expect(piped.returncode == 0 and piped.stderr == "" and "%" not in piped.stdout,
           f"piped, no progress: {piped.stderr!r}")


def test_a_copied_session_is_a_transcript(home):
    """A session captured from the terminal, prompts and all, verifies with --verify; an edit fails it."""
    sh = Shell(home, env=NO_HINTS, height=60)
    sh.run("ns feed ttl=45m stale=5m")
    sh.run('server set feed:home {"posts": [{"id": 1, "likes": 3}]}')
    sh.run("get feed:home")
    sh.type('event entity 1 {"likes":')
    sh.keys("Enter")
    sh.wait_for_line("...>", "the continuation prompt")
    sh.type(' {"$inc": 1}}')
    sh.keys("Enter")
    sh.wait_for(lambda s: s.last_line() == "cachesh>", "the prompt after the event")
    sh.run("bogus")
    sh.run("advance 5m")
    sh.run("keys")
    captured = "\n".join(sh.lines()).rstrip() + "\n"
    expect("error: unknown command" in captured, "the error is on screen", sh)
    path = os.path.join(home, "pasted.transcript")
    with open(path, "w") as f:
        f.write("Pasted from a terminal:\n$ cachesh\n" + captured)
    run = subprocess.run([BIN, "--verify", path], capture_output=True, text=True)
    expect(run.returncode == 0 and run.stdout.endswith("1 passed, 0 failed\n"),
           f"the captured session verifies: {run.stdout}{run.stderr}\n--- captured:\n{captured}")
    with open(path, "w") as f:
        f.write(captured.replace("\"likes\":3}", "\"likes\":5}"))
    run = subprocess.run([BIN, "--verify", path], capture_output=True, text=True)
    expect(run.returncode == 1 and "@ " in run.stdout and "1 failed" in run.stdout,
           f"an edited capture fails with a diff: {run.stdout}")


def test_a_colour_session_records_a_transcript_that_verifies(home):
    """In a colour terminal the states are coloured on screen; `record` writes plain text, and the
    recording passes --verify."""
    slow = 60  # a busy machine may take a while; the wait ends as soon as the screen shows it
    sh = Shell(home, env={"TERM": "xterm-256color"}, height=60)
    sh.run("ns feed ttl=1m stale=1m", slow)
    sh.run('server set feed:a {"n": 1}', slow)
    sh.run("get feed:a", slow)
    sh.run("advance 90s", slow)
    sh.run("keys", slow)
    sh.run("advance 2m", slow)
    sh.run("get feed:a", slow)
    sh.run("watch feed:a", slow)
    sh.run("put feed:a 2", slow)
    screen = "\n".join(sh.lines(attributes=True))
    expect(re.search(r"\x1b\[[0-9;]*m(fresh|stale|expired)", screen) is not None, "the states are coloured on the terminal", sh)
    sh.run("record rec.transcript --from-start", slow)
    sh.run("record stop", slow)
    path = os.path.join(home, "rec.transcript")
    with open(path, encoding="utf-8") as f:
        recorded = f.read()
    expect("\x1b" not in recorded, f"the recording holds no escape sequence:\n{recorded!r}")
    expect("cachesh> get feed:a" in recorded and "state:" in recorded, f"the recording holds the session:\n{recorded}")
    run = subprocess.run([BIN, "--verify", path], capture_output=True, text=True, timeout=slow)
    expect(run.returncode == 0 and run.stdout == "1 passed, 0 failed\n",
           f"the recording verifies: {run.stdout}{run.stderr}\n--- recorded:\n{recorded}")


def test_record_starts_here_with_the_state_on_one_line_or_from_the_start(home):
    """`record FILE` in a typed session writes from here on: the state as one `restore` line, then
    the commands after it, comments included, without the typos and `help all` typed before;
    `record FILE --from-start` writes the whole session. Both verify under --safe."""
    slow = 60
    sh = Shell(home, NO_HINTS, args=("--no-pager",), height=60)
    for command in ["ns feed ttl=1m stale=30s", "put feed:a 1", "gte feed:a", "help all"]:
        sh.run(command, slow)
    sh.run("record here.transcript", slow)
    sh.wait_for(lambda s: "recording to here.transcript from here on" in s.text(), "record's reply")
    for command in ["# the bug: feed:a turns stale at 30s", "advance 40s", "peek feed:a", "record stop"]:
        sh.run(command, slow)
    sh.run("record all.transcript --from-start", slow)
    sh.run("record stop", slow)
    with open(os.path.join(home, "here.transcript"), encoding="utf-8") as f:
        here = f.read()
    lines = here.split("\n")
    expect(lines[0] == "cachesh> # recorded by cachesh (a whole recording ends with # end of recording)"
           and lines[-2:] == ["cachesh> # end of recording", ""], f"its first and last lines:\n{here}")
    expect(lines[1].startswith("cachesh> restore {\"clock_start\":") and lines[1].endswith("}"),
           f"the state is one line:\n{here}")
    expect(lines[2] == "restored (1 entry, now 2026-01-01T00:00:00.000Z)", f"its reply:\n{here}")
    expect(lines[3:5] == ["cachesh> # the bug: feed:a turns stale at 30s", "cachesh> advance 40s"],
           f"then the comment and the commands:\n{here}")
    expect("gte" not in here and "help all" not in here, f"nothing typed before record:\n{here}")
    with open(os.path.join(home, "all.transcript"), encoding="utf-8") as f:
        whole = f.read()
    expect(whole.startswith("cachesh> # recorded by cachesh (a whole recording ends with # end of recording)\n"
                            "cachesh> ns feed ttl=1m stale=30s\n") and "cachesh> gte feed:a\nerror: " in whole
           and "cachesh> help all\n" in whole and "cachesh> # the bug: feed:a turns stale at 30s\n" in whole,
           f"--from-start writes the whole session:\n{whole[:2000]}")
    for name in ["here.transcript", "all.transcript"]:
        run = subprocess.run([BIN, "--safe", "--verify", os.path.join(home, name)], capture_output=True, text=True, timeout=slow)
        expect(run.returncode == 0 and run.stdout == "1 passed, 0 failed\n", f"{name} verifies: {run.stdout}{run.stderr}")


def test_safe_mode_completes_no_files_and_keeps_no_history(home):
    work = os.path.join(home, "work")
    os.makedirs(os.path.join(work, "scripts"))
    open(os.path.join(work, "scripts", "demo.cachesh"), "w").close()
    history = os.path.join(home, "history")
    with open(history, "w") as f:
        f.write("_HiStOrY_V2_\necho\\040from-history\n")
    sh = Shell(home, NO_HINTS, args=("--safe",), cwd=work)
    # The history file is not read: Up finds nothing, so the x lands on an empty line.
    sh.keys("Up")
    sh.type("x")
    sh.wait_for_line("cachesh> x", "the typed x alone on the line")
    sh.keys("C-u")
    # Tab completes no file name: the x follows the typed text.
    sh.type("source scr")
    sh.keys("Tab")
    sh.type("x")
    sh.wait_for_line("cachesh> source scrx", "the typed text, not completed")
    sh.keys("C-u")
    # Commands still complete, and this session's own history still works, in memory.
    sh.type("ech")
    sh.keys("Tab")
    sh.type("safe")
    sh.wait_for_line("cachesh> echo safe")
    sh.keys("Enter")
    sh.wait_for(lambda s: s.last_line() == "cachesh>" and "safe" in s.lines(), "the echo's output")
    sh.keys("Up")
    sh.wait_for_line("cachesh> echo safe", "the session's own history")
    sh.keys("C-u", "C-d")
    sh.wait_for(lambda s: s.dead()[0], "the shell to quit")
    with open(history) as f:
        expect(f.read() == "_HiStOrY_V2_\necho\\040from-history\n", "the history file was not written")
    expect(sorted(os.listdir(home)) == ["history", "work"], f"no other file was written: {os.listdir(home)}")


def test_safe_mode_runs_no_pager_and_reads_no_editrc(home):
    # $PAGER runs through /bin/sh (and less runs commands: !cmd, v, :e): under --safe, none runs.
    marker = os.path.join(home, "paged")
    pager = os.path.join(home, "pager.sh")
    with open(pager, "w") as f:
        f.write(f"#!/bin/sh\ntouch {marker}\ncat\n")
    os.chmod(pager, 0o755)
    # An editrc binding Q to type text: read without --safe, not with it.
    with open(os.path.join(home, ".editrc"), "w") as f:
        f.write('bind -s "Q" "echo from-editrc"\n')
    env = {**NO_HINTS, "PAGER": pager, "EDITRC": None}
    # Without --safe both are used, so the check below can fail.
    sh = Shell(home, env, width=80, height=24)
    sh.type("Q")
    sh.wait_for_line("cachesh> echo from-editrc", "the editrc's binding")
    sh.keys("C-u")
    sh.run("help all")
    sh.wait_for(lambda s: os.path.exists(marker), "the pager to run")
    sh.close()
    os.remove(marker)
    sh = Shell(home, env, args=("--safe",), width=80, height=24)
    sh.type("Q")
    sh.wait_for_line("cachesh> Q", "Q typed as itself")
    sh.keys("C-u")
    sh.run("help all")
    shown = [l for l in sh.lines() if l]
    expect(shown[-2].startswith("help COMMAND explains one command"), "help printed whole, then the prompt", sh)
    expect(not os.path.exists(marker), "the pager did not run", sh)


def test_history_file_is_read_and_written_like_other_files(home):
    # A FIFO is neither opened (which would block the start) nor replaced.
    fifo = os.path.join(home, "fifo")
    os.mkfifo(fifo)
    sh = Shell(home, {**NO_HINTS, "CACHESH_HISTORY": fifo})
    expect(f"cachesh: not using the history file {fifo}: is a FIFO, not a regular file" in sh.lines(),
           "a note says why", sh)
    sh.run("echo one")
    sh.keys("C-d")
    sh.wait_for(lambda s: s.dead()[0], "the shell to quit")
    expect(stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO is still a FIFO")
    # Through a symbolic link: the file it leads to is read, then rewritten with its mode kept.
    os.makedirs(os.path.join(home, "dot"))
    real = os.path.join(home, "dot", "history")
    with open(real, "w") as f:
        f.write("_HiStOrY_V2_\necho\\040old\n")
    os.chmod(real, 0o600)
    link = os.path.join(home, "history-link")
    os.symlink(real, link)
    sh = Shell(home, {**NO_HINTS, "CACHESH_HISTORY": link})
    sh.keys("Up")
    sh.wait_for_line("cachesh> echo old", "the entry read through the link")
    sh.keys("C-u")
    sh.run("echo new")
    expect(os.path.islink(link) and os.readlink(link) == real, "the link is still a link")
    expect(stat.S_IMODE(os.stat(real).st_mode) == 0o600, f"the mode is kept: {oct(os.stat(real).st_mode)}")
    with open(real) as f:
        expect("echo\\040new" in f.read(), "the new entry is saved in the file the link leads to")


def test_store_in_use_then_wait_interrupted_then_continued(home):
    db = os.path.join(home, "s.db")
    holder = Shell(home, NO_HINTS, args=("--store", db))
    holder.run("put a:1 1")
    pid = int(tmux("display-message", "-p", "-t", holder.name, "#{pane_pid}").strip())
    # Another process on the store: one line, exit 2.
    refused = subprocess.run([BIN, "--store", db, "-c", "keys"], capture_output=True, text=True)
    expect(refused.returncode == 2 and refused.stdout == "" and refused.stderr ==
           f"cachesh: {db} is in use by another cachesh (process {pid}); "
           "one process at a time may open a store (--wait waits for it)\n", f"refused: {refused}")
    waiting = f"cachesh: waiting for {db}: in use by another cachesh (process {pid})"
    # --wait waits; Ctrl-C ends the wait, and the process with it.
    interrupted = Shell(home, NO_HINTS, args=("--store", db, "--wait"), first_prompt=False)
    interrupted.wait_for(lambda s: waiting in s.lines(), "the note that it waits")
    interrupted.keys("C-c")
    interrupted.wait_for(lambda s: s.dead()[0], "Ctrl-C to end the wait")
    expect(interrupted.prompt_line() is None, "it never opened the store", interrupted)
    # --wait again: it continues once the holder quits, from what the holder left.
    waiter = Shell(home, NO_HINTS, args=("--store", db, "--wait"), first_prompt=False)
    waiter.wait_for(lambda s: waiting in s.lines(), "the note that it waits")
    holder.keys("C-d")
    holder.wait_for(lambda s: s.dead()[0], "the holder to quit")
    waiter.wait_for(lambda s: s.prompt_line() == "cachesh>", "the prompt once the store is free")
    waiter.run("keys a:*")
    expect("a:1  fresh  0" in waiter.lines(), "the holder's entry is there", waiter)
    waiter.run("put a:2 2")
    waiter.keys("C-d")
    waiter.wait_for(lambda s: s.dead()[0], "the waiter to quit")
    # A clean exit leaves the whole store in its file: a copy of the file alone has both entries.
    copy = os.path.join(home, "copy.db")
    shutil.copyfile(db, copy)
    reopened = subprocess.run([BIN, "--store", copy, "-c", "keys"], capture_output=True, text=True)
    expect(reopened.stdout == "key  state  age_ms\na:1  fresh  0\na:2  fresh  0\n", f"the copy: {reopened}")


def test_ctrl_c_cuts_a_long_output(home):
    """Ctrl-C while a long output is printed returns to the prompt: the rest is dropped with a
    note, the command itself having completed."""
    script = os.path.join(home, "fill.cachesh")
    with open(script, "w") as f:
        f.write("ns big max=300000\n")
        for i in range(60_000):
            f.write(f'put big:{i} {{"n": {i}, "pad": "{"x" * 40}"}}\n')
    sh = Shell(home, NO_HINTS)
    sh.run(f"source {script}", 300)
    sh.type("snapshot")
    sh.keys("Enter")
    sh.wait_for(lambda s: any('"pad"' in line for line in s.lines()), "the snapshot being printed", 300)
    sh.keys("C-c")
    sh.wait_for(lambda s: "(output cut: Ctrl-C)" in s.lines() and s.last_line() == "cachesh>",
                "the note and the prompt", 300)
    sh.run("now")
    expect("now_ms: 0" in sh.lines(), "the shell goes on", sh)


def test_ctrl_c_stops_a_long_source_between_commands(home):
    """Ctrl-C while `source` runs stops it before its next command and returns to the prompt;
    the shell goes on, and every command that ran ran whole."""
    script = os.path.join(home, "fill.cachesh")
    with open(script, "w") as f:
        f.write("ns feed max=2000000\n")
        for i in range(1_000_000):
            f.write(f"put feed:{i} {i}\n")
    sh = Shell(home, NO_HINTS)
    sh.type(f"source {script}")
    sh.keys("Enter")
    tty = tmux("display-message", "-p", "-t", sh.name, "#{pane_tty}").strip()

    def running(s):
        # The editor has handed the line over: the terminal is back in its cooked mode (ICANON)
        # and the shell has moved the cursor below the line, which it does just before the
        # command starts. A Ctrl-C from here on is meant for the command.
        rows = tmux("capture-pane", "-p", "-t", s.name).split("\n")
        line = next((i for i, r in enumerate(rows) if r.startswith(f"cachesh> source {script}")), None)
        cursor = int(tmux("display-message", "-p", "-t", s.name, "#{cursor_y}").strip())
        modes = subprocess.run(["stty", "-F", tty, "-a"], capture_output=True, text=True).stdout.split()
        return line is not None and cursor > line and "icanon" in modes and "isig" in modes

    sh.wait_for(running, "the command to be running", 120)
    sh.keys("C-c")
    sh.wait_for(lambda s: any("error: interrupted (Ctrl-C) after " in l for l in s.lines())
                and s.last_line() == "cachesh>", "the interruption and the prompt", 300)
    expect(not sh.dead()[0], "Ctrl-C while a command runs does not end the shell", sh)
    line = next(l for l in sh.lines() if "error: interrupted" in l)
    ran = int(line.split("after ")[1].split(" ")[0])
    expect(ran < 1_000_001, f"the source stopped early: {line}", sh)
    # The first command (ns) and ran - 1 puts ran, each whole; the next did not.
    sh.run(f"peek feed:{max(ran - 1, 0)}")
    expect(any(l.startswith("state:") and l.split()[1] == "absent" for l in sh.lines()), "the next put did not run", sh)
    if ran >= 2:
        sh.run(f"peek feed:{ran - 2}")
        expect(any(l.startswith("state:") and l.split()[1] == "fresh" for l in sh.lines()), "the last put that ran is there", sh)


def test_resize_redraws_a_wrapped_line(home):
    """Narrowing, then widening, the window while a line wraps redraws it at the new width on a
    terminal that does not re-wrap: the line once, no stale row, the cursor after the text; and
    editing goes on."""
    sh = Screen(home, width=40, height=12)
    words = "echo one two three four five six seven eight nine ten"
    line = "cachesh> " + words

    def drawn(width):
        return [line[i:i + width] for i in range(0, len(line), width)]

    def shows(width):
        def check(s):
            rows = s.rows()
            top = next((i for i, r in enumerate(rows) if r.startswith("cachesh>")), None)
            if top is None:
                return False
            wrapped = drawn(width)
            return (rows[top:top + len(wrapped)] == wrapped and not any(rows[top + len(wrapped):])
                    and sum(1 for r in rows if "cachesh>" in r) == 1
                    and (s.screen.cursor.y, s.screen.cursor.x) == (top + len(wrapped) - 1, len(wrapped[-1])))
        return check

    sh.type(words)
    sh.wait_for(shows(40), "the line wrapped at 40 columns")
    above = sh.rows()[:next(i for i, r in enumerate(sh.rows()) if r.startswith("cachesh>"))]
    sh.resize(25, 12)
    sh.wait_for(shows(25), "the line redrawn at 25 columns, no stale row, without a key")
    expect(sh.rows()[:len(above)] == [r[:25].rstrip() for r in above], "what was above the line is left alone", sh)
    sh.resize(40, 12)
    sh.wait_for(shows(40), "the line redrawn at 40 columns, the third row cleared")
    sh.type(" eleven\r")
    output = "one two three four five six seven eight nine ten eleven"
    expected = [(line + " eleven")[i:i + 40].rstrip() for i in range(0, len(line) + 7, 40)] + \
        [output[i:i + 40].rstrip() for i in range(0, len(output), 40)] + ["cachesh>"]
    sh.wait_for(lambda s: any(s.rows()[i:i + len(expected)] == expected for i in range(len(s.rows()))),
                "the command as typed, its output, then the prompt")


def test_resize_redraws_a_wrapped_line_where_the_terminal_rewraps(home):
    """tmux re-wraps a line when its width changes, moving the cursor down or up a row: the line
    is still drawn once at the new width, from its first row, and what was above stays. (With
    hints on, as by default, every key redraws the whole line.)"""
    sh = Shell(home, width=40, height=12)
    words = "echo one two three four five six seven eight nine ten"
    line = "cachesh> " + words

    def shows(width):
        wrapped = [line[i:i + width].rstrip() for i in range(0, len(line), width)]

        def check(s):
            rows = s.lines(banner=True)
            top = next((i for i, r in enumerate(rows) if r.startswith("cachesh>")), None)
            # Right above the line, the end of the banner (re-wrapped by tmux too; its first rows
            # may have gone up into tmux's history); the line once, nothing below.
            return (top is not None and top > 0 and rows[top - 1].endswith("leave")
                    and sum(1 for r in rows if "cachesh>" in r) == 1
                    and rows[top:top + len(wrapped)] == wrapped and not any(rows[top + len(wrapped):]))
        return check

    sh.type(words)
    sh.wait_for(shows(40), "the line wrapped at 40 columns")
    # tmux re-wraps the text itself; an edit inside the line after each resize shows whether the
    # shell knows where its line now is.
    for width, key in ((25, "s"), (40, "x"), (31, "y")):
        tmux("resize-window", "-t", sh.name, "-x", str(width), "-y", "12")
        # tmux changes its screen at once but tells the terminal device (which signals the shell)
        # a moment later: keys typed in between would be drawn for the old width.
        tty = tmux("display-message", "-p", "-t", sh.name, "#{pane_tty}").strip()
        sh.wait_for(lambda s: subprocess.run(["stty", "-F", tty, "size"], capture_output=True,
                                             text=True).stdout.split() == ["12", str(width)],
                    f"the terminal device to be {width} columns wide")
        sh.keys("Left")
        sh.type(key)
        sh.keys("End")
        line = line[:-1] + key + line[-1]
        sh.wait_for(shows(width), f"the line drawn once at {width} columns, the banner above it")


def test_resize_redraws_a_continuation_line_with_the_cursor_inside(home):
    """On a continuation line (`...>`) with the cursor inside the text, a narrower window redraws
    that line from its first row, the cursor where it was in the text; the line already accepted
    above stays; the value is then finished and stored."""
    sh = Screen(home, width=40, height=12)
    sh.type("put doc:1 {\r")
    sh.wait_for(lambda s: "...>" in s.rows(), "the continuation prompt")
    text = '"title": "a title long enough to wrap", "n": 1'
    sh.type(text + "\x1b[D" * 6)  # six Left arrows: the cursor before `"n": 1`
    line = "...> " + text

    def shows(width):
        def check(s):
            rows = s.rows()
            top = next((i for i, r in enumerate(rows) if r.startswith("...>")), None)
            wrapped = [line[i:i + width].rstrip() for i in range(0, len(line), width)]
            cursor = len(line) - 6
            return (top is not None and rows[top - 1] == "cachesh> put doc:1 {"[:width]
                    and rows[top:top + len(wrapped)] == wrapped and not any(rows[top + len(wrapped):])
                    and (s.screen.cursor.y, s.screen.cursor.x) == (top + cursor // width, cursor % width))
        return check

    sh.wait_for(shows(40), "the continuation line wrapped at 40 columns, the cursor inside")
    sh.resize(30, 12)
    sh.wait_for(shows(30), "the continuation line redrawn at 30 columns, the cursor in the same place")
    sh.type("\x1b[F}\r")  # End, close the value, Enter
    sh.wait_for(lambda s: "cachesh>" in s.rows(), "the next prompt")
    sh.type("peek doc:1\r")
    sh.wait_for(lambda s: any(r.startswith("state:") and "fresh" in r for r in s.rows()), "the value was stored")


def test_a_line_that_is_not_utf8_is_not_run(home):
    """A typed line holding a byte that is not UTF-8 (a Latin-1 terminal's é) gets one error line
    and is not run, nor the earlier lines of the command it ends; the session goes on. libedit
    used to drop the byte and run what was left (`put caf:1 1`)."""
    sh = Screen(home, NO_HINTS, width=100, height=16)
    error = "error: not UTF-8 text (byte 0xE9): cachesh reads UTF-8; the command was not run"
    sh.child.send(b"put caf\xe9:1 1\r")
    sh.wait_for(lambda s: s.rows().count(error) == 1 and [r for r in s.rows() if r][-1] == "cachesh>",
                "the error line, then a prompt")
    sh.child.send(b'put doc:1 {\r"name": "\xe9"}\r')
    sh.wait_for(lambda s: s.rows().count(error) == 2, "the error line of the continuation")
    sh.type("put café:1 1\r")
    sh.wait_for(lambda s: "keys: café:1" in s.rows(), "a UTF-8 line runs")
    sh.type("keys\r")
    sh.wait_for(lambda s: any(r.startswith("café:1") for r in s.rows()), "the keys")
    rows = [r for r in sh.rows() if r]
    expect(not any(r.startswith("caf:1") or r.startswith("doc:1") for r in rows), "nothing of the bad lines ran", sh)
    expect(rows.count(error) == 2, "one error line each", sh)


class InspectedApp:
    """The test app that embeds a live cache and starts CacheInspector on a socket in `home`
    (built beside the shell); `call` has it make a call and returns what it printed."""

    def __init__(self, home):
        app = os.path.join(os.path.dirname(BIN), "inspected-app")
        if not os.access(app, os.X_OK):
            raise AssertionError(f"cannot run {app} (swift build builds it beside cachesh)")
        self.socket_path = os.path.join(home, "app.sock")
        self.process = subprocess.Popen([app, "unix", self.socket_path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL)
        self.pending = b""
        while self.line() != "go":
            pass

    def line(self):
        """The app's next line, waiting at most WAIT seconds for it."""
        deadline = time.monotonic() + WAIT
        while b"\n" not in self.pending:
            ready, _, _ = select.select([self.process.stdout], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(self.process.stdout.fileno(), 65536) if ready else b""
            if not chunk:
                raise AssertionError(f"the inspected app said nothing more (after {self.pending!r})")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line.decode()

    def call(self, line):
        self.process.stdin.write((line + "\n").encode())
        self.process.stdin.flush()
        return self.line()

    def close(self):
        self.process.kill()
        self.process.wait()


def attach_run(s, command, shows=None):
    """Types a command at the attach> prompt and Enter, then waits for a line holding `shows`
    (when given) and the next empty prompt."""
    s.type(command)
    s.keys("Enter")
    s.wait_for(lambda s: (shows is None or any(shows in line for line in s.lines())) and s.last_line() == "attach>",
               f"{shows!r} after {command!r}, then the prompt" if shows else f"the prompt after {command!r}")


def attach_ends(s, key, status, why):
    """Presses `key` and waits for the attachment to end with exit status `status`."""
    s.keys(key)
    s.wait_for(lambda s: s.dead()[0], "the attachment's end")
    expect(s.dead()[1] == status, f"exit status {status} ({why}), got {s.dead()[1]}", s)


def attach_prompt_line(s):
    return next((line for line in reversed(s.lines()) if line.startswith("attach>")), None)


def test_attach_edits_lines_keeps_history_and_prints_changes_above_the_line(home):
    app = InspectedApp(home)
    try:
        s = Shell(home, args=("attach", app.socket_path), first_prompt=False)
        s.wait_for(lambda s: attach_prompt_line(s) == "attach>", "the attach> prompt")
        # Line editing: a word typed wrong, mended at its start (Home, Delete) before Enter.
        s.type("xpeek profile:42")
        s.wait_for(lambda s: attach_prompt_line(s) == "attach> xpeek profile:42", "the line typed")
        s.keys("Home")
        s.keys("Delete")
        s.wait_for(lambda s: attach_prompt_line(s) == "attach> peek profile:42", "the x deleted")
        s.keys("Enter")
        s.wait_for(lambda s: any('"name":"Ada"' in line for line in s.lines()) and s.last_line() == "attach>",
                   "the peek's value, then the prompt")
        # History: Up recalls the command.
        s.keys("Up")
        s.wait_for(lambda s: s.last_line() == "attach> peek profile:42", "the command recalled")
        s.keys("C-u")
        s.wait_for(lambda s: s.last_line() == "attach>", "the line emptied")
        # Changes streamed while a line is typed are printed above it; the line stays as typed.
        attach_run(s, "watch feed:*")
        s.type("peek feed:ho")
        s.wait_for(lambda s: s.last_line() == "attach> peek feed:ho", "a line half typed")
        expect(app.call("get feed:new").startswith("got feed:new"), "the app read feed:new")
        s.wait_for(lambda s: any("feed:new" in line for line in s.lines()[:-1]) and s.last_line() == "attach> peek feed:ho",
                   "the change printed above the line, the line kept")
        attach_run(s, "me", shows='"items":[1,2]')
        # A JSON value left open goes on at the `...>` prompt; the command runs once it closes.
        s.type("event patch feed:home {")
        s.keys("Enter")
        s.wait_for(lambda s: s.last_line() == "...>", "the continuation prompt")
        attach_run(s, '"items": [9]}')
        attach_run(s, "peek feed:home", shows='"items":[9]')
        # Ctrl-C drops a line typed; on an empty line it ends the attachment, as the signal does.
        s.type("peek nothing")
        s.keys("C-c")
        s.wait_for(lambda s: s.last_line() == "attach>", "the line dropped")
        attach_ends(s, "C-c", 130, "as SIGINT")
        # (libedit's history file writes a blank as \\040.)
        history = open(os.path.join(home, "history")).read().replace("\\040", " ").split("\n")
        expect(history[1:6] == ["peek profile:42", "watch feed:*", "peek feed:home", 'event patch feed:home { "items": [9]}',
                                "peek feed:home"], f"the history file holds the commands: {history}")
    finally:
        app.close()


def test_attach_ctrl_c_on_an_empty_line_writes_the_recording(home):
    app = InspectedApp(home)
    try:
        s = Shell(home, args=("attach", app.socket_path), first_prompt=False)
        s.wait_for(lambda s: attach_prompt_line(s) == "attach>", "the attach> prompt")
        attach_run(s, "record session.cachesh")
        attach_run(s, "peek profile:42", shows='"name":"Ada"')
        attach_ends(s, "C-c", 0, "the recording written")
        transcript = open(os.path.join(home, "session.cachesh")).read()
        expect("cachesh> peek profile:42\n" in transcript, f"the transcript holds the peek:\n{transcript}")
    finally:
        app.close()


def test_attach_on_a_dumb_terminal_and_ctrl_d_on_an_open_value(home):
    """TERM=dumb: a change streamed while a line is typed goes below the line (no cursor
    movement), and the line is drawn again after it. Ctrl-D at `...>` sends the open value as it
    is (the app refuses it) and ends the input."""
    app = InspectedApp(home)
    try:
        s = Shell(home, args=("attach", app.socket_path), env={"TERM": "dumb"}, first_prompt=False)
        s.wait_for(lambda s: attach_prompt_line(s) == "attach>", "the attach> prompt")
        attach_run(s, "watch feed:*")
        s.type("peek feed:ho")
        s.wait_for(lambda s: s.last_line() == "attach> peek feed:ho", "a line half typed")
        expect(app.call("get feed:new").startswith("got feed:new"), "the app read feed:new")
        s.wait_for(lambda s: any("feed:new" in line for line in s.lines()) and s.last_line() == "attach> peek feed:ho"
                   and s.lines().count("attach> peek feed:ho") == 2, "the change below the line, the line again")
        s.keys("C-u")
        s.wait_for(lambda s: s.last_line() == "attach>", "the line emptied")
        # (Nothing watched: at the end of the input the shell would go on printing the changes.)
        attach_run(s, "unwatch")
        s.type("event patch feed:home {")
        s.keys("Enter")
        s.wait_for(lambda s: s.last_line() == "...>", "the continuation prompt")
        attach_ends(s, "C-d", 1, "the open value refused")
        expect(any(line.startswith("error:") for line in s.lines()), "the app's error for the open value", s)
    finally:
        app.close()


def test_attach_tab_completes_from_the_app(home):
    """Tab over an attachment completes from the app: a key the app holds (and one it stored
    since the last Tab), and of the commands only those that run over an attachment; a second
    Tab lists them. Under --read-only no command that writes is offered."""
    app = InspectedApp(home)
    try:
        s = Shell(home, args=("attach", app.socket_path), first_prompt=False)
        s.wait_for(lambda s: attach_prompt_line(s) == "attach>", "the attach> prompt")
        s.type("peek profile:")
        s.keys("Tab")
        s.wait_for(lambda s: s.last_line() == "attach> peek profile:42", "the app's key completed")
        s.type("x")
        s.wait_for(lambda s: s.last_line() == "attach> peek profile:42 x", "a space after the key")
        s.keys("C-u")
        expect(app.call("get feed:new").startswith("got feed:new"), "the app read feed:new")
        s.type("peek feed:n")
        s.keys("Tab")
        s.wait_for(lambda s: s.last_line() == "attach> peek feed:new", "a key stored since the last Tab")
        s.keys("C-u")
        s.type("s")
        s.keys("Tab")
        s.keys("Tab")
        s.wait_for(lambda s: any("snapshot" in l and "stats" in l for l in s.lines()), "the commands that run over an attachment")
        expect(not any("server" in l or "source" in l for l in s.lines()), "no command the app refuses", s)
        s.keys("C-u")
        s.type("inv")
        s.keys("Tab")
        s.wait_for(lambda s: s.last_line() == "attach> invalidate", "a command that writes")
        s.keys("C-u")
        s.wait_for(lambda s: s.last_line() == "attach>", "the line emptied")
        attach_ends(s, "C-d", 0, "the end of the input")
        s = Shell(home, args=("attach", "--read-only", app.socket_path), first_prompt=False)
        s.wait_for(lambda s: attach_prompt_line(s) == "attach>", "the attach> prompt")
        s.type("e")
        s.keys("Tab")
        s.wait_for(lambda s: s.last_line() == "attach> explain", "under --read-only, the one e command that only reads")
    finally:
        app.close()


class FakeApp:
    """A socket that speaks the app's side of the protocol by hand, and `cachesh attach` to it
    in the tmux session "fake" (followed by its exit status and the terminal's echo setting)."""

    def __init__(self, home):
        import socket as sockets
        path = os.path.join(home, "fake.sock")
        self.server = sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM)
        self.server.bind(path)
        self.server.listen(1)
        quoted = " ".join(shell_quote(c) for c in [BIN, "attach", path])
        script = f"{quoted}; echo status=$?; stty -a | grep -o -- ' -*echo ' | head -1; sleep 600"
        new_session("-s", "fake", "-x", "100", "-y", "30", "-c", home,
                    " ".join(shell_quote(c) for c in ["env", "-i", f"HOME={home}", "PATH=" + os.environ.get("PATH", "/usr/bin:/bin"),
                                                       "TERM=screen", "LANG=C.UTF-8", "EDITRC=", f"CACHESH_HISTORY={home}/history",
                                                       "sh", "-c", script]))
        self.server.settimeout(WAIT)
        self.connection, _ = self.server.accept()
        self.connection.settimeout(WAIT)
        self.reader = self.connection.makefile("rb")
        hello = self.reader.readline()
        expect(b'"op":"hello"' in hello, f"the shell said hello: {hello!r}")
        self.connection.sendall(b'{"id":0,"ok":true,"protocol":1}\n')
        self.wait_for(lambda lines: any(line.startswith("attach>") for line in lines), "the attach> prompt")

    def screen(self):
        return [line.rstrip() for line in tmux("capture-pane", "-p", "-t", "fake").split("\n")]

    def wait_for(self, condition, what):
        deadline = time.monotonic() + WAIT
        while not condition(self.screen()):
            expect(time.monotonic() < deadline, f"{what}; screen: {self.screen()}")
            time.sleep(0.05)

    def type(self, text):
        tmux("send-keys", "-t", "fake", "-l", "--", text)

    def request(self):
        """The shell's next request, as an object."""
        return json.loads(self.reader.readline())

    def close(self):
        self.connection.close()
        self.server.close()


def test_attach_tab_holds_what_the_app_streams_while_it_waits(home):
    """A change the app streams while a Tab waits for its answer is printed above the line, not
    over it, and the completion is made; an app that does not answer a Tab (an earlier version's
    refusal, or no answer within 2 s) leaves the line as typed, and the shell goes on."""
    app = FakeApp(home)
    try:
        app.type("peek feed:h")
        app.wait_for(lambda lines: "attach> peek feed:h" in lines, "the line typed")
        tmux("send-keys", "-t", "fake", "Tab")
        asked = app.request()
        expect(asked["op"] == "complete" and asked["text"] == "peek feed:h", f"the Tab's request: {asked}")
        app.connection.sendall(b'{"event":{"key":"feed:home"},"output":"* feed:home stored (the app)"}\n'
                               + json.dumps({"id": asked["id"], "ok": True, "candidates": ["feed:home"], "total": 1,
                                             "replaced": "feed:h", "common_prefix": "feed:home"}).encode() + b"\n")
        app.wait_for(lambda lines: lines[:2] == ["* feed:home stored (the app)", "attach> peek feed:home"],
                     "the change above, the line completed below it")
        # An app of an earlier version refuses the request: the line stays as typed.
        app.type("x ")
        tmux("send-keys", "-t", "fake", "Tab")
        asked = app.request()
        app.connection.sendall(json.dumps({"id": asked["id"], "ok": False, "error": "attach: unknown op"}).encode() + b"\n")
        # No answer at all: after 2 s the Tab gives up, and the line is edited again.
        tmux("send-keys", "-t", "fake", "Tab")
        late = app.request()
        expect(late["op"] == "complete", f"a second Tab's request: {late}")
        app.type("y")
        app.wait_for(lambda lines: "attach> peek feed:home x y" in lines, "the line as typed, the shell editing again")
        # Its answer, arriving while the next Tab waits, is not taken for the next one's.
        tmux("send-keys", "-t", "fake", "BSpace", "Tab")
        asked = app.request()
        expect(asked["id"] != late["id"] and asked["text"] == "peek feed:home x ", f"the next Tab's request: {asked}")
        app.connection.sendall(json.dumps({"id": late["id"], "ok": True, "candidates": ["zzz"], "total": 1,
                                           "replaced": "", "common_prefix": "zzz"}).encode() + b"\n"
                               + json.dumps({"id": asked["id"], "ok": True, "candidates": ["yes"], "total": 1,
                                             "replaced": "", "common_prefix": "yes"}).encode() + b"\n")
        app.wait_for(lambda lines: "attach> peek feed:home x yes" in lines, "the answer to this Tab")
        expect(not any("zzz" in line for line in app.screen()), "the late answer not used", app.screen())
        tmux("send-keys", "-t", "fake", "Enter")
        ran = app.request()
        expect(ran["op"] == "run" and ran["command"] == "peek feed:home x yes", f"the line run as completed: {ran}")
        app.connection.sendall(json.dumps({"id": ran["id"], "ok": True, "output": "done\n"}).encode() + b"\n")
        app.wait_for(lambda lines: "done" in lines and lines[lines.index("done") + 1] == "attach>", "its output, then the prompt")
        # The app ends while a Tab waits: what it sent before is printed, then the end, each on a
        # line of its own; the terminal is given back.
        app.type("peek p")
        tmux("send-keys", "-t", "fake", "Tab")
        app.request()
        app.connection.sendall(b'{"event":{"key":"profile:1"},"output":"* profile:1 stored (the app)"}\n')
        app.connection.shutdown(2)  # SHUT_RDWR: the reader made by makefile keeps the socket open
        app.wait_for(lambda lines: any(line.startswith("status=") for line in lines), "the shell's end")
        lines = app.screen()
        expect("* profile:1 stored (the app)" in lines and "cachesh: attach: the app ended the attachment" in lines
               and "status=2" in lines and " echo" in [line for line in tmux("capture-pane", "-p", "-t", "fake").split("\n")],
               f"the change, then the end on a line of its own, exit status 2, the terminal's echo back; screen: {lines}")
    finally:
        app.close()


def test_attach_ending_while_a_line_is_edited_restores_the_terminal(home):
    """An app that sends what the shell refuses (a line that is not a JSON object) while a line
    is being typed ends the attachment from inside the edit: one line, exit status 2, and the
    terminal as it was (echo on), not in the editor's mode."""
    app = FakeApp(home)
    try:
        app.type("peek feed:ho")
        app.wait_for(lambda lines: "attach> peek feed:ho" in lines, "the line typed")
        app.connection.sendall(b"not json\n")
        app.wait_for(lambda lines: any(line.strip() in ("echo", "-echo") for line in lines), "the shell's end")
        lines = app.screen()
        expect("cachesh: attach: the app sent a line that is not a JSON object; detached" in lines, f"one line; screen: {lines}")
        expect("status=2" in lines and " echo" in [line for line in tmux("capture-pane", "-p", "-t", "fake").split("\n")],
               f"exit status 2, the terminal's echo back on; screen: {lines}")
    finally:
        app.close()



def test_attach_a_line_refused_while_tab_waits_ends_in_the_lines_place(home):
    """A line from the app that is not a JSON object, read while a Tab waits for its answer,
    ends the attachment as it does while a line is typed: the line typed is taken off the screen
    and the one message takes its place (it was written after the line's text); exit status 2
    and the terminal's echo back on. A line that wraps is taken off from its first row."""
    app = FakeApp(home)
    try:
        long = "peek feed:" + "h" * 120
        app.type(long)
        app.wait_for(lambda lines: any(line.startswith("attach> peek feed:hhh") for line in lines), "the line typed")
        tmux("send-keys", "-t", "fake", "Tab")
        asked = app.request()
        expect(asked["op"] == "complete", f"the Tab's request: {asked}")
        app.connection.sendall(b"not json\n")
        app.wait_for(lambda lines: any(line.strip() in ("echo", "-echo") for line in lines), "the shell's end")
        lines = [line for line in app.screen() if line]
        expect(lines[:2] == ["cachesh: attach: the app sent a line that is not a JSON object; detached", "status=2"]
               and not any("hhh" in line for line in lines),
               f"the message in the line's place, nothing of the line left; screen: {lines}")
        expect(" echo" in [line for line in tmux("capture-pane", "-p", "-t", "fake").split("\n")],
               f"the terminal's echo back on; screen: {lines}")
    finally:
        app.close()


def test_attach_ended_by_sigterm_while_a_line_is_typed_leaves_the_line(home):
    """SIGTERM while a line is typed (no recording) ends the attachment with status 143: the
    line stays as typed, what comes next starts on a line of its own (it was written after the
    line's text), and the script that ran it goes on (libedit passed the signal on to the whole
    process group, ending the script too)."""
    app = FakeApp(home)
    try:
        app.type("peek feed:h")
        app.wait_for(lambda lines: "attach> peek feed:h" in lines, "the line typed")
        os.kill(cachesh_pid("fake"), signal.SIGTERM)
        app.wait_for(lambda lines: any(line.startswith("status=") for line in lines)
                     and any(line.strip() in ("echo", "-echo") for line in lines), "the shell's end")
        lines = [line for line in app.screen() if line]
        at = lines.index("attach> peek feed:h") if "attach> peek feed:h" in lines else -1
        expect(at >= 0 and lines[at + 1:at + 3] == ["status=143", " echo"],
               f"the line as typed, then the status and the terminal's echo below it; screen: {lines}")
        expect(tmux("display-message", "-p", "-t", "fake", "#{pane_dead}").strip() == "0",
               f"the script goes on; screen: {lines}")
    finally:
        app.close()


TESTS = [(name[5:], fn) for name, fn in list(globals().items()) if name.startswith("test_")]



def main():
    if not os.access(BIN, os.X_OK):
        print(f"cannot run {BIN} (set CACHESH_BIN)")
        return 2
    if shutil.which("tmux") is None:
        print("tmux is not installed")
        return 2
    wanted = set(sys.argv[1:])
    failures = 0
    tmux("start-server", check=False)
    keep_server_alive()
    try:
        for name, fn in TESTS:
            if wanted and name not in wanted:
                continue
            home = tempfile.mkdtemp(prefix="cachesh-test-")
            started = time.monotonic()
            try:
                fn(home)
                print(f"ok   {name} ({time.monotonic() - started:.1f}s)")
            except Exception as error:  # noqa: BLE001 — every failure is reported the same way
                failures += 1
                detail = str(error) if isinstance(error, AssertionError) else traceback.format_exc()
                print(f"FAIL {name}: " + detail.replace("\n", "\n     "))
            finally:
                while Screen.running:
                    Screen.running.pop().close()
                for session in tmux("list-sessions", "-F", "#{session_name}", check=False).split():
                    if session != "keepalive":
                        tmux("kill-session", "-t", session, check=False)
                shutil.rmtree(home, ignore_errors=True)
    finally:
        tmux("kill-server", check=False)
        socket = os.path.join(os.environ.get("TMUX_TMPDIR", "/tmp"), f"tmux-{os.getuid()}", SOCKET)
        if os.path.exists(socket):
            os.remove(socket)
        shutil.rmtree(os.path.dirname(TMUX_CONF), ignore_errors=True)
    print(f"{failures} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
