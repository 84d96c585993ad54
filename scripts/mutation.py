#!/usr/bin/env python3
"""Mutation testing of pipesched: does the test suite notice plausible bugs?

Each mutant of the catalogue (scripts/mutants.json) replaces one snippet of
one source file, a snippet that must occur exactly once there. For each
mutant the harness patches a private copy of the repository, rebuilds it
incrementally (ninja), runs the mutant's suites with lit and records whether
a test failed (killed), none did (survived), the build failed (did not
compile) or the time ran out (timed out); then it restores the file.

The copy (--work, default /tmp/pipesched-mutation/tree) holds the tracked
and untracked-but-not-ignored files of this checkout and its build/ tree.
A CMake build names its source directory by absolute path, so every build
and test runs in a private mount namespace where the copy is bind-mounted
over that directory: the checkout and its build are never written.

  scripts/mutation.py --check        every snippet occurs once (no build)
  scripts/mutation.py --list         the catalogue
  scripts/mutation.py --quick        a few mutants, their filter's tests only
  scripts/mutation.py --only ID ...  the named mutants
  scripts/mutation.py                the whole catalogue (hours: docs/testing.md)

Results: results.md and results.json in --out, rewritten after each mutant.
Standard library only; Linux, as root (unshare -m, mount --bind).
"""

import argparse
import datetime
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CATALOGUE = ROOT / "scripts" / "mutants.json"
WORK = Path("/tmp/pipesched-mutation")
LIT = "/usr/lib/llvm-22/bin/lit"
SUITES = {"compiler": "build/test", "runtime": "build/runtime/tests"}
AREAS = ["lib/Scheduling", "dialects/Sched", "lib/Transforms", "lib/Target",
         "runtime/src"]
# This test runs --check, which fails on a mutated tree by design: a mutant
# would be "killed" by the catalogue's own check.
SELF_TEST = r"Tools/mutation-catalogue\.test"
# The GoogleTest binaries as lit names them (one test per shard): lit's
# --filter cannot reach the tests inside, GTEST_FILTER (passed through) can.
UNIT = r"unit/\S*Tests(/\d+/\d+)?$"
FIELDS = {"id", "file", "find", "replace", "description", "kind", "suites"}
KINDS = {"off-by-one", "swapped arguments", "dropped check", "wrong constant",
         "reversed comparison", "wrong operator"}
FAILED = re.compile(r"^(FAIL|XPASS|UNRESOLVED|TIMEOUT): (.+?) \(\d+ of \d+\)$")
SUMMARY = re.compile(r"^(Failed|Unexpectedly Passed|Unresolved|Timed Out) Tests \(\d+\):$")


# --- the catalogue -----------------------------------------------------------

def text_of(value):
    """A snippet is a string or, for several lines, a list of lines."""
    return "\n".join(value) if isinstance(value, list) else value


def load_catalogue(path):
    with open(path, encoding="utf-8") as f:
        mutants = json.load(f)["mutants"]
    for m in mutants:
        m["find"] = text_of(m["find"])
        m["replace"] = text_of(m["replace"])
    return mutants


def area_of(path):
    return next((a for a in AREAS if path.startswith(a + "/")), "other")


def entry_problems(m):
    """What is wrong with one entry's fields (not its snippet)."""
    problems = []
    missing = FIELDS - set(m)
    if missing:
        problems.append("lacks " + ", ".join(sorted(missing)))
    if m.get("kind") not in KINDS:
        problems.append("kind %r is none of %s" % (m.get("kind"), sorted(KINDS)))
    suites = m.get("suites") or []
    if not suites or any(s not in SUITES for s in suites):
        problems.append("suites %r must be a non-empty subset of %s"
                        % (suites, sorted(SUITES)))
    if m.get("find") == m.get("replace"):
        problems.append("its replacement equals its snippet")
    if m.get("quick") and not (m.get("filter") or m.get("gtest")):
        problems.append("a quick mutant needs a filter or gtest (--quick runs only those)")
    if "-" in m.get("gtest", ""):
        problems.append("gtest takes positive patterns only (the harness negates them)")
    return problems


