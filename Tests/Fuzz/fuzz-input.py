#!/usr/bin/env python3
"""Input fuzzer (issues 42, 50 and 69): mutates valid scenarios, sweeps and their designs,
--set values, traces, result folders given to `bgsim report` (their files, their manifest's
counts and horizon), the folder names and options `--emit-slurm` writes into scripts, damaged
folders given to the Python reader (hostile manifest entries and counts, links out, pipes),
and `make install-files` prefixes; runs each, and checks that it never crashes, hangs, eats
memory, reads or writes where it should not, or runs anything it was not meant to.

    python3 Tests/Fuzz/fuzz-input.py BGSIM [--cases N] [--seed S] [--jobs J]

`make fuzz-input` runs 10,000 cases on a release build; `make test` a smoke run of 200 on the
debug build. Each case runs in a fresh folder; bgsim must exit 0 or 2 (never a signal, never
1), within TIMEOUT seconds and MAX_RSS_MB of memory; on exit 2 it prints exactly one line,
starting 'error: ', and writes nothing; on exit 0 it writes only into the folder --out (or
--emit-slurm) names. Scripts --emit-slurm wrote are then submitted with a stub sbatch that
reads their #SBATCH lines as sbatch does, and the array job is run with its program replaced
by printf: every directive must be whole, the shard's --out must be the folder, and nothing
in a name may run. Failing cases are kept under fuzz-failures/ (input files and the command)
and the script exits 1.
"""
import argparse
import concurrent.futures
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIMEOUT = 30.0
MAX_RSS_MB = 1024

HOSTILE = [
    "-1", "0", "-0", "1e309", "-1e309", "1e-320", ".nan", ".inf", "-.inf", "nan", "inf", "NaN",
    "99999999999999999999", "18446744073709551616", "9223372036854775807", "0x10", "1_000_000",
    "''", '""', "~", "null", "[]", "{}", "[1, 2]", "{a: 1}", "yes", "no", "on", "off",
    "1us", "0s", "-5m", "999999999d", "1e400s", "100000000000h", "25:00", "12:60", "-1:00",
    "../../etc", "/", "..", "a/b", "'a\\nb'", "'\u202e'", "x" * 300, "é" * 200, "🙂",
    "*undefined", "&a x", "!!binary aGVsbG8=", "|\n  text", "1e20", "1e-12", "3.4e38",
    "{lognormal: {median: 1, sigma: 50}}", "{uniform: [5, 1]}", "{exponential: -1}",
    "{lognormal: {median: 1e300, sigma: 3}}", "{uniform: [0, 1e300]}",
]

SET_PATHS = [
    "duration", "seed", "replications", "name", "phone.battery.capacity_wh", "phone.battery.initial_charge_pct",
    "phone.battery.model", "phone.battery.kibam_k_per_s", "phone.power.screen_w", "people.sessions_per_day",
    "people.hourly_weights", "people.session_body_mean", "people.interruptions_per_hour", "charging",
    "charging.top_ups_per_day", "network", "network.dead_spots_per_hour", "settings.low_power_mode",
    "system.refresh_grant", "system.suspension_delay", "system.processing_budget", "apps[0].usage_weight",
    "apps[0].launch_down_kb", "apps[0].tasks[0].interval", "apps[0].tasks[0].cpu", "apps[0].tasks[0].down_kb",
    "apps[0].background_modes", "policies", "policies[0].threshold", "load", "load.steps[0].c_rate",
]

BOMB = """bomb:
  a: &a [x, x, x, x, x, x, x, x, x]
  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
  d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
  e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
  f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
  g: [*f, *f, *f, *f, *f, *f, *f, *f, *f]
"""


def read(path):
    with open(os.path.join(ROOT, path), "rb") as f:
        return f.read()


def scenario_base():
    text = read("models/scenarios/default.yaml").decode()
    lines = [l for l in text.split("\n") if not l.startswith("models:")]
    return ("\n".join(lines) + f"\nmodels: {ROOT}/models\n").encode()


