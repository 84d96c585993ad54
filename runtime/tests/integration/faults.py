#!/usr/bin/env python3
"""Runs an mpirun job, optionally hurts one of its ranks, and checks how the
job ends. For the fault tests (faults.test):

  faults.py [--signal KILL|STOP --rank R [--after LINE] [--delay S]]
            --within SECONDS [--expect REGEX]... [--status N]
            -- MPIRUN ARGS...

- Starts the job in its own session, stdout and stderr to one log, core
  dumps allowed up to the hard limit, in a fresh directory (the cwd).
- With --signal: waits until the log has a line starting with LINE
  (default "step 2:", so the ranks are mid-training), waits --delay seconds
  more, finds the process of rank R among the job's processes (its
  OMPI_COMM_WORLD_RANK, PMI_RANK or PMIX_RANK) and sends it the signal.
- The job must end within SECONDS of the signal (of the start without
  one); after twice that it is killed and the check fails (a hang).
- It must exit non-zero (exactly N with --status), the log must match
  every REGEX (Python syntax, searched line by line), and it must leave no
  core dump (no core file in the directory, no "core dumped" in the log)
  and no process of the job behind it (running, sleeping or stopped; any
  found are reported, then continued and killed).

Prints the log, then one line: "ended in T s (bound B s), exit N, ...".
Exits 1 when a check fails."""
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def usage(msg):
    sys.exit(f"faults.py: {msg}\n{__doc__}")


args = sys.argv[1:]
if "--" not in args:
    usage("no command after --")
split = args.index("--")
opts, command = args[:split], args[split + 1:]
sig = rank = status = within = None
after, delay, expects = "step 2:", 0.0, []
while opts:
    flag = opts.pop(0)
    if not opts:
        usage(f"{flag} needs a value")
    value = opts.pop(0)
    if flag == "--signal":
        sig = getattr(signal, "SIG" + value)
    elif flag == "--rank":
        rank = int(value)
    elif flag == "--after":
        after = value
    elif flag == "--delay":
        delay = float(value)
    elif flag == "--within":
        within = float(value)
    elif flag == "--expect":
        expects.append(re.compile(value))
    elif flag == "--status":
        status = int(value)
    else:
        usage(f"unknown option {flag}")
if within is None or (sig is not None and rank is None):
    usage("--within is required, and --rank with --signal")

workdir = tempfile.mkdtemp(prefix="faults.", dir=os.getcwd())
log_path = os.path.join(workdir, "log")


def allow_cores():
    _, hard = resource.getrlimit(resource.RLIMIT_CORE)
    resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))


def read_log():
    with open(log_path, errors="replace") as f:
        return f.read()


def descendants(root):
    """pid -> (state, environ) of every live process below `root`."""
    parent = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                parent[int(entry)] = (int(fields[1]), fields[0])
            except (OSError, IndexError, ValueError):
                pass
    found, frontier = {}, [root]
    while frontier:
        p = frontier.pop()
        for child, (ppid, state) in parent.items():
            if ppid == p and child not in found:
                found[child] = state
                frontier.append(child)
    return found


def rank_of(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = f.read().split(b"\0")
    except OSError:
        return None
    for var in (b"OMPI_COMM_WORLD_RANK=", b"PMI_RANK=", b"PMIX_RANK="):
        for item in env:
            if item.startswith(var):
                return int(item[len(var):])
    return None


def session_processes(sid):
    """Live (not zombie) processes of session `sid`: what the job leaves."""
    left = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, IndexError):
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            left.append((int(entry), fields[0], cmd))
    return left


problems = []
with open(log_path, "wb") as log:
    start = time.monotonic()
    job = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=workdir,
                           start_new_session=True, preexec_fn=allow_cores)
sid = job.pid
t0 = start
if sig is not None:
    victim = None
    while time.monotonic() - start < 120 and job.poll() is None:
        if any(line.startswith(after) for line in read_log().splitlines()):
            break
        time.sleep(0.02)
    time.sleep(delay)
    for pid in descendants(job.pid):
        if rank_of(pid) == rank:
            victim = pid
    if job.poll() is not None:
        problems.append(f"the job ended before the signal (exit {job.returncode})")
    elif victim is None:
        problems.append(f"no process of rank {rank} found")
    else:
        os.kill(victim, sig)
        t0 = time.monotonic()
try:
    job.wait(timeout=max(2 * within, within + 20))
    code = job.returncode
except subprocess.TimeoutExpired:
    code = None
    problems.append(f"still running {max(2 * within, within + 20):.0f} s after "
                    f"{'the signal' if sig is not None else 'the start'}: killed (a hang)")
    for pid in [job.pid] + list(descendants(job.pid)):
        for s in (signal.SIGCONT, signal.SIGKILL):
            try:
                os.kill(pid, s)
            except OSError:
                pass
    job.wait()
elapsed = time.monotonic() - t0

# What the job leaves: give the launcher a moment to reap its children.
left = []
for _ in range(40):
    left = session_processes(sid)
    if not left:
        break
    time.sleep(0.05)
for pid, state, cmd in left:
    problems.append(f"left behind: pid {pid} (state {state}): {cmd}")
    for s in (signal.SIGCONT, signal.SIGKILL):
        try:
            os.kill(pid, s)
        except OSError:
            pass

text = read_log()
sys.stdout.write(text)
if code is not None:
    if code == 0:
        problems.append("exit status 0")
    elif status is not None and code != status:
        problems.append(f"exit status {code}, expected {status}")
    if elapsed > within:
        problems.append(f"took {elapsed:.1f} s, more than {within:g} s")
for regex in expects:
    if not any(regex.search(line) for line in text.splitlines()):
        problems.append(f"no line matches {regex.pattern!r}")
cores = [f for f in os.listdir(workdir) if f.startswith("core")]
if cores or "core dumped" in text:
    problems.append(f"a core dump: {cores or 'core dumped'}")
print(f"faults.py: ended in {elapsed:.1f} s (bound {within:g} s), exit {code}, "
      f"{'no core dump, no process left' if not problems else 'FAILED'}")
for p in problems:
    print(f"faults.py: FAILED: {p}")
if problems:
    print(f"faults.py: the job's directory: {workdir}")
    sys.exit(1)
shutil.rmtree(workdir, ignore_errors=True)
