#!/usr/bin/env python3
"""Writes docs/ios-behaviour.md: each behaviour public sources describe of iOS's background
scheduling, beside what bgsim's `ios` policy does on the default scenario, measured now.

    python3 docs/ios-behaviour.py .build/release/bgsim [REPLICATIONS]     (make ios-behaviour)

Runs models/scenarios/default.yaml under eager and ios (with events, tasks and a 10-minute
timeline), and again with Low Power Mode on, into a temporary folder, and reads the files.
"""
import bisect
import collections
import csv
import os
import subprocess
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
bgsim = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, ".build/release/bgsim")
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 10
scenario = "models/scenarios/default.yaml"
DAY = 86400.0


def run(out, *extra):
    cmd = [bgsim, "run", scenario, "--replications", str(reps), "--out", out, "--quiet", "--events",
           "--timeline", "10m", "--set", "policies=[eager, ios]", *extra]
    subprocess.run(cmd, cwd=root, check=True)
    return " ".join(["bgsim"] + cmd[1:3] + ["--replications", str(reps), "--events", "--timeline", "10m", "--set", "'policies=[eager, ios]'", *extra])


def rows(path):
    with open(path, newline="") as f:
        yield from csv.DictReader(f)


class Study:
    def __init__(self, folder):
        self.tasks = list(rows(os.path.join(folder, "tasks.csv")))
        self.events = list(rows(os.path.join(folder, "events.csv")))
        self.timeline = collections.defaultdict(list)  # (policy, rep) -> [(t, row)]
        for r in rows(os.path.join(folder, "timeline.csv")):
            self.timeline[(r["policy"], r["replication"])].append((float(r["time_s"]), r))
        self.times = {k: [t for t, _ in v] for k, v in self.timeline.items()}
        # Exact charging, network and Low Power Mode changes, from the event log; the
        # timeline's 10-minute samples give only the charge level.
        self.changes = collections.defaultdict(list)
        for r in self.events:
            e, t = r["event"], float(r["time_s"])
            if e in ("plug_in", "unplug"):
                self.changes[(r["policy"], r["replication"])].append((t, "charging", "1" if e == "plug_in" else "0"))
            elif e == "network":
                self.changes[(r["policy"], r["replication"])].append((t, "network", r["detail"].split()[0].split("=")[1]))
            elif e in ("low_power_on", "low_power_off"):
                self.changes[(r["policy"], r["replication"])].append((t, "low_power_mode", "1" if e == "low_power_on" else "0"))
        self.change_times = {k: [c[0] for c in v] for k, v in self.changes.items()}

    def state(self, policy, rep, t):
        """The phone's state at `t`: charging, network and Low Power Mode as of the last change
        at or before `t`, and the charge of the last timeline sample."""
        key = (policy, rep)
        i = max(0, bisect.bisect_right(self.times[key], t) - 1)
        state = {"charge_pct": self.timeline[key][i][1]["charge_pct"], "charging": "0", "network": "none", "low_power_mode": "0"}
        for _, name, value in self.changes[key][: bisect.bisect_right(self.change_times.get(key, []), t)]:
            state[name] = value
        return state

    def time_share(self, policy, test):
        """The share of the simulated time in which `test(state)` holds, from the changes."""
        inside = total = 0.0
        for (p, rep), changes in self.changes.items():
            if p != policy:
                continue
            state = {"charging": "0", "network": "none", "low_power_mode": "0"}
            last = 0.0
            for t, name, value in changes + [(7 * DAY, None, None)]:
                t = min(t, 7 * DAY)
                if test(state):
                    inside += t - last
                total += t - last
                last = t
                if name:
                    state[name] = value
        return inside / total

    def started(self, policy, kinds):
        return [r for r in self.tasks if r["policy"] == policy and r["kind"] in kinds and r["started_s"]]


def pct(x):
    return f"{100 * x:.1f}%"