def mutate_text(rng, data):
    """One to three random mutations of a text file's bytes."""
    for _ in range(rng.randint(1, 3)):
        lines = data.split(b"\n")
        op = rng.randrange(11)
        i = rng.randrange(len(lines))
        if op == 0:  # a value replaced by a hostile one
            line = lines[i]
            if b":" in line:
                head = line.split(b":", 1)[0]
                lines[i] = head + b": " + rng.choice(HOSTILE).encode()
        elif op == 1:
            del lines[i]
        elif op == 2:
            lines.insert(i, lines[i])
        elif op == 3:  # random bytes
            pos = rng.randrange(len(data) + 1)
            data = data[:pos] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))) + data[pos:]
            continue
        elif op == 4:
            data = data[: rng.randrange(len(data) + 1)]
            continue
        elif op == 5:
            lines[i] = b" " * rng.randint(1, 9) + lines[i] if rng.random() < 0.5 else lines[i].lstrip()
        elif op == 6:
            lines.insert(i, BOMB.encode())
        elif op == 7 and data:
            pos = rng.randrange(len(data))
            data = data[:pos] + bytes([data[pos] ^ (1 << rng.randrange(8))]) + data[pos + 1:]
            continue
        elif op == 8:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == 9:
            lines.insert(i, (rng.choice(SET_PATHS).split(".")[0].split("[")[0] + ": " + rng.choice(HOSTILE)).encode())
        else:  # line endings
            return data.replace(b"\n", rng.choice([b"\r\n", b"\r", b"\n\n"]))
        data = b"\n".join(lines)
    return data


# Pieces of a folder name or an option value that a shell or sbatch would read as something
# other than text; a line break or another control character must be refused (exit 2).
NAME_PIECES = [
    "a", "out", " ", "  ", "'", '"', "$(touch PWNED)", "`touch PWNED`", ";touch PWNED", "&", "|", "<", ">", "*", "?",
    "~", "#", "%a", "%j", "%%", "\\", "!", "$HOME", "${x}", "é", "🙂", "\u202e", "=", ",", "--", "\n", "\t", "\r",
]

# `sbatch` for the scripts' cases: Tests/Slurm/stub-sbatch.py, which the Swift test uses too.
STUB_SBATCH = os.path.join(ROOT, "Tests", "Slurm", "stub-sbatch.py")

# The Python reader's cases run under the environment `make python` makes (pandas and the
# reader); without it they are left out and the summary says so.
READER_PYTHON = os.path.join(ROOT, ".build", "python", "bin", "python")

# A reader case: load the folder and read every view; the only failure allowed is the
# reader's own error. Every file opened must be the folder's.
READER_SCRIPT = r"""
import builtins, io, os, sys
import bgsim  # and pandas and matplotlib, whose own files are read as they load
folder = os.path.realpath(sys.argv[1])
real_open = builtins.open
def guarded(file, *a, **k):
    if isinstance(file, (str, bytes, os.PathLike)):
        path = os.path.realpath(os.fsdecode(file))
        if not path.startswith(folder + os.sep) and "site-packages" not in path and not path.startswith(sys.prefix) and not path.startswith(sys.base_prefix):
            print("READ OUTSIDE " + path, file=sys.stderr)
            os._exit(9)
    return real_open(file, *a, **k)
builtins.open = io.open = guarded
try:
    s = bgsim.load(sys.argv[1])
    for name in s.files:
        s.frame(name)
    s.interval("background_energy_j")
    s.paired("background_energy_j")
    s.per_app()
except bgsim.ResultsError as e:
    print("error: " + str(e).split("\n")[0], file=sys.stderr)
    sys.exit(2)
"""

# Values a manifest's counts and a scenario's duration may be damaged to.
HOSTILE_COUNTS = ["0", "-1", "1e9", "100000000", "9223372036854775807", "\"many\"", "null", "[]", "{}", "2.5", "true"]
HOSTILE_NAMES = ["../outside/secret.csv", "/etc/passwd", "/proc/self/pagemap", "sub/runs.csv", "runs.csv/..", "", ".", "..", "notes.csv"]

# PREFIX values for `make install-files`: words, quotes, substitutions, control characters.
HOSTILE_PREFIXES = [
    "a b", "it's", 'say "hi"', "$HOME", "$(touch PWNED)", "`touch PWNED`", "$$(touch PWNED)", "a;touch PWNED", "a|touch PWNED",
    "a&&touch PWNED", "a\ttab", "a\nline", "-rf", "--", "*", "~", "a/../b", "${PATH}", "%", "é", "a\\b", "",
]