def read_source(path):
    # newline="": a file is restored byte for byte, line endings included.
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def write_source(path, text):
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def snippet_problem(root, m):
    """Why the mutant cannot be applied to the tree at `root`, or None."""
    path = root / m["file"]
    if not path.is_file():
        return "%s does not exist" % m["file"]
    count = read_source(path).count(m["find"])
    if count != 1:
        return "its snippet occurs %d times in %s (must be once)" % (count, m["file"])
    return None


def catalogue_problems(root, mutants):
    problems, seen = [], set()
    for m in mutants:
        name = m.get("id", "?")
        if name in seen:
            problems.append("%s: id used twice" % name)
        seen.add(name)
        found = entry_problems(m) or [snippet_problem(root, m)]
        problems += ["%s: %s" % (name, p) for p in found if p]
    return problems


def check(mutants):
    problems = catalogue_problems(ROOT, mutants)
    for p in problems:
        print("mutation catalogue: " + p)
    if problems:
        return 1
    print("mutation catalogue: %d mutants, every snippet found exactly once"
          % len(mutants))
    return 0


def list_catalogue(mutants):
    for m in mutants:
        hint = "".join(" [%s: %s]" % (k, m[k]) for k in ("filter", "gtest") if m.get(k))
        quick = " (quick)" if m.get("quick") else ""
        print("%-28s %-22s %s %s%s%s\n    %s" % (
            m["id"], m["kind"], m["file"], "+".join(m["suites"]), quick, hint,
            m["description"]))
    counts = {}
    for m in mutants:
        counts[area_of(m["file"])] = counts.get(area_of(m["file"]), 0) + 1
    print("%d mutants: %s" % (len(mutants), ", ".join(
        "%s %d" % (a, counts[a]) for a in AREAS + ["other"] if a in counts)))
    return 0


# --- the private tree --------------------------------------------------------

def source_dir_of_build(root):
    """The directory the build names as its source (where the copy mounts)."""
    path = root / "build" / "CMakeCache.txt"
    if not path.is_file():
        sys.exit("mutation: %s has no build/ to copy: build it first "
                 "(./scripts/setup.sh on a fresh clone, or the README's test "
                 "command)" % root)
    cache = path.read_text(encoding="utf-8")
    found = re.search(r"^CMAKE_HOME_DIRECTORY:INTERNAL=(.*)$", cache, re.M)
    if not found:
        sys.exit("mutation: build/CMakeCache.txt names no source directory")
    return Path(found.group(1))


def checkout_files(root):
    """Tracked files and untracked ones git does not ignore (what was built)."""
    out = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
         "--exclude-standard"], check=True, capture_output=True).stdout
    names = sorted(set(n for n in out.decode().split("\0") if n))
    return [n for n in names if (root / n).is_file()]


def create_tree(root, tree):
    """A first copy keeps every mtime, so that the copied build is up to date."""
    tree.mkdir(parents=True)
    for name in checkout_files(root):
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, tree / name, follow_symlinks=False)
    subprocess.run(["cp", "-a", str(root / "build"), str(tree / "build")],
                   check=True)


def refresh_tree(root, tree):
    """Brings changed files over with a new mtime: ninja must see them as
    newer than anything built from the copy's older (or mutated) version."""
    changed = 0
    for name in checkout_files(root):
        src, dst = root / name, tree / name
        if dst.is_file() and src.read_bytes() == dst.read_bytes():
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        shutil.copymode(src, dst)
        changed += 1
    return changed


def prepare_tree(root, tree):
    if not (tree / "build" / "build.ninja").is_file():
        if tree.exists():
            shutil.rmtree(tree)
        print("mutation: copying %s and its build to %s" % (root, tree), flush=True)
        create_tree(root, tree)
        return
    changed = refresh_tree(root, tree)
    print("mutation: %s refreshed, %d files changed" % (tree, changed), flush=True)


# --- running in the namespace ------------------------------------------------

def namespace_of(pid):
    try:
        return os.readlink("/proc/%d/ns/mnt" % pid)
    except OSError:
        return None


