#!/usr/bin/env python3
"""Runs every shell command in README.md, as written, against a freshly made Gable.

    GABLE_BIN=target/debug/gable python3 tests/readme/run.py

Each ```sh block of README.md is run in order, one command at a time (a line, with its
`\\` continuations), by bash from the repository root. A command passes when it exits 0
and every HTTP answer it got was 2xx. New blocks are run without changing this script.

SUBSTITUTIONS -- the only changes made to a command; anything else a reader would have
to fill in is a README bug, to be fixed in README.md:
  gbl_test_…                      the sandbox key the fresh server printed
                                  ("Sandbox key (shown once): gbl_test_…")
  127.0.0.1:8080, 127.0.0.1:8081  the production and sandbox addresses (free ports)
  127.0.0.1:4242, localhost:4242  the webhook receiver's address (a free port, given to the
                                  receiver as PORT, the variable it reads)
  <the invoice id>                the first id in the output of the latest earlier command
                                  that listed open invoices (/invoices?filter[status]=open)
  whsec_…                         the "secret" of the latest earlier answer that had one
                                  (creating the webhook)

HOW COMMANDS ARE RUN:
  - bash with `set -eo pipefail`; variables an earlier command set are kept, as in the
    reader's terminal (KEY=…; API=… in one block, $KEY in a later one).
  - `curl` on the PATH is a shim: the real curl with --fail-with-body (a 4xx/5xx fails
    the command), recording each answer's HTTP status; any status outside 2xx fails.
  - `gable` on the PATH is $GABLE_BIN acting on the test's data directory, with a config
    directory of the test's own for `gable login`'s profiles (GABLE_CLI_HOME).
  - `gable listen …` (but `--print-secret`) is started in the background, as a reader
    leaves it running in a terminal of its own; the test goes on once it says it is
    forwarding (or ready), and stops it at the end of its block.
  - `make run` and `make test` alone are the build and the test suite (CI runs them):
    not run. The server is $GABLE_BIN, started before the first block on an empty data
    directory; its welcome banner gives the key.
  - `make run ARGS="…"` and `gable serve …` mean "serve with these flags": the server
    is stopped and `$GABLE_BIN serve …` started with those flags on the same data
    directory and addresses, so the key stays valid.
  - `… python3 receiver.py` (after variable assignments, which may run `gable`) starts the
    README's receiver (the Python between
    <!-- receiver:start --> and <!-- receiver:end -->, saved as receiver.py) in the
    background. After the last command of its block the test waits up to 30 s for the
    receiver (which prints only verified deliveries) to print the event type named in
    that command's comment (`# lead.created`), or any event if none is named.
  - Any other `make` target fails the test: it has no meaning here yet.

Exits non-zero naming the failing command; always stops the server and the receiver.
"""

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(ROOT, "README.md")
COMMAND_TIMEOUT = 60  # seconds for one command
EVENT_TIMEOUT = 30  # seconds for the receiver to print the expected event
START_TIMEOUT = 60  # seconds for the server to print its banner / accept connections
REDIRECTING_ENV = [
    "DATABASE_URL", "GABLE_DATA_DIR", "GABLE_ADDR", "GABLE_SANDBOX_ADDR", "GABLE_PUBLIC_URL",
    "GABLE_SANDBOX_PUBLIC_URL", "GABLE_WEBHOOK_ALLOW_CIDRS", "GABLE_MASTER_KEY", "GABLE_CONFIG",
]
ELLIPSIS = "\u2026"


class Failure(Exception):
    pass


def say(*parts):
    print(*parts, flush=True)


def excerpt(text, limit=240):
    one = " ".join(text.split())
    return one if len(one) <= limit else one[:limit] + " …"


# ---- README parsing ------------------------------------------------------------------