def hostile_name(rng):
    return "".join(rng.choice(NAME_PIECES) for _ in range(rng.randint(1, 6))).replace("/", "_")


def design_case(rng):
    """A sweep whose design is drawn: any kind, hostile point counts and steps, from small
    enough to read in a moment to far past the caps (refused before a point is made). Returns
    the file and the points it would have if valid (None: unknown or refused anyway), so that
    the case runs only designs small enough for the time limit: at the cap, reading 100,000
    points takes about 40 s, and running them far longer; that cost is the limit's, measured
    in docs/usage.md."""
    kind = rng.choice(["grid", "zip", "random", "lhs", "sobol"])
    lines = ["scenario: s.yaml", "replications: " + rng.choice(["1", "2", "1000", "1000000", "-1"]),
             "policies: [eager]", "set: {duration: 1h}", f"design: {kind}"]
    if kind in ("random", "lhs", "sobol") or rng.random() < 0.2:
        lines.append("points: " + rng.choice(["1", "3", "50", "0", "-5", "100001", "1000000", "1e9", "x"]))
    if rng.random() < 0.3:
        lines.append("design_seed: " + rng.choice(["1", "-1", "18446744073709551616", "x"]))
    points = next((int(l.split(": ")[1]) for l in lines if l.startswith("points: ") and l.split(": ")[1].isdigit()), None)
    lines.append("axes:")
    paths = ["people.sessions_per_day", "duration", "phone.battery.capacity_wh", "people.session_body_mean", "seed2"]
    counts = []
    for k in range(rng.choice([1, 1, 2, 3, 41])):
        path = paths[k % len(paths)] if k < len(paths) else f"'apps[{k}].usage_weight'"
        r = rng.random()
        if r < 0.3:
            n = rng.choice([1, 2, 3, 0])
            lines.append(f"  - {{path: {path}, values: [{', '.join(rng.choice(HOSTILE + ['10', '20', '30']) for _ in range(n))}]}}")
            counts.append(n)
        else:
            steps = rng.choice(["2", "3", "10", "40", "100000", "100001", "0", "-1", "1e9"])
            ends = rng.choice([("10", "100"), ("1m", "2h"), ("100", "10"), ("0", "1"), ("1e300", "1e308"), ("x", "y")])
            log = ", log: true" if rng.random() < 0.2 else ""
            lines.append(f"  - {{path: {path}, from: {ends[0]}, to: {ends[1]}, steps: {steps}{log}}}")
            counts.append(int(steps) if steps.isdigit() else None)
    if kind == "grid":
        total = 1
        for c in counts:
            total = None if c is None or total is None else total * c
    elif kind == "zip":
        total = min(counts) if counts and None not in counts else None
    else:
        total = points
    return ("\n".join(lines) + "\n").encode(), total