def kill_namespace(proc):
    """Ends the command and everything it started: its process group and any
    process left in its private mount namespace (only ours live there)."""
    ns = namespace_of(proc.pid)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if ns and ns != namespace_of(os.getpid()):
        for entry in os.listdir("/proc"):
            if entry.isdigit() and namespace_of(int(entry)) == ns:
                try:
                    os.kill(int(entry), signal.SIGKILL)
                except ProcessLookupError:
                    pass
    proc.wait()


def run_in_tree(ctx, command, seconds, log, gtest_filter=None):
    """Runs `command` in the copy mounted over the build's source directory.
    Returns the exit status, or None when it ran out of time."""
    env = {k: v for k, v in os.environ.items() if k != "GTEST_FILTER"}
    if gtest_filter:
        env["GTEST_FILTER"] = gtest_filter
    mount = 'mount --bind "$1" "$2" && cd "$2" && shift 2 && exec "$@"'
    argv = ["unshare", "-m", "--propagation", "private", "sh", "-c", mount, "sh",
            str(ctx.tree), str(ctx.mount)] + command
    log.write("$ %s%s\n" % ("GTEST_FILTER=%s " % gtest_filter if gtest_filter
                            else "", " ".join(command)))
    log.flush()
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        return proc.wait(timeout=max(seconds, 1))
    except subprocess.TimeoutExpired:
        kill_namespace(proc)
        return None
    except BaseException:
        kill_namespace(proc)
        raise


def build(ctx, seconds, log):
    return run_in_tree(ctx, ["ninja", "-C", "build", "-j%d" % ctx.jobs], seconds, log)


class Phase:
    """One lit run: a --filter and --filter-out, and a GTEST_FILTER for the
    unit tests. The hint's phase and the rest's together run every test."""
    def __init__(self, only, skip, gtest):
        self.only, self.skip, self.gtest = only, skip, gtest


def alternatives(*regexes):
    return "|".join("(?:%s)" % r for r in regexes if r)


def hint_phase(m):
    """The catalogue's likely killers: its filter's tests, and its gtest
    patterns' unit tests (no unit test at all without a pattern)."""
    lit_filter, gtest = m.get("filter"), m.get("gtest")
    if not (lit_filter or gtest):
        return None
    return Phase(alternatives(lit_filter, UNIT if gtest else None),
                 alternatives(SELF_TEST, None if gtest else UNIT), gtest)


def rest_phase(m):
    """Every other test: the unit binaries always run, minus the gtest
    patterns already run (GTEST_FILTER's negative form)."""
    lit_filter, gtest = m.get("filter"), m.get("gtest")
    not_unit = "^(?!.*%s).*(?:%s)" % (UNIT, lit_filter) if lit_filter else None
    return Phase(None, alternatives(SELF_TEST, not_unit),
                 "-" + gtest if gtest else None)


def lit_command(ctx, suites, phase):
    command = [ctx.lit, "-sv", "-j%d" % ctx.jobs, "--max-failures=1",
               "--allow-empty-runs"]
    if phase.only:
        command += ["--filter", phase.only]
    command += ["--filter-out", phase.skip]
    return command + [SUITES[s] for s in suites]


def log_end(log):
    # The children wrote through the same descriptor: ask it, not the
    # Python object's cached position.
    log.flush()
    return os.lseek(log.fileno(), 0, os.SEEK_CUR)


def failed_tests(log_path, since):
    """The tests lit reported failing after byte offset `since` of the log:
    its closing summary names a unit test, where its progress line names
    only the shard."""
    with open(log_path, "rb") as f:
        f.seek(since)
        lines = f.read().decode("utf-8", "replace").splitlines()
    summary, listing = [], False
    for line in lines:
        if SUMMARY.match(line):
            listing = True
        elif listing and line.startswith("  "):
            summary.append(line.strip())
        else:
            listing = False
    return summary or [m.group(2) for m in map(FAILED.match, lines) if m]


def run_lit(ctx, suites, phase, seconds, log):
    """Returns (verdict, killing test): killed, passed, timed out or error."""
    start = log_end(log)
    status = run_in_tree(ctx, lit_command(ctx, suites, phase), seconds, log,
                         phase.gtest)
    if status is None:
        return "timed out", None
    failed = failed_tests(log.name, start)
    if failed:
        return "killed", short_test_name(failed[0])
    return ("passed", None) if status == 0 else ("error", None)


