#!/usr/bin/env python3
"""Input fuzzer (issue 42): mutates valid scenarios, sweeps, --set values and traces, runs
bgsim on each, and checks that it never crashes, hangs, eats memory or writes where it
should not.

    python3 Tests/Fuzz/fuzz-input.py BGSIM [--cases N] [--seed S] [--jobs J]

`make fuzz-input` runs 10,000 cases on a release build; `make test` a smoke run of 200 on the
debug build. Each case runs in a fresh folder; bgsim must exit 0 or 2 (never a signal, never
1), within TIMEOUT seconds and MAX_RSS_MB of memory; on exit 2 it prints exactly one line,
starting 'error: ', and writes nothing; on exit 0 it writes only into the folder --out names.
Failing cases are kept under fuzz-failures/ (input files and the command) and the script
exits 1.
"""
import argparse
import concurrent.futures
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


def make_case(rng, n):
    """The files and arguments of case `n`."""
    kind = rng.choices(["scenario", "set", "sweep", "trace"], weights=[45, 25, 15, 15])[0]
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
    else:
        which = rng.choice(["people", "charging", "network"])
        source = {"people": "people-example.csv", "charging": "charging-example.csv", "network": "network-example.csv"}[which]
        files["t.csv"] = mutate_text(rng, read("models/traces/" + source))
        text = scenario_base().decode()
        key = {"people": "people: median", "charging": "charging: nightly", "network": "network: home-office"}[which]
        line = next((l for l in text.split("\n") if l.startswith(which + ":")), None)
        text = text.replace(line, f"{which}: {{profile: {key.split(': ')[1]}, trace: t.csv}}") if line else text
        files["s.yaml"] = text.encode()
        args = ["run", "s.yaml", "--out", "out"] + short
    return kind, files, args


def listing(folder):
    out = set()
    for base, dirs, names in os.walk(folder):
        for name in dirs + names:
            out.add(os.path.relpath(os.path.join(base, name), folder))
    return out


def run_case(bgsim, n, seed):
    rng = random.Random(seed * 1_000_003 + n)
    kind, files, args = make_case(rng, n)
    work = tempfile.mkdtemp(prefix="bgsim-fuzz-")
    try:
        for name, data in files.items():
            with open(os.path.join(work, name), "wb") as f:
                f.write(data)
        before = listing(work)
        errpath = os.path.join(tempfile.gettempdir(), f"bgsim-fuzz-{os.getpid()}-{n}.err")
        started = time.monotonic()
        with open(errpath, "wb") as ef:
            proc = subprocess.Popen([bgsim] + args, cwd=work, stdout=subprocess.DEVNULL, stderr=ef)
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
            elif code == 2:
                lines = stderr.split("\n")
                if len(lines) != 2 or lines[1] != "" or not lines[0].startswith("error: "):
                    problem = "exit 2 without exactly one 'error: ' line"
                elif any(not p.startswith("out") for p in new) or any(p.endswith("manifest.json") or p.endswith(".unit.txt") for p in new):
                    problem = f"exit 2 but wrote {sorted(new)[:5]}"
            elif any(not (p == "out" or p.startswith("out/")) for p in new):
                problem = f"wrote outside --out: {sorted(p for p in new if not p.startswith('out'))[:5]}"
        return n, kind, args, files, code, seconds, peak_mb, stderr, problem
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
    failures, codes, slowest, heaviest, started = [], {}, 0.0, 0.0, time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        for n, kind, args, files, code, seconds, peak_mb, stderr, problem in pool.map(lambda n: run_case(bgsim, n, a.seed), range(a.cases)):
            codes[code] = codes.get(code, 0) + 1
            slowest = max(slowest, seconds)
            heaviest = max(heaviest, peak_mb)
            if problem:
                failures.append(n)
                keep = os.path.join(ROOT, "fuzz-failures", f"seed{a.seed}-case{n}")
                os.makedirs(keep, exist_ok=True)
                for name, data in files.items():
                    with open(os.path.join(keep, name), "wb") as f:
                        f.write(data)
                with open(os.path.join(keep, "command"), "w") as f:
                    f.write("bgsim " + " ".join(repr(x) for x in args) + f"\n# {problem}\n# stderr:\n{stderr}")
                print(f"fuzz-input: case {n} ({kind}): {problem}: bgsim {' '.join(args)}; kept in {keep}", file=sys.stderr)
    total = time.monotonic() - started
    print(
        f"fuzz-input: {a.cases} cases from seed {a.seed} in {total:.0f} s: exit codes {dict(sorted((str(k), v) for k, v in codes.items()))}, "
        f"slowest {slowest:.1f} s, peak memory {heaviest:.0f} MB, {len(failures)} failing")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