def make_case(rng, n, template):
    """The files and arguments of case `n`, the folder it may write into, and a check of what
    it wrote (None when the generic checks are all)."""
    kinds, weights = ["scenario", "set", "sweep", "design", "trace", "report", "slurm", "forecast", "install"], [30, 15, 10, 10, 10, 13, 12, 10, 3]
    if os.path.exists(READER_PYTHON):
        kinds.append("reader")
        weights.append(8)
    kind = rng.choices(kinds, weights=weights)[0]
    short = ["--replications", "1", "--set", "duration=1d", "--set", "policies=[eager, ios]", "--no-tasks", "--quiet"]
    files = {}
    if kind == "scenario":
        files["s.yaml"] = mutate_text(rng, scenario_base())
        args = ["validate", "s.yaml"] if rng.random() < 0.3 else ["run", "s.yaml", "--out", "out"] + short
    elif kind == "set":
        files["s.yaml"] = scenario_base()
        sets = []
        for _ in range(rng.randint(1, 3)):
            sets += ["--set", rng.choice(SET_PATHS) + "=" + rng.choice(HOSTILE)]
        args = ["run", "s.yaml", "--out", "out"] + short + sets
    elif kind == "sweep":
        files["s.yaml"] = scenario_base()
        sweep = (
            "scenario: s.yaml\nreplications: 1\npolicies: [eager]\nset: {duration: 1d}\ndesign: grid\naxes:\n"
            f"  - path: {rng.choice(SET_PATHS)}\n    values: [{rng.choice(HOSTILE)}, {rng.choice(HOSTILE)}]\n"
        ).encode()
        files["w.yaml"] = mutate_text(rng, sweep) if rng.random() < 0.5 else sweep
        args = ["sweep", "w.yaml", "--out", "out", "--no-tasks", "--quiet"]
    elif kind == "design":
        files["s.yaml"] = scenario_base()
        text, total = design_case(rng)
        if total is not None and 2_000 < total <= 100_000:
            # Within the cap but large: reading and running it costs what the limit allows,
            # which is not this fuzzer's time to spend; pushed past the cap, it is refused at
            # once (an axis of 100,001 steps more, or 100,001 points).
            if b"\npoints: " in text:
                text = b"\n".join(b"points: 100001" if l.startswith(b"points: ") else l for l in text.split(b"\n"))
            else:
                text += b"  - {path: 'apps[0].usage_weight', from: 1, to: 2, steps: 100001}\n"
            total = None
        files["w.yaml"] = text
        # A million replications of a point or two is a valid study of a million runs (under
        # the 2,000,000 cap), whose cost is the limit's, not this fuzzer's time: only read.
        huge = b"replications: 1000000" in text and total is not None and total * 1_000_000 <= 2_000_000
        small = (total is None or total <= 200) and not huge
        args = ["sweep", "w.yaml", "--out", "out", "--no-tasks", "--quiet"] if small and rng.random() < 0.3 else ["validate", "w.yaml"]
    elif kind == "trace":
        which = rng.choice(["people", "charging", "network", "load"])
        source = {"people": "people-example.csv", "charging": "charging-example.csv", "network": "network-example.csv", "load": "load-example.csv"}[which]
        data = read("models/traces/" + source)
        if rng.random() < 0.2:  # a long trace: the example's rows again and again, later each time
            head, *rows = data.decode().rstrip("\n").split("\n")
            body = [r for r in rows if r and not r.startswith("#")]
            data = (head + "\n" + "\n".join(body * rng.randint(2, 2000)) + "\n").encode()
        files["t.csv"] = mutate_text(rng, data)
        text = scenario_base().decode()
        if which == "load":
            text += "\nload: {trace: t.csv}\n"
        else:
            key = {"people": "people: median", "charging": "charging: nightly", "network": "network: home-office"}[which]
            line = next((l for l in text.split("\n") if l.startswith(which + ":")), None)
            text = text.replace(line, f"{which}: {{profile: {key.split(': ')[1]}, trace: t.csv}}") if line else text
        files["s.yaml"] = text.encode()
        args = ["validate", "s.yaml"] if rng.random() < 0.5 else ["run", "s.yaml", "--out", "out"] + short
    elif kind == "forecast":
        # A developer's app profile, damaged, placed on the fleet (a few people, a short week).
        files["app.yaml"] = mutate_text(rng, read("Examples/forecast/news-app.yaml"))
        args = ["forecast", "app.yaml", "--people", str(rng.randint(1, 4)), "--sweep-people", str(rng.randint(0, 1)),
                "--set", "duration=1d", "--out", "out", "--quiet", "--jobs", "1"]
        # The ranges over the assumptions: a small design now and then (60 points), else none.
        args += ["--range-people", "1", "--range-trajectories", "2", "--range-samples", "4"] if rng.random() < 0.2 else ["--no-ranges"]
        if rng.random() < 0.3:
            args += ["--set", rng.choice(SET_PATHS) + "=" + rng.choice(HOSTILE)]
    elif kind == "install":
        # `make install-files` into a hostile PREFIX under a DESTDIR in the case's folder:
        # nothing may run, and nothing may be written outside that folder.
        prefix = rng.choice(HOSTILE_PREFIXES) if rng.random() < 0.7 else "/" + hostile_name(rng)
        files["dest/.keep"] = b""
        args = ["__make__", "install-files", "PREFIX=" + prefix, "DESTDIR={work}/dest/", "INSTALL_BIN={bgsim}"]
        return kind, files, args, "dest", None
    elif kind == "reader":
        # The Python reader given a damaged folder: a file changed, a manifest entry or count
        # made hostile, a file swapped for a link out or a pipe.
        for name, data in template.items():
            files["out/" + name] = data
        files["outside/secret.csv"] = b"a,b\n1,2\n"
        manifest = json.loads(template["manifest.json"])
        what = rng.choice(["entry", "count", "file", "link", "fifo"])
        if what == "entry":
            manifest["files"].append({"name": rng.choice(HOSTILE_NAMES), "bytes": 8, "sha256": "0" * 64})
        elif what == "count":
            key = rng.choice(["replications", "points", "policies", "files", "parameters", "baseline"])
            manifest[key] = json.loads(rng.choice(HOSTILE_COUNTS))
        elif what == "file":
            victim = rng.choice([n for n in template if n.endswith(".csv")])
            files["out/" + victim] = mutate_text(rng, template[victim])
        if what in ("entry", "count"):
            files["out/manifest.json"] = json.dumps(manifest).encode()
        args = ["__reader__", "out", what]
        return kind, files, args, "out", None
    elif kind == "report":
        # A finished study's folder, one of its files damaged (or none: it must report), or
        # its manifest's counts or scenario's horizon made hostile.
        for name, data in template.items():
            files["out/" + name] = data
        victim = rng.choice(list(template) + [None, "counts"])
        if victim == "counts":
            text = template["manifest.json"].decode()
            key = rng.choice(["replications", "points"])
            text = text.replace(f'"{key}": ', f'"{key}": {rng.choice(HOSTILE_COUNTS)}, "was_{key}": ', 1)
            if rng.random() < 0.5:
                text = text.replace('"duration":"2h"', '"duration":"' + rng.choice(["36500d", "999999999d", "1us", "0s"]) + '"')
            files["out/manifest.json"] = text.encode()
        elif victim and rng.random() < 0.15:
            del files["out/" + victim]
        elif victim:
            files["out/" + victim] = mutate_text(rng, template[victim])
        args = ["report", "out", "--quiet"] + (["--format", "md"] if rng.random() < 0.6 else []) + (["--no-verify"] if rng.random() < 0.4 else [])
        return kind, files, args, "out", check_reports
    else:
        files["s.yaml"] = scenario_base()
        folder = hostile_name(rng)
        option = "--comment=" + hostile_name(rng) if rng.random() < 0.5 else rng.choice(["--partition=" + hostile_name(rng), "-p", "--time=1:00"])
        args = ["run", "s.yaml", "--emit-slurm", folder, "--shards", str(rng.randint(1, 3)), "--replications", "2",
                "--set", "duration=1h", "--no-tasks", f"--slurm-option={option}"]
        return kind, files, args, folder, lambda work: check_scripts(work, folder, option)
    return kind, files, args, "out", None