def short_test_name(name):
    # GoogleTest names carry the binary's relative path: keep suite/test.
    return re.sub(r"unit/(\.\./)*build/\S*?Tests/", "unit/", name)


# --- one mutant --------------------------------------------------------------

class Context:
    def __init__(self, args, tree, mount):
        self.tree, self.mount = tree, mount
        self.jobs, self.lit, self.timeout = args.jobs, args.lit, args.timeout
        self.quick = args.quick


def apply_mutant(ctx, m):
    """Writes the mutated file; returns the original text to restore."""
    path = ctx.tree / m["file"]
    original = read_source(path)
    if original.count(m["find"]) != 1:
        raise ValueError("its snippet occurs %d times in the copy of %s"
                         % (original.count(m["find"]), m["file"]))
    write_source(path, original.replace(m["find"], m["replace"]))
    return original


def restore(ctx, m, original):
    # A new mtime: the next build recompiles the file (ccache makes it cheap).
    write_source(ctx.tree / m["file"], original)


def test_mutant(ctx, m, deadline, log):
    """The hint's tests first (likelier killers), then the rest of the
    suites; --quick stops after the hint's tests."""
    phases = [p for p in [hint_phase(m)] if p]
    if not ctx.quick:
        phases.append(rest_phase(m))
    verdict, killer = "passed", None
    for phase in phases:
        verdict, killer = run_lit(ctx, m["suites"], phase,
                                  deadline - time.monotonic(), log)
        if verdict != "passed":
            break
    if verdict == "passed":
        verdict = "survived the filter" if ctx.quick else "survived"
    return verdict, killer


def run_mutant(ctx, m, log):
    started = time.monotonic()
    deadline = started + ctx.timeout
    record = {"id": m["id"], "file": m["file"], "kind": m["kind"],
              "suites": m["suites"], "description": m["description"],
              "killed_by": None}
    original = apply_mutant(ctx, m)
    try:
        status = build(ctx, deadline - time.monotonic(), log)
        record["build_seconds"] = round(time.monotonic() - started)
        if status is None:
            record["verdict"] = "timed out"
        elif status != 0:
            record["verdict"] = "did not compile"
        else:
            record["verdict"], record["killed_by"] = test_mutant(ctx, m, deadline, log)
    finally:
        restore(ctx, m, original)
    record["seconds"] = round(time.monotonic() - started)
    return record


# --- reports -----------------------------------------------------------------

