#!/usr/bin/env python3
"""Writes docs/validation.md: every observation of how iPhones schedule background work
(docs/sources.md §4, "What iPhones are seen to do"), every rule public sources give, and every
AOSP behaviour `android` follows (§9): the band each implies, what bgsim measures now, and pass
or fail, all held at once.

    python3 docs/validation.py BGSIM [--check]       (make validation)

Runs the validation scenarios (models/scenarios/validation/), the default scenario and the
fleet into a temporary folder and reads their files. With --check it writes nothing and exits
1 if a row fails (make test runs it).
"""
import bisect
import collections
import csv
import os
import re
import statistics
import subprocess
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
args = [a for a in sys.argv[1:] if not a.startswith("--")]
bgsim = args[0] if args else os.path.join(root, ".build/release/bgsim")
check = "--check" in sys.argv
DAY = 86400.0


def rows(path):
    with open(path, newline="") as f:
        yield from csv.DictReader(f)


def quoted(a):
    return a if re.fullmatch(r"[A-Za-z0-9_./=:-]+", a) else "'" + a.replace("'", "'\\''") + "'"


class Run:
    """One bgsim run into `tmp/name`; `command` is how the page shows it."""

    def __init__(self, tmp, name, scenario, *extra, tasks=True, events=False, timeline=False):
        out = os.path.join(tmp, name)
        cmd = [bgsim, "run", scenario, "--out", out, "--quiet", *extra]
        if not tasks:
            cmd.append("--no-tasks")
        if events:
            cmd.append("--events")
        if timeline:
            cmd += ["--timeline", "10m"]
        subprocess.run(cmd, cwd=root, check=True)
        self.command = " ".join(["bgsim", "run", scenario] + [quoted(a) for a in cmd[6:]])
        self.runs = list(rows(os.path.join(out, "runs.csv")))
        self.tasks = list(rows(os.path.join(out, "tasks.csv"))) if tasks else []
        self.events = list(rows(os.path.join(out, "events.csv"))) if events else []
        self.timeline = collections.defaultdict(list)
        if timeline:
            for r in rows(os.path.join(out, "timeline.csv")):
                self.timeline[(r["policy"], r["replication"])].append((float(r["time_s"]), r))
        self.reps = len({r["replication"] for r in self.runs})
        # Exact charging, network, Low Power Mode and use changes, from the event log.
        self.changes = collections.defaultdict(list)
        for r in self.events:
            e, t, key = r["event"], float(r["time_s"]), (r["policy"], r["replication"])
            if e in ("plug_in", "unplug"):
                self.changes[key].append((t, "charging", "1" if e == "plug_in" else "0"))
            elif e == "network":
                self.changes[key].append((t, "network", r["detail"].split()[0].split("=")[1]))
            elif e in ("low_power_on", "low_power_off"):
                self.changes[key].append((t, "low_power_mode", "1" if e == "low_power_on" else "0"))
            elif e in ("launch", "call_started"):
                self.changes[key].append((t, "use", "+"))
            elif e in ("leave", "call_ended"):
                self.changes[key].append((t, "use", "-"))
        self.change_times = {k: [c[0] for c in v] for k, v in self.changes.items()}

    def state(self, policy, rep, t):
        """The phone at `t`: charging, network, Low Power Mode, in use and since when not, and
        the charge of the last timeline sample."""
        key = (policy, rep)
        st = {"charging": "0", "network": "none", "low_power_mode": "0", "use": 0, "idle_since": 0.0}
        for time, name, value in self.changes[key][: bisect.bisect_right(self.change_times.get(key, []), t)]:
            if name == "use":
                st["use"] += 1 if value == "+" else -1
                if st["use"] <= 0:
                    st["use"], st["idle_since"] = 0, time
            else:
                st[name] = value
        samples = self.timeline.get(key)
        if samples:
            i = max(0, bisect.bisect_right([s[0] for s in samples], t) - 1)
            st["charge_pct"] = float(samples[i][1]["charge_pct"])
        return st

    def started(self, policy, kinds, app=None):
        return [r for r in self.tasks if r["policy"] == policy and r["kind"] in kinds and r["started_s"] and (app is None or r["app"] == app)]

    def per_day(self, policy, app, kinds=("refresh",), start=7, end=14):
        n = sum(1 for r in self.started(policy, kinds, app) if start * DAY <= float(r["started_s"]) < end * DAY)
        return n / self.reps / (end - start)