def main():
    with tempfile.TemporaryDirectory() as tmp:
        base_cmd = run(os.path.join(tmp, "base"))
        lpm_cmd = run(os.path.join(tmp, "lpm"), "--set", "settings.low_power_mode=on")
        heavy_cmd = run(os.path.join(tmp, "heavy"), "--set", "people=heavy")
        s = Study(os.path.join(tmp, "base"))
        lpm = Study(os.path.join(tmp, "lpm"))
        heavy = Study(os.path.join(tmp, "heavy"))
    table = []

    # 1. Charging on Wi-Fi, idle.
    def charging_wifi(study, policy, kinds):
        starts = study.started(policy, kinds)
        on = sum(1 for r in starts if (lambda st: st["charging"] == "1" and st["network"] == "wifi")(study.state(policy, r["replication"], float(r["started_s"]))))
        time_share = study.time_share(policy, lambda st: st["charging"] == "1" and st["network"] == "wifi")
        return on / max(len(starts), 1), time_share
    ios_share, time_share = charging_wifi(s, "ios", {"refresh", "fetch"})
    eager_share, _ = charging_wifi(s, "eager", {"refresh", "fetch"})
    table.append((
        "Background time comes mostly while charging on Wi-Fi with the phone unused (overnight)",
        "§4 [secondary: practitioners; Apple Developer Forums 119758]",
        f"ios starts {pct(ios_share)} of its refreshes and fetches while charging on Wi-Fi, where the phone spends {pct(time_share)} of the time ({ios_share / time_share:.2f}×; eager {pct(eager_share)})"))

    # 2. More refreshes for apps used more.
    launches = collections.Counter(r["app"] for r in s.events if r["policy"] == "ios" and r["event"] == "launch" and r["app"])
    refreshes = collections.Counter(r["app"] for r in s.started("ios", {"refresh", "fetch"}))
    apps = sorted(refreshes)
    def ranks(values):
        order = sorted(range(len(values)), key=lambda i: values[i])
        out = [0.0] * len(values)
        for rank, i in enumerate(order):
            out[i] = rank
        return out
    a, b = ranks([launches[x] for x in apps]), ranks([refreshes[x] for x in apps])
    n = len(apps)
    rho = 1 - 6 * sum((x - y) ** 2 for x, y in zip(a, b)) / (n * (n * n - 1)) if n > 2 else float("nan")
    per_app = ", ".join(f"{x} {refreshes[x] / reps:.0f}/{launches[x] / reps:.0f}" for x in sorted(apps, key=lambda x: -launches[x]))
    table.append((
        "Apps used more are refreshed more",
        "§4 (WWDC20 10063)",
        f"rank correlation across apps of ios's refreshes and fetches with launches: {rho:.2f} (per week, refreshes/launches: {per_app})"))

    # 3. Shortly before habitual launches.
    def followed(policy):
        launch_times = collections.defaultdict(list)
        for r in s.events:
            if r["policy"] == policy and r["event"] == "launch" and r["app"]:
                launch_times[(r["replication"], r["app"])].append(float(r["time_s"]))
        hits = total = 0
        for r in s.started(policy, {"refresh"}):
            st = s.state(policy, r["replication"], float(r["started_s"]))
            if st["charging"] == "1":
                continue
            t = float(r["started_s"])
            ts = launch_times[(r["replication"], r["app"])]
            i = bisect.bisect_right(ts, t)
            total += 1
            hits += i < len(ts) and ts[i] - t <= 1800
        return hits / max(total, 1), total
    ios_f, ios_n = followed("ios")
    eager_f, eager_n = followed("eager")
    table.append((
        "Refreshes land shortly before the app's predicted use",
        "§4 (WWDC20 10063), §8 (habits)",
        f"of refreshes started on battery, {pct(ios_f)} under ios ({ios_n / reps:.0f} a week) are followed by a launch of the app within 30 min, {pct(eager_f)} under eager ({eager_n / reps:.0f})"))

    # 4. Low battery on battery power: the default scenario's median person rarely gets
    # there, so the heavy user, from the timeline's 10-minute samples (on, not charging).
    def per_hour(study, kinds, low, high):
        hours = sum(1 for v in study.timeline.values() for _, row in v
                    if row["policy"] == "ios" and row["phone_on"] == "1" and row["charging"] == "0"
                    and low <= float(row["charge_pct"]) < high) / 6
        starts = sum(1 for r in study.started("ios", kinds)
                     if (lambda st: st["charging"] == "0" and low <= float(st["charge_pct"]) < high)(
                         study.state("ios", r["replication"], float(r["started_s"]))))
        return starts / hours if hours else float("nan"), hours / reps
    above, above_h = per_hour(heavy, {"refresh", "fetch"}, 20, 101)
    mid, mid_h = per_hour(heavy, {"refresh", "fetch"}, 10, 20)
    under, under_h = per_hour(heavy, {"refresh", "fetch"}, 0, 10)
    proc_low, _ = per_hour(heavy, {"processing"}, 0, 20)
    table.append((
        "Essentially no discretionary work below about 20% charge on battery",
        "§4 [secondary: dasd's battery floors, 10% for utility and 20% for maintenance work]",
        f"with the heavy user (`people=heavy`; the median person is below 20% on battery for too little time to measure), ios started "
        f"{above:.2f} refreshes and fetches an hour on battery above 20% ({above_h:.0f} h a week), {mid:.2f} between 10% and 20% ({mid_h:.1f} h) "
        f"and {under:.2f} below 10% ({under_h:.1f} h); {proc_low:.2f} processing tasks an hour below 20%"))

    # 5. Low Power Mode.
    on_battery = [r for r in lpm.started("ios", {"refresh", "fetch"}) if lpm.state("ios", r["replication"], float(r["started_s"]))["low_power_mode"] == "1"]
    table.append((
        "Low Power Mode stops background app refresh",
        "§5",
        f"with `low_power_mode: on`, ios started {len(on_battery) / reps:.1f} refreshes and fetches a week while it was on (the system's gate refuses them)"))

    # 6. Processing overnight on power.
    proc = s.started("ios", {"processing"})
    on_power = sum(1 for r in proc if s.state("ios", r["replication"], float(r["started_s"]))["charging"] == "1")
    night = sum(1 for r in proc if not (7 * 3600 <= float(r["started_s"]) % DAY < 22 * 3600))
    table.append((
        "Processing runs mostly overnight, on power, with the phone idle",
        "§2 (BGProcessingTaskRequest), §4 [secondary: Apple Developer Forums 119758]",
        f"ios started {pct(on_power / max(len(proc), 1))} of its processing tasks on power and {pct(night / max(len(proc), 1))} between 22:00 and 07:00 ({len(proc) / reps:.0f} a week)"))

    # 7. Within two days.
    # Requests the horizon leaves two days to, or that started.
    def eligible_at(r):
        return max(float(r["submitted_s"]), float(r["earliest_begin_s"] or 0))
    subs = [r for r in s.tasks if r["policy"] == "ios" and r["kind"] == "processing" and r["outcome"] != "replaced"
            and (r["started_s"] or eligible_at(r) <= 5 * DAY)]
    within = sum(1 for r in subs if r["started_s"] and float(r["started_s"]) - eligible_at(r) <= 2 * DAY)
    table.append((
        "A processing request runs within two days when the app was used in the past week",
        "§2 (BGProcessingTaskRequest header)",
        f"{pct(within / max(len(subs), 1))} of ios's processing requests ({len(subs) / reps:.0f} a week, those eligible at least two days before the horizon or started) started within two days of becoming eligible (`processing_due_after`: a request eligible two days, its app used that week, must run once nothing forbids it)"))

    # 8. Swiped-away apps.
    bad = 0
    for policy in ("eager", "ios"):
        last, opened = {}, {}
        for r in s.events:
            if r["policy"] != policy or not r["app"]:
                continue
            key = (r["replication"], r["app"])
            # A swipe as the person goes straight back to the app (its next launch at the same
            # instant) leaves it running.
            if r["event"] == "leave" and "swiped_away=true" in r["detail"]:
                last[key] = opened.get(key) != r["time_s"]
            elif r["event"] == "launch":
                last[key] = False
                opened[key] = r["time_s"]
            elif r["event"] == "started" and last.get(key) and "kind=region" not in r["detail"]:
                bad += 1
    table.append((
        "An app swiped away gets no background launch until the person opens it again (region events excepted)",
        "§1, §2",
        f"{bad} background starts of swiped-away apps under eager and ios"))

    # 9. Grants.
    expired = sorted(float(r["ended_s"]) - float(r["started_s"]) for r in s.tasks
                     if r["policy"] == "ios" and r["kind"] == "refresh" and r["outcome"] in ("expired", "killed") and r["started_s"])
    refreshes = len(s.started("ios", {"refresh"}))
    within5 = sum(1 for x in expired if x <= 5.5)
    median = expired[len(expired) // 2] if expired else float("nan")
    table.append((
        "Grants vary: most expired refreshes expire a few seconds after launch, some within 15-30 s",
        "§2 [secondary: Apple Developer Forums 780956; seed 004]",
        f"{len(expired) / reps:.1f} of ios's {refreshes / reps:.0f} refreshes a week expired or were killed, after a median of {median:.1f} s; "
        f"{pct(within5 / max(len(expired), 1))} within 5 s of launch (plus the grace); grants drawn per refresh (`system.refresh_grant`, "
        "by default a log-normal with median 15 s, an assumption: no distribution is published)"))

    out = ["# iOS behaviour, measured", "",
           "Each behaviour public sources describe of how iOS schedules background work, its source",
           "([sources](sources.md)), and what bgsim's `ios` policy does on the default scenario. Generated",
           "by `make ios-behaviour` (`docs/ios-behaviour.py`), which ran:", "",
           "```", base_cmd, lpm_cmd, heavy_cmd, "```", "",
           "| behaviour | source | bgsim, measured |", "| --- | --- | --- |"]
    for behaviour, source, measured in table:
        out.append(f"| {behaviour} | {source} | {measured} |")
    # Starts by hour.
    out += ["", "Refresh and fetch starts by hour of the day under ios (all replications), on the charger / not:", "",
            "| hour | " + " | ".join(str(h) for h in range(24)) + " |", "| --- |" + " --- |" * 24]
    by_hour = collections.Counter()
    for r in s.started("ios", {"refresh", "fetch"}):
        t = float(r["started_s"])
        by_hour[(int(t % DAY // 3600), s.state("ios", r["replication"], t)["charging"] == "1")] += 1
    out.append("| on / off | " + " | ".join(f"{by_hour[(h, True)]}/{by_hour[(h, False)]}" for h in range(24)) + " |")
    proc_hour = collections.Counter()
    for r in proc:
        t = float(r["started_s"])
        proc_hour[(int(t % DAY // 3600), s.state("ios", r["replication"], t)["charging"] == "1")] += 1
    out += ["", "Processing starts by hour under ios, on the charger / not:", "",
            "| hour | " + " | ".join(str(h) for h in range(24)) + " |", "| --- |" + " --- |" * 24,
            "| on / off | " + " | ".join(f"{proc_hour[(h, True)]}/{proc_hour[(h, False)]}" for h in range(24)) + " |", ""]
    with open(os.path.join(root, "docs", "ios-behaviour.md"), "w") as f:
        f.write("\n".join(out))
    print("wrote docs/ios-behaviour.md")


if __name__ == "__main__":
    main()