def git_state(root):
    def git(*args):
        return subprocess.run(["git", "-C", str(root)] + list(args),
                              capture_output=True, text=True).stdout.strip()
    return {"commit": git("rev-parse", "HEAD"),
            "dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}


def summary(records):
    counts = {}
    for r in records:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    return counts


def markdown(meta, records):
    lines = ["# Mutation testing: %s" % meta["mode"], "",
             "%s, commit %s%s, %d of %d mutants run." % (
                 meta["date"], meta["commit"][:12],
                 " (with uncommitted changes)" if meta["dirty"] else "",
                 len(records), meta["selected"]),
             "", "Verdicts: " + ", ".join(
                 "%s %d" % kv for kv in sorted(summary(records).items())), "",
             "| mutant | file | description | verdict | killed by | seconds |",
             "|---|---|---|---|---|---|"]
    for r in records:
        lines.append("| %s | %s | %s | %s | %s | %d |" % (
            r["id"], r["file"], r["description"].replace("|", "\\|"),
            r["verdict"], r["killed_by"] or "", r["seconds"]))
    return "\n".join(lines) + "\n"


def write_reports(out, meta, records):
    report = dict(meta, summary=summary(records), mutants=records)
    (out / "results.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "results.md").write_text(markdown(meta, records))


# --- the run -----------------------------------------------------------------

def select(args, mutants):
    if args.only:
        known = {m["id"]: m for m in mutants}
        unknown = [i for i in args.only if i not in known]
        if unknown:
            sys.exit("mutation: no mutant named " + ", ".join(unknown))
        return [known[i] for i in args.only]
    if args.quick:
        return [m for m in mutants if m.get("quick")]
    return mutants


def lock_work(work):
    """One run at a time per copy: they would patch the same files."""
    work.mkdir(parents=True, exist_ok=True)
    lock = open(work / "lock", "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        sys.exit("mutation: another run holds %s" % (work / "lock"))
    return lock


def sync_build(ctx, out):
    """The unmutated copy must build (this also rebuilds what the previous
    run's last mutant left compiled)."""
    with open(out / "logs" / "unmutated-build.log", "w") as log:
        status = build(ctx, ctx.timeout, log)
    if status != 0:
        sys.exit("mutation: the unmutated copy does not build: see %s" % log.name)


def baseline(ctx, suites, out):
    """The suites pass on the unmutated copy, or every verdict would lie."""
    with open(out / "logs" / "baseline.log", "w") as log:
        verdict, test = run_lit(ctx, suites, Phase(None, SELF_TEST, None),
                                ctx.timeout, log)
    if verdict != "passed":
        sys.exit("mutation: the unmutated copy fails (%s %s): see %s"
                 % (verdict, test or "", log.name))
    print("mutation: baseline passes", flush=True)


def run(args, mutants):
    chosen = select(args, mutants)
    problems = catalogue_problems(ROOT, chosen)
    if problems:
        sys.exit("mutation: fix the catalogue first (--check):\n  " + "\n  ".join(problems))
    lock = lock_work(args.work)
    tree, mount = args.work / "tree", source_dir_of_build(ROOT)
    prepare_tree(ROOT, tree)
    out = args.out or args.work / ("results-" + time.strftime("%Y%m%d-%H%M%S"))
    (out / "logs").mkdir(parents=True, exist_ok=True)
    ctx = Context(args, tree, mount)
    sync_build(ctx, out)
    if args.baseline:
        baseline(ctx, sorted({s for m in chosen for s in m["suites"]}), out)
    mode = "quick" if args.quick else "only" if args.only else "full"
    meta = dict(git_state(ROOT), mode=mode, selected=len(chosen), date=
                datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    records = []
    for k, m in enumerate(chosen, 1):
        print("mutation: [%d/%d] %s ..." % (k, len(chosen), m["id"]), end=" ", flush=True)
        with open(out / "logs" / (m["id"] + ".log"), "w") as log:
            record = run_mutant(ctx, m, log)
        records.append(record)
        print("%s%s (%d s)" % (record["verdict"], " by " + record["killed_by"]
                               if record["killed_by"] else "", record["seconds"]), flush=True)
        write_reports(out, meta, records)
    print("mutation: %s" % (out / "results.md"))
    lock.close()
    # --quick's mutants are known killers: one that is not means a broken harness.
    return 1 if args.quick and any(r["verdict"] != "killed" for r in records) else 0


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--catalogue", type=Path, default=CATALOGUE)
    p.add_argument("--check", action="store_true",
                   help="only verify that every snippet occurs exactly once")
    p.add_argument("--list", action="store_true", help="print the catalogue")
    p.add_argument("--quick", action="store_true",
                   help="the mutants marked quick, their filter's tests only")
    p.add_argument("--only", nargs="+", metavar="ID", help="these mutants")
    p.add_argument("--baseline", action="store_true",
                   help="first run the selected suites on the unmutated copy")
    p.add_argument("--work", type=Path, default=WORK,
                   help="where the private copy lives (default %(default)s)")
    p.add_argument("--out", type=Path, help="the results' directory "
                   "(default: WORK/results-<time>)")
    p.add_argument("--jobs", type=int, default=2, help="ninja's and lit's -j")
    p.add_argument("--timeout", type=int, default=2400,
                   help="seconds per mutant, build and tests (default %(default)s)")
    p.add_argument("--lit", default=LIT)
    return p.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    mutants = load_catalogue(args.catalogue)
    if args.check:
        return check(mutants)
    if args.list:
        return list_catalogue(mutants)
    return run(args, mutants)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