def check_reports(work):
    """The study's hostile value (a script element and a command substitution) is in the
    reports as text: no raw element in either, and the reproduce line is quoted."""
    html = open(os.path.join(work, "out", "report.html"), encoding="utf-8").read()
    if "<script>x" in html:
        return "raw <script> from the study in report.html"
    md_path = os.path.join(work, "out", "report.md")
    if os.path.exists(md_path):
        md = open(md_path, encoding="utf-8").read()
        prose = md.split("```sh\n")[0] + (md.split("```sh\n")[1].split("\n```", 1)[-1] if "```sh\n" in md else "")
        if "<script>x" in prose:
            return "raw <script> from the study in report.md"
        if "```sh\n" in md and "'network.description=<script>x</script> $(touch PWNED)'" not in md:
            return "report.md's reproduce line does not quote the --set value"
    return None


def check_scripts(work, folder, option):
    """Submits what --emit-slurm wrote with the stub sbatch, then runs the array job's first
    task with its program replaced by printf: a problem, or None."""
    import json
    where = os.path.join(work, folder)
    if not os.path.isfile(os.path.join(where, "submit.sh")):
        return "exit 0 but no submit.sh"
    bin_dir = os.path.join(work, ".bin")
    os.makedirs(bin_dir, exist_ok=True)
    os.symlink(STUB_SBATCH, os.path.join(bin_dir, "sbatch"))
    log = os.path.join(work, ".sbatch.log")
    env = dict(os.environ, PATH=bin_dir + ":" + os.environ.get("PATH", ""), STUB_LOG=log)
    r = subprocess.run(["bash", os.path.join(where, "submit.sh")], cwd=work, env=env, capture_output=True, timeout=30)
    if r.returncode != 0:
        return f"submit.sh failed: {r.stderr.decode('utf-8', 'replace')[:200]}"
    calls = [json.loads(line) for line in open(log, encoding="utf-8")]
    logs = os.path.realpath(where).replace("%", "%%") + "/logs/"
    array = calls[0]["options"] if calls else []
    if len(calls) != 2 or f"--output={logs}shard-%a.out" not in array or option not in array \
            or not any(o.startswith("--array=1-") for o in array) or f"--output={logs}merge.out" not in calls[1]["options"]:
        return f"#SBATCH lines not read whole: {calls}"
    script = open(os.path.join(where, "run.sbatch"), encoding="utf-8").read()
    exec_line = next((l for l in script.split("\n") if l.startswith("exec ")), "")
    words = subprocess.run(["bash", "-c", "eval \"set -- ${1#exec }\"; printf '%s\\0' \"$@\"", "_", exec_line],
                           cwd=work, env=dict(os.environ, SLURM_ARRAY_TASK_ID="1"), capture_output=True, timeout=30)
    argv = words.stdout.decode("utf-8", "replace").split("\0")[:-1]
    out = argv[argv.index("--out") + 1] if "--out" in argv else None
    if out != os.path.realpath(where) + "/shard-1" and out != os.path.abspath(where) + "/shard-1":
        return f"the array job's --out is {out!r}, not the folder's shard-1"
    return None