def pct(x):
    return f"{100 * x:.1f}%"


def hms(seconds):
    d, rest = divmod(round(seconds), 86400)
    return (f"day {d} " if d else "") + f"{rest // 3600}:{rest % 3600 // 60:02d}:{rest % 60:02d}"


def main():
    rows_out = []  # (group, behaviour, source, band, measured, passed)

    def row(group, behaviour, source, band, measured, passed):
        rows_out.append((group, behaviour, source, band, measured, bool(passed)))

    with tempfile.TemporaryDirectory() as tmp:
        feeds = Run(tmp, "feeds", "models/scenarios/validation/feeds.yaml")
        poor = Run(tmp, "poor", "models/scenarios/validation/feeds.yaml", "--set", "network=poor-coverage", "--set", "policies=[ios]")
        due = Run(tmp, "due", "models/scenarios/validation/feeds.yaml", "--set",
                  "policies=[ios, {name: ios, label: ios-no-due, processing_due_after: none}]")
        handler = Run(tmp, "handler", "models/scenarios/validation/feeds.yaml", "--set", "apps[daily].tasks[0].cpu=40s",
                      "--set", "apps[daily].tasks[0].expiration_handler=false", "--set", "policies=[ios]", "--replications", "5")
        base = Run(tmp, "default", "models/scenarios/default.yaml", "--set", "policies=[eager, ios]", events=True, timeline=True)
        byday = Run(tmp, "byday", "models/scenarios/default.yaml", "--set",
                    "policies=[{name: ios, label: ios-by-day, idle_window_after: none}]", events=True)
        lpm = Run(tmp, "lpm", "models/scenarios/default.yaml", "--set", "policies=[ios]", "--set", "settings.low_power_mode=on",
                  events=True)
        heavy = Run(tmp, "heavy", "models/scenarios/default.yaml", "--set", "policies=[ios]", "--set", "people=heavy",
                    events=True, timeline=True)
        doze = Run(tmp, "doze", "models/scenarios/validation/doze.yaml")
        quota = Run(tmp, "quota", "models/scenarios/validation/quota.yaml")
        fleet = Run(tmp, "fleet", "models/scenarios/fleet.yaml", "--set", "apps=[feed]", "--set", "policies=[ios, android]",
                    tasks=False)
    runs = [feeds, poor, due, handler, base, byday, lpm, heavy, doze, quota, fleet]
    ios = "iOS: what iPhones are seen to do (§4)"
    rules = "iOS: rules public sources give (§1, §2, §4, §5)"
    aosp = "Android: AOSP's code (§9)"

    # Refresh frequency follows use (feeds, second week).
    daily, weekly, never = (feeds.per_day("ios", a) for a in ("daily", "weekly", "never"))
    row(ios, "An app opened daily, asking every 15 min, is refreshed about 1-4 times a day", "§4 (RNBF 14, 466; OpenCircuit 177; expo 31059)",
        "0.5-10 a day", f"{daily:.2f} a day (eager {feeds.per_day('eager', 'daily'):.0f})", 0.5 <= daily <= 10)
    row(ios, "An app not opened daily gets one a day at most, then none", "§4 (RNBF 164; flutter_background_fetch 32, 151, 202)",
        "at most 1 a day", f"{weekly:.2f} a day, opened about weekly (eager {feeds.per_day('eager', 'weekly'):.0f})", weekly <= 1)
    row(ios, "An app never opened gets none", "§4 (the maintainers above)", "0", f"{never:.2f} a day (eager {feeds.per_day('eager', 'never'):.0f})",
        never == 0)
    row(ios, "Daily use gets more than weekly", "§4", "daily at least 3 times weekly", f"{daily / weekly:.1f} times" if weekly else "weekly none",
        weekly == 0 or daily >= 3 * weekly)
    firsts = []
    for rep in sorted({r["replication"] for r in feeds.runs}):
        s = [float(r["started_s"]) for r in feeds.started("ios", ("refresh",), "new") if r["replication"] == rep]
        firsts.append(min(s) if s else 14 * DAY)
    median_first = statistics.median(firsts)
    row(ios, "A new install waits more than 24 h for its first refresh", "§4 (flutter_workmanager 196)",
        "median at least 24 h after install", f"median {median_first / 3600:.1f} h (first to last: {min(firsts) / 3600:.1f}-{max(firsts) / 3600:.1f} h)",
        median_first >= DAY)
    gaps = []
    for rep in sorted({r["replication"] for r in feeds.runs}):
        s = sorted(float(r["started_s"]) for r in feeds.started("ios", ("refresh",), "daily") if r["replication"] == rep)
        gaps += [b - a for a, b in zip(s, s[1:])]
    long_gaps = sum(1 for g in gaps if g > DAY) / max(len(gaps), 1)
    row(ios, "A daily task is not daily: ran at 12:44 one day, not by 19:22 the next", "§4 (cwa-app-ios 916)",
        "some gaps between the daily app's refreshes over a day", f"{pct(long_gaps)} of {len(gaps)} gaps over a day", long_gaps > 0)

    # Low battery (heavy user: the median person is rarely below 20% on battery).
    def per_hour(run, kinds, low, high):
        hours = sum(1 for v in run.timeline.values() for _, r in v
                    if r["phone_on"] == "1" and r["charging"] == "0" and low <= float(r["charge_pct"]) < high) / 6
        n = sum(1 for r in run.started("ios", kinds)
                if (lambda st: st["charging"] == "0" and low <= st["charge_pct"] < high)(run.state("ios", r["replication"], float(r["started_s"]))))
        return n / hours if hours else float("nan"), hours / run.reps
    above, above_h = per_hour(heavy, {"refresh", "fetch"}, 20, 101)
    below, below_h = per_hour(heavy, {"refresh", "fetch"}, 0, 20)
    row(ios, "Below about 20% on battery background work pauses", "§4 (WWDC20 10063)",
        "rate below 20% at most a tenth of the rate above", f"{below:.2f} refreshes an hour below 20% ({below_h:.1f} h a week), {above:.2f} above ({above_h:.0f} h); heavy user",
        below_h > 0 and below <= 0.1 * above)
    lpm_on = [r for r in lpm.started("ios", {"refresh", "fetch"}) if lpm.state("ios", r["replication"], float(r["started_s"]))["low_power_mode"] == "1"]
    row(ios, "Low Power Mode stops refresh", "§4, §5", "none while on", f"{len(lpm_on) / lpm.reps:.1f} a week while on", not lpm_on)

    expired = sorted(float(r["ended_s"]) - float(r["started_s"]) for r in base.tasks
                     if r["policy"] == "ios" and r["kind"] == "refresh" and r["outcome"] in ("expired", "killed") and r["started_s"])
    median_expiry = statistics.median(expired) if expired else float("nan")
    row(ios, "Most refreshes that expire do so 2-5 s after launch", "§4 (Apple Developer Forums 780956)",
        "median at most 7 s (5 s and the 2 s grace)", f"median {median_expiry:.1f} s ({len(expired) / base.reps:.1f} a week expired or killed)",
        median_expiry <= 7)

    proc = base.started("ios", {"processing"})
    idle5 = sum(1 for r in proc if (lambda st: st["use"] == 0 and float(r["started_s"]) - st["idle_since"] >= 299.999)(base.state("ios", r["replication"], float(r["started_s"]))))
    row(ios, "Processing runs only with the phone unused, about 5 min after locking", "§4 (Apple Developer Forums 119758)",
        "all, 5 min or more after use", f"{pct(idle5 / max(len(proc), 1))} of {len(proc) / base.reps:.0f} a week", proc and idle5 == len(proc))
    on_power = sum(1 for r in proc if base.state("ios", r["replication"], float(r["started_s"]))["charging"] == "1")
    row(ios, "Processing runs on power in practice", "§4 (RNBF 230)", "at least 90% on power", f"{pct(on_power / max(len(proc), 1))}",
        on_power >= 0.9 * len(proc))
    # Requests submitted as the person leaves (earliest begin at submission), not from the handler.
    backup = [float(r["started_s"]) - float(r["submitted_s"]) for r in feeds.started("ios", {"processing"}, "backup")
              if r["earliest_begin_s"] == r["submitted_s"]]
    median_backup = statistics.median(backup) / 3600 if backup else float("nan")
    row(ios, "Processing runs 10-20 h after it was submitted", "§4 (a wallet's merge request 129)",
        "the night after: median 4-24 h", f"median {median_backup:.1f} h from submission (submitted as the person leaves the app)",
        4 <= median_backup <= 24)

    def eligible_at(r):
        return max(float(r["submitted_s"]), float(r["earliest_begin_s"] or 0))
    subs = [r for r in feeds.tasks if r["policy"] == "ios" and r["kind"] == "processing" and r["outcome"] != "replaced"
            and eligible_at(r) <= 12 * DAY]
    within = sum(1 for r in subs if r["started_s"] and float(r["started_s"]) - eligible_at(r) <= 2 * DAY)
    row(rules, "A processing request runs within two days if its app was used that week", "§2 (BGProcessingTaskRequest header)",
        "at least 90%", f"{pct(within / max(len(subs), 1))} of {len(subs) / feeds.reps:.0f} requests (eligible two days before the end)",
        within >= 0.9 * len(subs))
    with_due = due.per_day("ios", "backup-weekly", ("processing",), 0, 14)
    without_due = due.per_day("ios-no-due", "backup-weekly", ("processing",), 0, 14)
    row(rules, "`processing_due_after` has an effect", "§2", "more processing of an app used weekly with it than without",
        f"{with_due * 7:.2f} a week with it, {without_due * 7:.2f} without", with_due > without_due)

    # Where refreshes fall in the day: not settled.
    def charging_wifi_share(run, policy):
        starts = run.started(policy, {"refresh", "fetch"})
        on = sum(1 for r in starts if (lambda st: st["charging"] == "1" and st["network"] == "wifi")(run.state(policy, r["replication"], float(r["started_s"]))))
        return on / max(len(starts), 1)
    def time_share(run, policy):
        inside = total = 0.0
        for (p, rep), changes in run.changes.items():
            if p != policy:
                continue
            st, last = {"charging": "0", "network": "none"}, 0.0
            for t, name, value in [c for c in changes if c[1] in ("charging", "network")] + [(7 * DAY, None, None)]:
                t = min(t, 7 * DAY)
                inside += (t - last) if st["charging"] == "1" and st["network"] == "wifi" else 0
                total += t - last
                last = t
                if name:
                    st[name] = value
        return inside / total
    night, plugged = charging_wifi_share(base, "ios"), time_share(base, "ios")
    by_day = charging_wifi_share(byday, "ios-by-day")
    row(ios, "Overnight or by day: not settled (owntracks 839: by day only; practitioners: mostly overnight on charge); bgsim follows the practitioners",
        "§4", "share on a charger and Wi-Fi above its share of time", f"{pct(night)} of ios's refreshes there, in {pct(plugged)} of the time; {pct(by_day)} with `idle_window_after: none`",
        night > plugged)

    # WWDC's rules, measured on the default scenario.
    def followed(policy):
        launch_times = collections.defaultdict(list)
        for r in base.events:
            if r["policy"] == policy and r["event"] == "launch" and r["app"]:
                launch_times[(r["replication"], r["app"])].append(float(r["time_s"]))
        hits = total = 0
        for r in base.started(policy, {"refresh"}):
            t = float(r["started_s"])
            if base.state(policy, r["replication"], t)["charging"] == "1":
                continue
            ts = launch_times[(r["replication"], r["app"])]
            i = bisect.bisect_right(ts, t)
            total += 1
            hits += i < len(ts) and ts[i] - t <= 1800
        return hits / max(total, 1)
    ios_f, eager_f = followed("ios"), followed("eager")
    row(rules, "Refreshes land shortly before the app's predicted use", "§4 (WWDC20 10063)", "more often followed by a launch within 30 min than eager's",
        f"{pct(ios_f)} of refreshes on battery, eager {pct(eager_f)}", ios_f > eager_f)
    app_launches = collections.Counter(r["app"] for r in base.events if r["policy"] == "ios" and r["event"] == "launch" and r["app"])
    app_refreshes = collections.Counter(r["app"] for r in base.started("ios", {"refresh", "fetch"}))
    names = sorted(app_refreshes)
    def ranks(values):
        order = sorted(range(len(values)), key=lambda i: values[i])
        out = [0.0] * len(values)
        for rank, i in enumerate(order):
            out[i] = rank
        return out
    ra, rb = ranks([app_launches[x] for x in names]), ranks([app_refreshes[x] for x in names])
    rho = 1 - 6 * sum((x - y) ** 2 for x, y in zip(ra, rb)) / (len(names) * (len(names) ** 2 - 1))
    row(rules, "Apps used more are refreshed more", "§4 (WWDC20 10063)", "rank correlation at least 0.5",
        f"{rho:.2f} (a week, refreshes/launches: " + ", ".join(f"{x} {app_refreshes[x] / base.reps:.0f}/{app_launches[x] / base.reps:.0f}" for x in sorted(names, key=lambda x: -app_launches[x])) + ")",
        rho >= 0.5)
    bad = 0
    for policy in ("eager", "ios"):
        last, opened = {}, {}
        for r in base.events:
            if r["policy"] != policy or not r["app"]:
                continue
            key = (r["replication"], r["app"])
            if r["event"] == "leave" and "swiped_away=true" in r["detail"]:
                last[key] = opened.get(key) != r["time_s"]
            elif r["event"] == "launch":
                last[key], opened[key] = False, r["time_s"]
            elif r["event"] == "started" and last.get(key) and "kind=region" not in r["detail"]:
                bad += 1
    row(rules, "An app swiped away gets no background launch until opened again", "§1 (WWDC20 10063)", "none", f"{bad} under eager and ios", bad == 0)
    good, stuck = feeds.per_day("ios", "daily", start=0), feeds.per_day("ios", "stuck", start=0)
    row(rules, "An app that does not call setTaskCompleted is launched less", "§2, §4", "at most two thirds as often as the same app that does (no figure is published)",
        f"{stuck:.2f} a day against {good:.2f}", stuck <= 2 / 3 * good)
    cut = [r for r in handler.started("ios", {"refresh"}, "daily") if float(r["ended_s"]) - float(r["started_s"]) < 39.9]
    right = sum(1 for r in cut if r["outcome"] == "completed" and r["success"] == "false")
    row(rules, "A task with no expiration handler ends completed and unsuccessful", "§2 (Apple, BGTask.expirationHandler)",
        "all that ran out of time", f"{right} of {len(cut)}", cut and right == len(cut))
    purges = [r for r in base.events if r["policy"] == "ios" and r["event"] == "purge"]
    launch_times = collections.defaultdict(list)
    for r in base.events:
        if r["policy"] == "ios" and r["event"] == "launch":
            launch_times[r["replication"]].append(float(r["time_s"]))
    near = 0
    for r in purges:
        ts, t = launch_times[r["replication"]], float(r["time_s"])
        i = bisect.bisect_right(ts, t)
        near += i > 0 and t - ts[i - 1] < 1
    row(rules, "Memory pressure, and so purges, comes from use", "§1 (assumption: as an app opens)", "at least 90% of purges as an app opens",
        f"{pct(near / max(len(purges), 1))} of {len(purges) / base.reps:.0f} a week", near >= 0.9 * len(purges))
    slow = poor.per_day("ios", "daily")
    row(rules, "Network quality lowers the score gradually; an ordinary connection is no blackout", "§4",
        "the daily app on a 5 Mbit/s Wi-Fi (poor-coverage) at least 0.5 a day", f"{slow:.2f} a day", slow >= 0.5)

    # The fleet: who gets no refresh of a 15-minute task.
    people = [{k: v.strip('"') for k, v in r.items()} for r in fleet.runs if r["policy"] == "ios"]
    none = [r for r in people if float(r["runs_refresh"]) == 0]
    traits = collections.Counter((r["settings.background_app_refresh"], r["network"]) for r in none)
    blacked = [r for r in none if r["network"] == "poor-coverage" and r["settings.background_app_refresh"] != "off"]
    row(rules, "No one is blacked out by an ordinary connection (fleet of 1,000, a 15-minute feed app)", "§4",
        "no one with Background App Refresh on and the poor-coverage network without a refresh",
        f"{pct(len(none) / len(people))} of people get none: " + ", ".join(f"{n} with refresh {bar} on {net}" for (bar, net), n in traits.most_common()),
        not blacked)

    # Android.
    def starts(run, policy, app):
        return sorted(float(r["started_s"]) for r in run.started(policy, ("refresh", "processing", "fetch"), app))
    never_a = feeds.per_day("android", "never", start=0)
    row(aosp, "An app installed and never opened runs no job (NEVER)", "§9 (testIsWithinQuotaLocked_NeverApp)", "0",
        f"{never_a:.2f} a day (the weekly app {feeds.per_day('android', 'weekly', start=0):.1f}, the daily {feeds.per_day('android', 'daily', start=0):.1f})", never_a == 0)
    active = [r for r in quota.tasks if r["policy"] == "android" and r["app"] == "active" and r["started_s"]]
    active_time = sum(max(0.0, min(float(r["ended_s"]), 12 * 3600) - max(float(r["started_s"]), 3600)) for r in active)
    row(aosp, "In the 12 h after its use an app is ACTIVE: only the 4 h a day limits its jobs", "§9 (AppStandbyControllerTests.testBuckets; QuotaControllerTest)",
        "3.5-4 h of job time between 1 h and 12 h after use", f"{active_time / 3600:.2f} h of 10-minute jobs back to back", 3.5 * 3600 <= active_time <= 4 * 3600)
    ws = [r for r in quota.tasks if r["policy"] == "android" and r["app"] == "working-set" and r["started_s"]]
    ws.sort(key=lambda r: float(r["started_s"]))
    gap = float(ws[1]["started_s"]) - float(ws[0]["started_s"]) if len(ws) > 1 else float("nan")
    row(aosp, "Quota comes back 30 s after the oldest usage ages out of the window (WORKING_SET: 10 min per 2 h)",
        "§9 (testMaybeScheduleStartAlarmLocked_WorkingSet)", "the next start 2 h 0 min 30 s after the first",
        f"first at {hms(float(ws[0]['started_s']))}, next {hms(gap)} later", abs(gap - 7230) < 1)
    first = ws[0]
    ran = float(first["ended_s"]) - float(first["started_s"])
    row(aosp, "A job that reaches its quota is stopped", "§9 (QuotaController)", "a 15-minute job stopped after 10 min",
        f"{first['outcome']} after {ran / 60:.2f} min", first["outcome"] == "expired" and abs(ran - 600) < 1)
    rare = [float(r["started_s"]) for r in quota.started("android", ("refresh",), "rare")]
    day2 = sum(1 for t in rare if 2 * DAY <= t < 3 * DAY)
    row(aosp, "A RARE app runs at most 3 sessions a day", "§9 (testIsWithinQuotaLocked_TimingSession)", "3 on day 2, where it asked hourly",
        f"{day2} (eager {sum(1 for r in quota.started('eager', ('refresh',), 'rare') if 2 * DAY <= float(r['started_s']) < 3 * DAY)})", day2 == 3)
    a, b = starts(doze, "android", "doze-a"), starts(doze, "android", "doze-b")
    row(aosp, "Light Doze holds jobs within minutes of the screen going off, until a maintenance window", "§9 (testLightStepIdleStateLocked_*)",
        "a job eligible at 1:14 (screen off at 0:30) waits for light Doze's window at 1:16:15", f"started at {hms(a[0]) if a else 'never'} (eager at {hms(starts(doze, 'eager', 'doze-a')[0])})",
        a and abs(a[0] - (3600 + 16 * 60 + 15)) < 1)
    row(aosp, "Maintenance windows end early once no job runs", "§9 (testExitMaintenanceEarlyIfNeededLocked_deep_noActiveOps)",
        "windows of 5 s with nothing to run put light Doze's 1:16:15 window before the 1:19:00 of full-length ones", f"{hms(a[0]) if a else 'never'}",
        a and a[0] < 3600 + 19 * 60)
    row(aosp, "Deep Doze: INACTIVE 30 min, IDLE_PENDING 30 min, SENSING, LOCATING, then IDLE for an hour", "§9 (testStepIdleStateLocked_ValidStates_*)",
        "a job eligible at 1:40 runs in the first deep window, at 2:34:30", f"started at {hms(b[0]) if b else 'never'}", b and abs(b[0] - (2 * 3600 + 34 * 60 + 30)) < 1)

    # AOSP's unit tests, ported.
    ported = re.findall(r"@Test func ([A-Za-z]+Tests?)_(test\w+)\(", open(os.path.join(root, "Tests/SchedulingTests/AOSPTests.swift")).read())

    failing = [r for r in rows_out if not r[5]]
    if check:
        for r in failing:
            print(f"validation: FAIL: {r[1]}: expected {r[3]}, measured {r[4]}", file=sys.stderr)
        print(f"validation: {len(rows_out) - len(failing)} of {len(rows_out)} rows in band")
        sys.exit(1 if failing else 0)

    out = ["# Validation", "",
           "Every observation of how iPhones schedule background work ([sources §4](sources.md), \"What iPhones",
           "are seen to do\"), every rule public sources give, and every AOSP behaviour `android` follows",
           "([§9](sources.md)): the band each implies, what bgsim measures, and whether it is in the band. All",
           "rows are held at once: a change that moves one out of its band is not done. Generated by `make",
           "validation` (`docs/validation.py`; `make test` checks that every row passes), from these runs:", "", "```"]
    out += [r.command for r in runs]
    out += ["```", "",
            f"{len(rows_out) - len(failing)} of {len(rows_out)} rows in band.", ""]
    for group in (ios, rules, aosp):
        out += [f"## {group}", "", "| behaviour | source | band | bgsim, measured | |", "| --- | --- | --- | --- | --- |"]
        for g, behaviour, source, band, measured, passed in rows_out:
            if g == group:
                out.append(f"| {behaviour} | {source} | {band} | {measured} | {'pass' if passed else '**fail**'} |")
        out.append("")
    out += ["Where sources disagree: the overnight share is not settled (§4). bgsim follows the practitioners",
            "who see background time mostly overnight on the charger (`ios`'s idle window, which may spend half",
            "an app's daily allowance in a night), and Apple's description of refreshes before predicted use",
            "by day; `idle_window_after: none` follows the logs that show refreshes only by day.", "",
            "## Who gets no refresh", "",
            f"In the fleet of {len(people)} people (the bundled fleet with one app, a 15-minute feed), the people",
            "`ios` refreshes never in the week, by their drawn traits, beside everyone:", "",
            "| trait | value | without a refresh | all |", "| --- | --- | --- | --- |"]
    for trait in ("settings.background_app_refresh", "network", "charging"):
        for value in sorted({r[trait] for r in people}):
            n_none = sum(1 for r in none if r[trait] == value)
            n_all = sum(1 for r in people if r[trait] == value)
            out.append(f"| `{trait}` | {value} | {n_none} | {n_all} |")
    sessions = sorted(float(r["people.sessions_per_day"]) for r in none)
    out += ["", f"Sessions a day of those without a refresh: {', '.join(f'{x:.0f}' for x in sessions[:12])}{' ...' if len(sessions) > 12 else ''}"
            f" (everyone's median {statistics.median(float(r['people.sessions_per_day']) for r in people):.0f}).", "",
            "## AOSP's unit tests, ported", "",
            "`Tests/SchedulingTests/AOSPTests.swift` reproduces each by name, with AOSP's set-up and expected values",
            "(`swift test --filter AOSPTests`; `make test` runs them):", ""]
    out += [f"- `{cls}.{name}`" for cls, name in ported]
    by_hour = collections.Counter()
    for r in base.started("ios", {"refresh", "fetch"}):
        t = float(r["started_s"])
        by_hour[(int(t % DAY // 3600), base.state("ios", r["replication"], t)["charging"] == "1")] += 1
    proc_hour = collections.Counter()
    for r in proc:
        t = float(r["started_s"])
        proc_hour[(int(t % DAY // 3600), base.state("ios", r["replication"], t)["charging"] == "1")] += 1
    out += ["", "## Where in the day `ios` starts work", "",
            "Refresh and fetch starts by hour of the day on the default scenario (all replications), on the charger / not:", "",
            "| hour | " + " | ".join(str(h) for h in range(24)) + " |", "| --- |" + " --- |" * 24,
            "| on / off | " + " | ".join(f"{by_hour[(h, True)]}/{by_hour[(h, False)]}" for h in range(24)) + " |", "",
            "Processing starts by hour, on the charger / not:", "",
            "| hour | " + " | ".join(str(h) for h in range(24)) + " |", "| --- |" + " --- |" * 24,
            "| on / off | " + " | ".join(f"{proc_hour[(h, True)]}/{proc_hour[(h, False)]}" for h in range(24)) + " |", ""]
    with open(os.path.join(root, "docs", "validation.md"), "w") as f:
        f.write("\n".join(out))
    print(f"wrote docs/validation.md: {len(rows_out) - len(failing)} of {len(rows_out)} rows in band")
    sys.exit(1 if failing else 0)


if __name__ == "__main__":
    main()