def parse_readme(text):
    """The ```sh blocks as (first line number, [(line number, command)]), and the receiver."""
    lines = text.split("\n")
    blocks, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```sh":
            start, body = i + 2, []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            blocks.append((start - 1, split_commands(body, start)))
        i += 1
    m = re.search(r"<!-- receiver:start -->\s*```python\n(.*?)```\s*<!-- receiver:end -->", text, re.S)
    if not m:
        raise Failure("README.md has no Python receiver between <!-- receiver:start --> and <!-- receiver:end -->")
    return blocks, m.group(1)


def incomplete(src):
    """True when bash reads `src` as cut off (an open quote, a missing `fi` …)."""
    p = subprocess.run(["bash", "-n"], input=src, capture_output=True, text=True)
    return p.returncode != 0 and ("unexpected end of file" in p.stderr or "unexpected EOF" in p.stderr)


def split_commands(body, first_line):
    """Commands of a block: lines with their `\\` continuations (and whatever else bash
    needs to see a whole command); blank lines and comment lines are left out."""
    commands, i = [], 0
    while i < len(body):
        line = body[i]
        if not line.strip() or line.strip().startswith("#"):
            i += 1
            continue
        start, cmd = first_line + i, line
        while (cmd.endswith("\\") or incomplete(cmd)) and i + 1 < len(body):
            i += 1
            cmd += "\n" + body[i]
        commands.append((start, cmd))
        i += 1
    return commands


def split_comment(cmd):
    """(the command, its trailing comment): the comment starts at a `#` that begins a
    word outside quotes, as in bash."""
    quote, escaped, prev = None, False, " "
    for i, ch in enumerate(cmd):
        if escaped:
            escaped = False
        elif ch == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and prev.isspace():
            return cmd[:i], cmd[i + 1:].strip()
        prev = ch
    return cmd, ""


def words(cmd):
    """The command's words as the shell would split them, comment dropped (None when its
    quoting does not parse: bash then reports the error itself)."""
    try:
        return shlex.split(split_comment(cmd)[0].replace("\\\n", " "))
    except ValueError:
        return None


def kind_of(argv):
    """What a command is: ("skip", why), ("serve", flags), ("receiver", None), ("listen", None), ("run", None)."""
    if not argv:
        return "run", None
    j = 0
    while j < len(argv) and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", argv[j]):
        j += 1
    rest = argv[j:]
    if rest[:1] == ["make"]:
        targets = [a for a in rest[1:] if "=" not in a and not a.startswith("-")]
        make_vars = dict(a.split("=", 1) for a in rest[1:] + argv[:j] if "=" in a)
        if targets == ["run"] and "ARGS" in make_vars:
            return "serve", shlex.split(make_vars["ARGS"])
        if targets == ["run"]:
            return "skip", "`make run` is the build and a server; the server under test is $GABLE_BIN, started already"
        if targets == ["test"]:
            return "skip", "`make test` is the whole build and test suite: CI runs it (this test is part of it)"
        raise Failure(f"run.py does not know what `make {' '.join(targets)}` should do here; teach it (top of tests/readme/run.py)")
    if rest[:2] == ["gable", "serve"]:
        return "serve", rest[2:]
    if rest[:2] == ["gable", "listen"] and "--print-secret" not in rest:
        return "listen", None
    # `VAR=$(…) python3 receiver.py`: the words of the assignment's command come first.
    if any(os.path.basename(a) == "receiver.py" for a in rest) and any(a.startswith("python") for a in rest):
        return "receiver", None
    return "run", None


# ---- processes ---------------------------------------------------------------------------

def free_ports(n):
    """N distinct free local ports, from the scripts' shared .ci/fresh-server."""
    out = subprocess.run(["bash", os.path.join(ROOT, ".ci", "fresh-server"), "ports", str(n)],
                         check=True, capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def drain(stream, path, lines):
    """Copies a child's output to a file and a list, line by line, as it comes."""
    with open(path, "a", encoding="utf-8", errors="replace") as f:
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace")
            f.write(line)
            f.flush()
            lines.append(line.rstrip("\n"))


class Child:
    """A background process in its own process group, its stdout kept in `lines`."""

    def __init__(self, name, argv, cwd, env, out_path, err_path):
        self.name, self.out_path, self.err_path, self.lines = name, out_path, err_path, []
        self.err = open(err_path, "ab")
        self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=self.err, start_new_session=True)
        self.reader = threading.Thread(target=drain, args=(self.proc.stdout, out_path, self.lines), daemon=True)
        self.reader.start()

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.alive():
            for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
                try:
                    os.killpg(self.proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.proc.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        else:
            try:  # anything it left behind in its group
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.reader.join(5)
        self.err.close()

    def stderr_tail(self, n=30):
        try:
            with open(self.err_path, encoding="utf-8", errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""


CURL_SHIM = r'''#!/usr/bin/env python3
# curl as the README test runs it: the real curl with --fail-with-body, and each answer's
# HTTP status (and URL) appended to $GABLE_README_STATUS; stdout passes through untouched.
import os, subprocess, sys
MARK = "\x1egable-readme-http "
argv = [REAL_CURL, "--fail-with-body", "--write-out", "%{stderr}" + MARK + "%{http_code} %{url_effective}\\n"] + sys.argv[1:]
p = subprocess.Popen(argv, stderr=subprocess.PIPE)
statuses = []
for raw in p.stderr:
    line = raw.decode("utf-8", "replace")
    if line.startswith(MARK):
        statuses.append(line[len(MARK):])
    else:
        sys.stderr.write(line)
        sys.stderr.flush()
rc = p.wait()
with open(os.environ["GABLE_README_STATUS"], "a") as f:
    f.write("".join(statuses) if statuses else "none (curl %d) %s\n" % (rc, " ".join(sys.argv[1:])))
sys.exit(rc)
'''

GABLE_SHIM = '''#!/bin/sh
# `gable` as the README test runs it: the binary under test, on the test's data directory.
GABLE_DATA_DIR={data}; export GABLE_DATA_DIR
exec {bin} "$@"
'''

# Runs one command in the current shell (so assignments stay), then saves the variables it
# set for the next command. $1: the state file, $2: the command file.
WRAPPER = r'''__gable_base=" $(compgen -v | tr '\n' ' ') "
__gable_state=$1 __gable_cmd=$2
set --
[ -f "$__gable_state" ] && source "$__gable_state"
set -eo pipefail
source "$__gable_cmd"
__gable_rc=$?
set +e
for __gable_v in $(compgen -v); do
    case "$__gable_base" in *" $__gable_v "*) continue ;; esac
    case "$__gable_v" in __gable_* | BASH* | PIPESTATUS | _) continue ;; esac
    declare -p "$__gable_v"
done >"$__gable_state.new" 2>/dev/null && mv "$__gable_state.new" "$__gable_state"
exit $__gable_rc
'''


# ---- the run -----------------------------------------------------------------------------

class Run:
    def __init__(self, bin_path, tmp):
        self.bin, self.tmp = bin_path, tmp
        self.data = os.path.join(tmp, "data")
        self.live_port, self.sandbox_port, self.receiver_port = free_ports(3)
        self.server = None
        self.receiver = None
        self.listener = None
        self.cli_home = os.path.join(tmp, "cli")
        self.key = None
        self.outputs = []  # (command as run, stdout) of every command so far
        self.ran = self.skipped = self.answers = 0
        self.serves = 0
        self.bin_dir = os.path.join(tmp, "bin")
        os.makedirs(self.bin_dir)
        real_curl = shutil.which("curl")
        if not real_curl:
            raise Failure("curl is not installed")
        with open(os.path.join(self.bin_dir, "curl"), "w") as f:
            f.write(CURL_SHIM.replace("REAL_CURL", repr(real_curl)))
        with open(os.path.join(self.bin_dir, "gable"), "w") as f:
            f.write(GABLE_SHIM.format(data=shlex.quote(self.data), bin=shlex.quote(self.bin)))
        for name in ("curl", "gable"):
            os.chmod(os.path.join(self.bin_dir, name), 0o755)
        with open(os.path.join(tmp, "wrapper.sh"), "w") as f:
            f.write(WRAPPER)
        self.state = os.path.join(tmp, "shell-state.sh")
        self.status_file = os.path.join(tmp, "http-status")

    # -- the server
    def server_env(self):
        env = {k: v for k, v in os.environ.items() if k not in REDIRECTING_ENV}
        env["NO_COLOR"] = "1"  # a plain log to quote when something fails
        env["GABLE_CLI_HOME"] = self.cli_home  # `gable login`'s profiles: the test's own
        return env

    def shell_env(self):
        """A README command's environment: the shims first on the PATH."""
        return dict(self.server_env(), PATH=self.bin_dir + os.pathsep + os.environ.get("PATH", ""))

    def start_server(self, flags):
        self.serves += 1
        argv = [self.bin, "--data-dir", self.data, "serve", "--addr", f"127.0.0.1:{self.live_port}",
                "--sandbox-addr", f"127.0.0.1:{self.sandbox_port}", *flags]
        say(f"  server: {' '.join(shlex.quote(a) for a in argv)}")
        self.server = Child("server", argv, ROOT, self.server_env(), os.path.join(self.tmp, f"server-{self.serves}.out"),
                            os.path.join(self.tmp, "server.log"))
        deadline = time.time() + START_TIMEOUT
        first = self.key is None
        while time.time() < deadline:
            if not self.server.alive():
                raise Failure(f"the server exited (status {self.server.proc.returncode}); its log:\n{self.server.stderr_tail()}")
            if first:
                for line in self.server.lines:
                    m = re.search(r"Sandbox key \(shown once\): (gbl_test_\S+)", line)
                    if m:
                        self.key = m.group(1)
                if self.key and self.accepting():
                    self.check_banner()
                    return
            elif self.accepting():
                say("  server: accepting connections (no banner: not a first start, the key stays valid)")
                return
            time.sleep(0.2)
        raise Failure(f"the server printed no sandbox key / accepted no connection within {START_TIMEOUT} s; its log:\n"
                      f"{self.server.stderr_tail()}")

    def accepting(self):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.sandbox_port}/v1/openapi.json", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def check_banner(self):
        want = {
            "Console:": f"http://127.0.0.1:{self.live_port}/",
            "API:": f"http://127.0.0.1:{self.live_port}/v1",
            "Sandbox API:": f"http://127.0.0.1:{self.sandbox_port}/v1",
        }
        say("  banner:")
        for label, url in want.items():
            line = next((ln for ln in self.server.lines if ln.strip().startswith(label)), None)
            if line is None or line.split()[-1] != url:
                raise Failure(f"the welcome banner's {label!r} line is {line!r}, expected {url}; banner:\n"
                              + "\n".join(self.server.lines))
            say(f"    {line.strip()}")
        say(f"    Sandbox key (shown once): {self.key}")

    def restart(self, flags):
        say(f"  server: stopping it, to serve with {' '.join(flags) or 'no flags'}")
        self.server.stop()
        self.start_server(flags)

    # -- substitutions
    def substitute(self, where, cmd):
        subs = {
            "127.0.0.1:8080": f"127.0.0.1:{self.live_port}",
            "127.0.0.1:8081": f"127.0.0.1:{self.sandbox_port}",
            "127.0.0.1:4242": f"127.0.0.1:{self.receiver_port}",
            "localhost:4242": f"localhost:{self.receiver_port}",
        }
        if "gbl_test_" + ELLIPSIS in cmd:
            subs["gbl_test_" + ELLIPSIS] = self.key
        if "<the invoice id>" in cmd:
            subs["<the invoice id>"] = self.open_invoice()
        if "whsec_" + ELLIPSIS in cmd:
            subs["whsec_" + ELLIPSIS] = self.webhook_secret()
        for old, new in subs.items():
            cmd = cmd.replace(old, new)
        argv = words(cmd)
        left = ELLIPSIS in " ".join(argv) if argv is not None else False
        if left or (argv is not None and re.search(r"<[a-z][a-z ]*>", " ".join(argv))):
            raise Failure(f"{where}: a placeholder is left that the test has no substitution for (can a reader "
                          f"fill it in? fix README.md, or add a rule at the top of tests/readme/run.py): {cmd}")
        return cmd

    def open_invoice(self):
        for cmd, out in reversed(self.outputs):
            if "invoices" in cmd and "[status]=open" in cmd:
                try:
                    data = json.loads(out)["data"]
                    return data[0]["id"]
                except (ValueError, KeyError, IndexError, TypeError):
                    raise Failure("the command listing open invoices returned no invoice: " + excerpt(out))
        raise Failure("`<the invoice id>` but no earlier command listed open invoices (invoices?filter[status]=open)")

    def webhook_secret(self):
        for _, out in reversed(self.outputs):
            m = re.search(r'"secret"\s*:\s*"(whsec_[^"]+)"', out)
            if m:
                return m.group(1)
        raise Failure("`whsec_…` but no earlier answer carried a webhook secret")

    # -- commands
    def run_command(self, where, cmd):
        open(self.status_file, "w").close()
        cmd_file = os.path.join(self.tmp, "command.sh")
        with open(cmd_file, "w") as f:
            f.write(cmd + "\n")
        env = dict(self.shell_env(), GABLE_README_STATUS=self.status_file)
        say(f"\n$ {cmd}    [{where}]")
        t0 = time.time()
        try:
            p = subprocess.run(["bash", os.path.join(self.tmp, "wrapper.sh"), self.state, cmd_file], cwd=ROOT, env=env,
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=COMMAND_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise Failure(f"{where}: still running after {COMMAND_TIMEOUT} s: {cmd}")
        out, err = p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
        with open(self.status_file) as f:
            statuses = [ln.split(" ", 1) for ln in f.read().splitlines() if ln.strip()]
        self.answers += len(statuses)
        codes = " ".join(s[0] for s in statuses) or "-"
        say(f"  exit {p.returncode}, HTTP {codes}, {time.time() - t0:.1f} s")
        if out.strip():
            say(f"  > {excerpt(out)}")
        bad = [s for s in statuses if not re.fullmatch(r"2\d\d", s[0])]
        if p.returncode != 0 or bad:
            why = f"exit status {p.returncode}" if p.returncode else ""
            if bad:
                why += (", " if why else "") + "HTTP " + "; ".join(f"{s[0]} from {s[1] if len(s) > 1 else '?'}" for s in bad)
            raise Failure(f"{where}: {why}\n  command: {cmd}\n  stdout: {excerpt(out, 2000)}\n  stderr: {excerpt(err, 2000)}")
        self.outputs.append((cmd, out))
        self.ran += 1

    def start_receiver(self, where, cmd, receiver_src):
        rdir = os.path.join(self.tmp, "receiver")
        os.makedirs(rdir, exist_ok=True)
        with open(os.path.join(rdir, "receiver.py"), "w") as f:
            f.write(receiver_src)
        if self.receiver:
            self.receiver.stop()
        say(f"\n$ {cmd}    [{where}; in the background, in a directory holding the README's receiver.py, "
            f"PORT={self.receiver_port}]")
        env = dict(self.shell_env(), PORT=str(self.receiver_port))
        self.receiver = Child("receiver", ["bash", "-c", cmd], rdir, env, os.path.join(self.tmp, "receiver.out"),
                              os.path.join(self.tmp, "receiver.err"))
        deadline = time.time() + 10
        while time.time() < deadline:
            if not self.receiver.alive():
                raise Failure(f"{where}: the receiver exited (status {self.receiver.proc.returncode}):\n"
                              f"{self.receiver.stderr_tail()}")
            try:
                socket.create_connection(("127.0.0.1", self.receiver_port), timeout=1).close()
                say(f"  receiver listening on 127.0.0.1:{self.receiver_port}")
                self.ran += 1
                return
            except OSError:
                time.sleep(0.2)
        raise Failure(f"{where}: the receiver is not listening on port {self.receiver_port} after 10 s")

    def start_listener(self, where, cmd):
        """`gable listen …` in the background, once it says it is forwarding (or printing)."""
        self.stop_listener()
        say(f"\n$ {cmd}    [{where}; in the background]")
        self.listener = Child("listen", ["bash", "-c", cmd], ROOT, self.shell_env(), os.path.join(self.tmp, "listen.out"),
                              os.path.join(self.tmp, "listen.err"))
        deadline = time.time() + 20
        while time.time() < deadline:
            said = self.listener.stderr_tail(50)
            if "Forwarding each event to" in said or "Printing each event" in said:
                say("  listening: " + next(ln for ln in said.splitlines() if ln.startswith("Ready")))
                self.ran += 1
                return
            if not self.listener.alive():
                raise Failure(f"{where}: gable listen exited (status {self.listener.proc.returncode}):\n{said}")
            time.sleep(0.2)
        raise Failure(f"{where}: gable listen did not say it was ready within 20 s:\n{self.listener.stderr_tail()}")

    def stop_listener(self):
        if self.listener:
            self.listener.stop()
            say("  gable listen stopped; it said:\n    " + "\n    ".join(self.listener.stderr_tail(10).splitlines())
                + "\n  and printed:\n    " + "\n    ".join(self.listener.lines[-10:]))
            self.listener = None

    def await_event(self, where, event_type):
        what = event_type or "a verified event"
        say(f"\n  waiting up to {EVENT_TIMEOUT} s for the receiver to print {what} …")
        deadline = time.time() + EVENT_TIMEOUT
        while time.time() < deadline:
            hits = [ln for ln in self.receiver.lines if ln.strip() and (event_type is None or event_type in ln.split())]
            if hits:
                say(f"  receiver: {hits[0]}")
                return what
            if not self.receiver.alive():
                break
            time.sleep(0.3)
        raise Failure(f"{where}: the receiver printed no {what} within {EVENT_TIMEOUT} s.\n"
                      f"  its output: {self.receiver.lines}\n  its log (one line per request):\n{self.receiver.stderr_tail()}")

    def stop_all(self):
        self.stop_listener()
        for child in (self.receiver, self.server):
            if child:
                child.stop()


def run_one(run, where, cmd, receiver_src):
    """Runs one README command as its kind says; True when it started the receiver."""
    argv = words(cmd)
    kind, arg = kind_of(argv) if argv is not None else ("run", None)
    if kind == "skip":
        say(f"\n$ {cmd}    [{where}]\n  not run: {arg}")
        run.skipped += 1
        return False
    cmd = run.substitute(where, cmd)
    if kind == "serve":
        say(f"\n$ {cmd}    [{where}]")
        run.restart(kind_of(words(cmd))[1])
        run.ran += 1
    elif kind == "receiver":
        run.start_receiver(where, cmd, receiver_src)
        return True
    elif kind == "listen":
        run.start_listener(where, cmd)
    else:
        run.run_command(where, cmd)
    return False


def main():
    t0 = time.time()
    bin_path = os.environ.get("GABLE_BIN") or "target/debug/gable"
    bin_path = os.path.abspath(os.path.join(ROOT, bin_path))
    if not os.access(bin_path, os.X_OK):
        say(f"readme: no Gable binary at {bin_path} (build it: cargo build -p gable, or set GABLE_BIN)")
        return 1
    try:
        with open(README, encoding="utf-8") as f:
            blocks, receiver_src = parse_readme(f.read())
    except Failure as e:
        say(f"readme: FAILED: {e}")
        return 1
    total = sum(len(c) for _, c in blocks)
    say(f"readme: {len(blocks)} sh blocks, {total} commands in README.md; Gable: {bin_path}")

    tmp = tempfile.mkdtemp(prefix="gable-readme-")
    run = None
    events = []
    # A stop from outside (CI's timeout, Ctrl-C) still stops the server and receiver.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        run = Run(bin_path, tmp)
        say(f"readme: data dir {run.data}; production 127.0.0.1:{run.live_port}, sandbox 127.0.0.1:{run.sandbox_port}, "
            f"receiver 127.0.0.1:{run.receiver_port}")
        run.start_server([])
        for b, (line, commands) in enumerate(blocks, 1):
            say(f"\n==== block {b} (README.md line {line}): {len(commands)} command(s)")
            receiver_here = False
            for n, (cline, cmd) in enumerate(commands, 1):
                where = f"block {b} command {n} (README.md line {cline})"
                try:
                    receiver_here |= run_one(run, where, cmd, receiver_src)
                except Failure as e:
                    raise Failure(str(e) if str(e).startswith(where) else f"{where}: {e}") from None
            if receiver_here:
                last_line, last = commands[-1]
                m = re.search(r"\b([a-z_]+\.[a-z_]+)\b", split_comment(last)[1])
                events.append(run.await_event(f"block {b} (README.md line {last_line})", m.group(1) if m else None))
            run.stop_listener()
        secs = time.time() - t0
        say(f"\nreadme: PASSED: {run.ran} commands run ({run.skipped} not run: make run / make test), "
            f"all exited 0, all {run.answers} HTTP answers 2xx"
            + (f"; the README's receiver verified {', '.join(events)}" if events else "")
            + f"; {secs:.0f} s")
        return 0
    except Failure as e:
        say(f"\nreadme: FAILED: {e}")
        if run and run.server:
            say("---- server log (last lines)\n" + run.server.stderr_tail(20))
        return 1
    except KeyboardInterrupt:
        say("\nreadme: interrupted")
        return 130
    finally:
        if run:
            run.stop_all()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