def listing(folder):
    out = set()
    for base, dirs, names in os.walk(folder):
        for name in dirs + names:
            out.add(os.path.relpath(os.path.join(base, name), folder))
    return out


def run_case(bgsim, n, seed, template):
    rng = random.Random(seed * 1_000_003 + n)
    kind, files, args, allowed, check = make_case(rng, n, template)
    work = tempfile.mkdtemp(prefix="bgsim-fuzz-")
    try:
        for name, data in files.items():
            os.makedirs(os.path.dirname(os.path.join(work, name)), exist_ok=True)
            with open(os.path.join(work, name), "wb") as f:
                f.write(data)
        before = listing(work)
        errpath = os.path.join(tempfile.gettempdir(), f"bgsim-fuzz-{os.getpid()}-{n}.err")
        started = time.monotonic()
        if args[0] == "__make__":
            command = ["make", "-s", "-C", ROOT] + [a.replace("{work}", work).replace("{bgsim}", bgsim) for a in args[1:]]
        elif args[0] == "__reader__":
            out = os.path.join(work, "out")
            if args[2] == "link":
                os.remove(os.path.join(out, "runs.csv"))
                os.symlink(os.path.join(work, "outside", "secret.csv"), os.path.join(out, "runs.csv"))
            elif args[2] == "fifo":
                os.remove(os.path.join(out, "runs.csv"))
                os.mkfifo(os.path.join(out, "runs.csv"))
            command = [READER_PYTHON, "-c", READER_SCRIPT, out]
        else:
            command = [bgsim] + args
        with open(errpath, "wb") as ef:
            proc = subprocess.Popen(command, cwd=work, stdout=subprocess.DEVNULL, stderr=ef)
        timer = threading.Timer(TIMEOUT, proc.kill)
        timer.start()
        # wait4 rather than communicate: it gives the child's peak memory (an upper bound: the
        # high-water mark carries over exec from the fork of this small Python process).
        _, status, usage = os.wait4(proc.pid, 0)
        timer.cancel()
        seconds = time.monotonic() - started
        code = os.waitstatus_to_exitcode(status)
        proc.returncode = code
        peak_mb = usage.ru_maxrss / 1024
        with open(errpath, "rb") as ef:
            err = ef.read()
        os.remove(errpath)
        problem = f"hung: killed after {TIMEOUT:.0f} s" if seconds >= TIMEOUT else None
        if problem is None and peak_mb > MAX_RSS_MB:
            problem = f"peak memory {peak_mb:.0f} MB"
        stderr = err.decode("utf-8", "replace")
        new = listing(work) - before
        if problem is None:
            if code < 0:
                problem = f"killed by signal {-code}"
            elif code not in (0, 2):
                problem = f"exit {code}"
            elif code == 2 and args[0] == "__make__":
                if "error: " not in stderr:
                    problem = "exit 2 without an 'error: ' line"
                elif new - {"dest"}:
                    problem = f"exit 2 but wrote {sorted(new)[:5]}"
            elif code == 2 and args[0] == "__reader__":
                if not stderr.startswith("error: "):
                    problem = "the reader failed without its own error: " + stderr[-300:]
            elif code == 2:
                lines = stderr.split("\n")
                if len(lines) != 2 or lines[1] != "" or not lines[0].startswith("error: "):
                    problem = "exit 2 without exactly one 'error: ' line"
                elif any(not p.startswith("out") for p in new) or any(p.endswith("manifest.json") or p.endswith(".unit.txt") for p in new):
                    problem = f"exit 2 but wrote {sorted(new)[:5]}"
            elif any(not (p == allowed or p.startswith(allowed + "/")) for p in new):
                problem = f"wrote outside --out: {sorted(p for p in new if not p.startswith(allowed))[:5]}"
            elif check:
                problem = check(work)
        if problem is None:
            ran = [p for p in listing(work) if os.path.basename(p) == "PWNED"] + [p for p in os.listdir(ROOT) if p == "PWNED"]
            if ran:
                problem = f"a command in a name or value ran: {ran[:3]}"
        return n, kind, args, files, code, seconds, peak_mb, stderr, problem
    finally:
        shutil.rmtree(work, ignore_errors=True)


def study_template(bgsim):
    """The files of a small finished study, for the report cases: a value in it that a shell
    or a browser would run, to check the reports quote it."""
    work = tempfile.mkdtemp(prefix="bgsim-fuzz-template-")
    try:
        with open(os.path.join(work, "s.yaml"), "wb") as f:
            f.write(scenario_base())
        r = subprocess.run([bgsim, "run", "s.yaml", "--out", "out", "--quiet", "--replications", "2", "--set", "duration=2h",
                            "--set", "policies=[eager, ios]", "--set", "network.description=<script>x</script> $(touch PWNED)"],
                           cwd=work, capture_output=True)
        if r.returncode != 0:
            sys.exit(f"fuzz-input: the report cases' study failed: {r.stderr.decode()}")
        out = os.path.join(work, "out")
        return {name: open(os.path.join(out, name), "rb").read() for name in sorted(os.listdir(out))}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bgsim")
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    bgsim = os.path.abspath(a.bgsim)
    template = study_template(bgsim)
    failures, codes, slowest, heaviest, started = [], {}, 0.0, 0.0, time.monotonic()
    kinds = {}
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        for n, kind, args, files, code, seconds, peak_mb, stderr, problem in pool.map(lambda n: run_case(bgsim, n, a.seed, template), range(a.cases)):
            kinds[kind] = kinds.get(kind, 0) + 1
            codes[code] = codes.get(code, 0) + 1
            slowest = max(slowest, seconds)
            heaviest = max(heaviest, peak_mb)
            if problem:
                failures.append(n)
                keep = os.path.join(ROOT, "fuzz-failures", f"seed{a.seed}-case{n}")
                os.makedirs(keep, exist_ok=True)
                for name, data in files.items():
                    os.makedirs(os.path.dirname(os.path.join(keep, name)), exist_ok=True)
                    with open(os.path.join(keep, name), "wb") as f:
                        f.write(data)
                with open(os.path.join(keep, "command"), "w") as f:
                    f.write("bgsim " + " ".join(repr(x) for x in args) + f"\n# {problem}\n# stderr:\n{stderr}")
                print(f"fuzz-input: case {n} ({kind}): {problem}: bgsim {' '.join(args)}; kept in {keep}", file=sys.stderr)
    total = time.monotonic() - started
    print(
        f"fuzz-input: {a.cases} cases ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}) from seed {a.seed} in {total:.0f} s: exit codes {dict(sorted((str(k), v) for k, v in codes.items()))}, "
        f"slowest {slowest:.1f} s, peak memory {heaviest:.0f} MB, {len(failures)} failing")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
