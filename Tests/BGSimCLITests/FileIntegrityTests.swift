import Foundation
import Testing

/// Reads a result folder back with Python's csv module, as an analyst would, and checks it:
/// every digest in the manifest, every row's width, every non-text field a number with '.'
/// (no locale commas), and the energy books, from the files alone:
/// - per run, the tasks' `energy_j` sum to `background_energy_j`;
/// - background + foreground + baseline = `phone_energy_j` = the sum of the components;
/// - `phone_energy_j` = `charger_energy_j` - the battery's change (linear battery), with the
///   capacity and initial charge read from the manifest's resolved scenario;
/// - a started task's `held_*_s` sum to its `latency_s`, and a request's that never ran to
///   the time from its earliest begin to the end of the run.
/// Prints `ok` or the first problems.
let verifyScript = #"""
    import csv, hashlib, json, math, os, sys
    folder = sys.argv[1]
    errors = []
    def close(a, b, tol):
        return math.isclose(a, b, rel_tol=tol, abs_tol=tol)
    man = json.load(open(os.path.join(folder, "manifest.json"), encoding="utf-8"))
    names = sorted(n for n in os.listdir(folder))
    listed = sorted([f["name"] for f in man["files"]] + ["manifest.json"])
    if names != listed:
        errors.append("folder has %s, manifest lists %s" % (names, listed))
    text = {"scenario", "policy", "metric", "baseline", "app", "identifier", "kind", "outcome", "success", "rejection",
            "delayed_by", "policy_reasons", "policy_reason", "network", "foreground_app", "subject", "event", "detail", "task",
            "runs_by_hour", "held_rules", "top_rule"}
    tables = {}
    for f in man["files"]:
        path = os.path.join(folder, f["name"])
        data = open(path, "rb").read()
        if len(data) != f["bytes"] or hashlib.sha256(data).hexdigest() != f["sha256"]:
            errors.append("%s does not match its digest" % f["name"])
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh, strict=True))
        header, body = rows[0], rows[1:]
        for i, row in enumerate(body):
            if len(row) != len(header):
                errors.append("%s line %d has %d fields, not %d" % (f["name"], i + 2, len(row), len(header)))
                continue
            for name, value in zip(header, row):
                if name in text or value == "":
                    continue
                try:
                    float(value)
                except ValueError:
                    errors.append("%s line %d: %s=%r is not a number" % (f["name"], i + 2, name, value))
        tables[f["name"]] = [dict(zip(header, r)) for r in body]
    scenario = man["resolved_scenario"]
    capacity_j = float(scenario["phone"]["battery"]["capacity_wh"]) * 3600
    initial = float(scenario["phone"]["battery"]["initial_charge_pct"]) / 100
    linear = scenario["phone"]["battery"]["model"] == "linear"
    tasks = tables.get("tasks.csv")
    energy, count = {}, {}
    for t in tasks or []:
        key = (t["policy"], t["replication"])
        energy[key] = energy.get(key, 0.0) + float(t["energy_j"])
        count[key] = count.get(key, 0) + 1
        # Hold reasons are kept for requests a policy decides on (and finite-length work, never
        # held); a throttled push or a discretionary transfer waits on the system without one.
        if t["latency_s"] and t["kind"] in ("refresh", "processing", "fetch", "finite_length"):
            held = sum(float(v) for k, v in t.items() if k.startswith("held_"))
            if not close(held, float(t["latency_s"]), 1e-6):
                errors.append("task %s of %s: held %s s but latency %s s" % (t["task"], key, held, t["latency_s"]))
        # A request that never ran was held from its earliest begin to the end of the run.
        if t["outcome"] == "never_run" and t["kind"] in ("refresh", "processing", "fetch"):
            waited = max(0.0, float(t["ended_s"]) - float(t["earliest_begin_s"]))
            held = sum(float(v) for k, v in t.items() if k.startswith("held_"))
            if not close(held, waited, 1e-6):
                errors.append("task %s of %s never ran: held %s s, but %s s from its earliest begin to the end" % (t["task"], key, held, waited))
    # apps.csv, column by column, from tasks.csv's rows (and launches from events.csv).
    apps = tables.get("apps.csv")
    if apps is not None and tasks is not None:
        groups = {}
        # Numbered kinds' requests are tallied under their wildcard (`redo.*`).
        numbered = {"redo", "continued_processing"}
        def tallied(t):
            i = t["identifier"]
            return i[: i.rindex(".") + 1] + "*" if t["kind"] in numbered and "." in i else i
        for t in tasks:
            groups.setdefault((t["policy"], t["replication"], t["app"], tallied(t)), []).append(t)
        if sorted(groups) != sorted((a["policy"], a["replication"], a["app"], a["identifier"]) for a in apps):
            errors.append("apps.csv's rows are not tasks.csv's (policy, replication, app, identifier)")
        # From the event log: each app's launches, and per task where it started (charger,
        # network) and why its expiration handler was called.
        launches, where, expirations = {}, {}, {}
        charging, network = {}, {}
        for e in tables.get("events.csv") or []:
            run = (e["policy"], e["replication"])
            if e["subject"] == "world" and e["event"] == "launch" and e["app"]:
                k = run + (e["app"],)
                launches[k] = launches.get(k, 0) + 1
            elif e["subject"] == "world" and e["event"] in ("plug_in", "unplug"):
                charging[run] = e["event"] == "plug_in"
            elif e["subject"] == "world" and e["event"] == "network":
                network[run] = e["detail"].split()[0].split("=")[1]
            elif e["subject"] == "task" and e["event"] == "started":
                where[run + (e["task"],)] = (charging.get(run, False), network.get(run, "none"))
            elif e["subject"] == "task" and e["event"] == "expiration_handler":
                expirations[run + (e["task"],)] = e["detail"].split("=")[1]
        rejection = {"unavailable": "unavailable", "tooManyPendingTaskRequests": "too_many_pending", "notPermitted": "not_permitted"}
        for a in apps:
            ts = groups.get((a["policy"], a["replication"], a["app"], a["identifier"]), [])
            started = [t for t in ts if t["started_s"]]
            days = float(a["days"])
            def check(column, expected, tol=1e-9):
                got = a[column]
                if expected is None:
                    ok = got == ""
                else:
                    ok = got != "" and close(float(got), expected, tol)
                if not ok:
                    errors.append("apps.csv %s/%s/%s/%s: %s=%r, tasks.csv gives %r" % (a["policy"], a["replication"], a["app"], a["identifier"], column, got, expected))
            check("submitted", len(ts))
            check("started", len(started))
            check("runs_per_day", len(started) / days)
            for o in ("completed", "expired", "killed", "replaced", "cancelled", "rejected", "never_run", "dropped"):
                check(o, sum(1 for t in ts if t["outcome"] == o))
            check("unsuccessful", sum(1 for t in ts if t["success"] == "false"))
            for e, c in rejection.items():
                check("rejected_" + c, sum(1 for t in ts if t["rejection"] == e))
            if a["kind"] != ts[0]["kind"]:
                errors.append("apps.csv %s: kind %s, tasks.csv %s" % (a["identifier"], a["kind"], ts[0]["kind"]))
            hours = [0] * 24
            for t in started:
                hours[int(float(t["started_s"]) // 3600) % 24] += 1
            if a["runs_by_hour"] != ";".join(map(str, hours)):
                errors.append("apps.csv %s: runs_by_hour %s, tasks.csv gives %s" % (a["identifier"], a["runs_by_hour"], hours))
            starts = sorted(float(t["started_s"]) for t in started)
            gaps = sorted(b - x for x, b in zip(starts, starts[1:]))
            check("gap_max_s", max(gaps) if gaps else None, 1e-6)
            if gaps:
                n = len(gaps)
                check("gap_median_s", gaps[n // 2] if n % 2 else (gaps[n // 2 - 1] + gaps[n // 2]) / 2, 1e-6)
            check("latency_mean_s", sum(float(t["latency_s"]) for t in started) / len(started) if started else None, 1e-6)
            check("cpu_time_s", sum(float(t["cpu_time_s"]) for t in ts), 1e-6)
            check("bytes", sum(float(t["up_bytes"]) + float(t["down_bytes"]) for t in ts), 1e-9)
            e = sum(float(t["energy_j"]) for t in ts)
            check("energy_j", e, 1e-9)
            check("energy_per_day_j", e / days, 1e-9)
            c = sum(float(t["charger_energy_j"]) for t in ts)
            check("charger_energy_per_day_j", c / days, 1e-9)
            check("battery_pct_per_day", 100 * (e - c) / days / capacity_j, 1e-9)
            for t in ts:
                if not -1e-9 <= float(t["charger_energy_j"]) <= float(t["energy_j"]) * (1 + 1e-12) + 1e-9:
                    errors.append("tasks.csv task %s: charger_energy_j %s outside 0 to energy_j %s" % (t["task"], t["charger_energy_j"], t["energy_j"]))
            check("energy_per_run_j", e / len(started) if started else None, 1e-9)
            for c in [c for c in a if c.startswith("held_") and c.endswith("_s")]:
                check(c, sum(float(t[c]) for t in ts), 1e-6)
            rules = {}
            for t in ts:
                for r in filter(None, t["policy_reasons"].split(";")):
                    rules[r] = True
            named = dict((x.split("=")[0], float(x.split("=")[1])) for x in filter(None, a["held_rules"].split(";")))
            if set(named) != set(rules):
                errors.append("apps.csv %s: held_rules %s, tasks.csv's policy_reasons %s" % (a["identifier"], sorted(named), sorted(rules)))
            if not close(sum(named.values()), float(a["held_policy_s"]), 1e-6):
                errors.append("apps.csv %s: held_rules sum to %r, held_policy_s %s" % (a["identifier"], sum(named.values()), a["held_policy_s"]))
            if (a["top_rule"] or None) != (max(named, key=named.get) if named else None):
                errors.append("apps.csv %s: top_rule %s, held_rules %s" % (a["identifier"], a["top_rule"], named))
            if "events.csv" in tables:
                at = [where[(t["policy"], t["replication"], t["task"])] for t in started]
                check("runs_charging", sum(1 for c, n in at if c))
                check("runs_wifi", sum(1 for c, n in at if n == "wifi"))
                check("runs_cellular", sum(1 for c, n in at if n == "cellular"))
                for reason in ("time_up", "device_in_use", "power_lost", "time_limit"):
                    check("expired_" + reason, sum(1 for t in ts if expirations.get((t["policy"], t["replication"], t["task"])) == reason))
                check("launches", launches.get((a["policy"], a["replication"], a["app"]), 0))
                check("launches_per_day", launches.get((a["policy"], a["replication"], a["app"]), 0) / days)
    # summary.csv's per-app rows: a run's app_runs_per_day over replications, 0 where absent.
    if apps is not None and "point" not in tables["runs.csv"][0]:
        reps = sorted(set(r["replication"] for r in tables["runs.csv"]))
        for srow in tables["summary.csv"]:
            if srow["metric"] != "app_runs_per_day":
                continue
            values = [next((float(a["runs_per_day"]) for a in apps if (a["policy"], a["replication"], a["app"], a["identifier"]) ==
                           (srow["policy"], rep, srow["app"], srow["identifier"])), 0.0) for rep in reps]
            zero = 100.0 * sum(1 for v in values if v == 0) / len(values)
            if not close(float(srow["mean"]), sum(values) / len(values), 1e-9) or not close(float(srow["zero_pct"]), zero, 1e-9):
                errors.append("summary.csv %s/%s/%s: app_runs_per_day mean %s zero_pct %s, apps.csv gives %r, %r" % (
                    srow["policy"], srow["app"], srow["identifier"], srow["mean"], srow["zero_pct"], sum(values) / len(values), zero))
        # app_gap_median_s: the mean over the replications that have a gap (a mean over runs).
        for srow in tables["summary.csv"]:
            if srow["metric"] != "app_gap_median_s":
                continue
            gaps = [float(a["gap_median_s"]) for a in apps if (a["policy"], a["app"], a["identifier"]) == (srow["policy"], srow["app"], srow["identifier"])
                    and a["gap_median_s"] not in ("", "nan")]
            if gaps and not close(float(srow["mean"]), sum(gaps) / len(gaps), 1e-9):
                errors.append("summary.csv %s/%s/%s: app_gap_median_s mean %s, apps.csv gives %r" % (
                    srow["policy"], srow["app"], srow["identifier"], srow["mean"], sum(gaps) / len(gaps)))
    for r in tables["runs.csv"]:
        key = (r["policy"], r["replication"])
        bg, phone = float(r["background_energy_j"]), float(r["phone_energy_j"])
        if tasks is not None:
            if not close(energy.get(key, 0.0), bg, 1e-9):
                errors.append("%s: tasks sum to %r J, background_energy_j is %r" % (key, energy.get(key, 0.0), bg))
            if count.get(key, 0) != int(r["tasks_submitted"]):
                errors.append("%s: %d task rows, %s submitted" % (key, count.get(key, 0), r["tasks_submitted"]))
        slack = 1e-9 * phone + 1e-5 * (1 + int(r["shutdowns"]))
        if not close(bg + float(r["foreground_energy_j"]) + float(r["energy_baseline_j"]), phone, slack):
            errors.append("%s: background + foreground + baseline != phone_energy_j" % (key,))
        parts = sum(float(r[c]) for c in r if c.startswith("energy_") and c.endswith("_j"))
        if not close(parts, phone, slack):
            errors.append("%s: components sum to %r, phone_energy_j is %r" % (key, parts, phone))
        if linear:
            change = (float(r["final_charge_pct"]) / 100 - initial) * capacity_j
            if not close(float(r["charger_energy_j"]) - change, phone, 1e-6 * phone):
                errors.append("%s: charger - battery change = %r, phone_energy_j is %r" % (key, float(r["charger_energy_j"]) - change, phone))
    print("\n".join(errors[:20]) if errors else "ok")
    """#

func python(_ script: String, _ arguments: [String]) throws -> String {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = ["python3", "-c", script] + arguments
    let out = Pipe()
    p.standardOutput = out
    p.standardError = out
    try p.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

@Suite("Result files as others read them")
struct FileIntegrityTests {
    @Test func pythonsCSVModuleReadsEveryFileAndTheBooksBalanceUnderAGermanLocale() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try bgsim(
            [
                "run", defaultScenario, "--replications", "3", "--set", "duration=2d", "--events", "--timeline", "30m",
                "--out", "out", "--quiet",
            ], in: dir, environment: ["LC_ALL": "de_DE.UTF-8", "LANG": "de_DE.UTF-8"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(try python(verifyScript, [dir.appendingPathComponent("out").path]) == "ok")
    }

    @Test func theCheckCatchesABrokenFile() throws {
        // The verifier itself must fail on a file that is wrong: one task's energy changed.
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(try bgsim(["run", defaultScenario, "--replications", "2", "--set", "duration=1d", "--out", "out", "--quiet"], in: dir).status == 0)
        let tasks = dir.appendingPathComponent("out/tasks.csv")
        var lines = try String(contentsOf: tasks, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var fields = lines[1].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let header = lines[0].split(separator: ",").map(String.init)
        let e = header.firstIndex(of: "energy_j")!
        fields[e] = String(Double(fields[e])! + 1)
        lines[1] = fields.joined(separator: ",")
        try Data(lines.joined(separator: "\n").utf8).write(to: tasks)
        let verdict = try python(verifyScript, [dir.appendingPathComponent("out").path])
        #expect(verdict.contains("tasks.csv does not match its digest"))
        #expect(verdict.contains("tasks sum to"))
    }

    /// apps.csv is checked column by column against tasks.csv and events.csv: each of these
    /// columns, written one off, fails the check by name.
    @Test(arguments: ["runs_charging", "runs_wifi", "launches", "expired_time_up", "energy_j", "held_policy_s", "rejected_unavailable"])
    func aWrongColumnOfAppsCSVFailsTheCheck(column: String) throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = ["run", defaultScenario, "--replications", "1", "--set", "duration=1d", "--set", "policies=[ios]", "--events", "--out", "out", "--quiet"]
        #expect(try bgsim(run, in: dir).status == 0)
        #expect(try python(verifyScript, [dir.appendingPathComponent("out").path]) == "ok")
        let apps = dir.appendingPathComponent("out/apps.csv")
        var lines = try String(contentsOf: apps, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let header = lines[0].split(separator: ",").map(String.init)
        let k = try #require(header.firstIndex(of: column))
        var fields = lines[1].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        fields[k] = String(Double(fields[k])! + 1)
        lines[1] = fields.joined(separator: ",")
        try Data(lines.joined(separator: "\n").utf8).write(to: apps)
        let verdict = try python(verifyScript, [dir.appendingPathComponent("out").path])
        #expect(verdict.contains(": \(column)="), "\(verdict)")
    }

    /// A sweep of the default scenario, 7 days, two points and 96 units in all, written into
    /// `dir`; the command that runs it into a folder given after it (`--out`).
    static func sweepCommand(in dir: URL) throws -> [String] {
        let sweep = dir.appendingPathComponent("sweep.yaml")
        try """
        scenario: \(defaultScenario)
        set: {duration: 7d}
        replications: 8
        design: grid
        axes:
          - {path: settings.background_app_refresh, values: [wifi, wifi-and-cellular]}
        """.write(to: sweep, atomically: true, encoding: .utf8)
        return ["sweep", sweep.path, "--jobs", "2", "--timeline", "1h", "--events"]
    }

    /// Starts bgsim without waiting for it, `under` a command that ends by running it if
    /// given; its stderr is piped.
    static func start(_ arguments: [String], under wrapper: [String] = []) throws -> (process: Process, stderr: Pipe) {
        let binary = bgsimBinary()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: wrapper.isEmpty ? binary : "/usr/bin/env")
        p.arguments = wrapper.isEmpty ? arguments : wrapper + arguments
        p.standardOutput = FileHandle.nullDevice
        let err = Pipe()
        p.standardError = err
        try p.run()
        return (p, err)
    }

    /// The units a study into `out` has finished so far: their records.
    /// The units whose record is whole (it ends with its check line). A record is created
    /// empty and then written, so a process stopped between the two, or a listing taken
    /// between them, shows a record file of a unit that is not finished: resume runs it again.
    static func finishedUnits(_ out: URL) -> [String] {
        let units = out.appendingPathComponent("units")
        return ((try? FileManager.default.contentsOfDirectory(atPath: units.path)) ?? []).filter { name in
            guard name.hasSuffix(".unit.txt"), let text = try? String(contentsOf: units.appendingPathComponent(name), encoding: .utf8) else { return false }
            return text.split(separator: "\n").last?.hasPrefix("check ") == true && text.hasSuffix("\n")
        }
    }

    /// Waits until `p` has finished `count` units into `out`; fails if it ends first.
    static func waitForUnits(_ count: Int, of p: Process, into out: URL) throws {
        let deadline = Date().addingTimeInterval(120)
        while finishedUnits(out).count < count && p.isRunning && Date() < deadline { usleep(5_000) }
        try #require(p.isRunning, "the sweep ended before it could be stopped; make it longer")
    }

    /// SIGKILL in the middle of a sweep, then the same command again: the second run skips
    /// the units the first one finished, and the final files equal an uninterrupted run's,
    /// byte for byte. While the first runs, a second into the same folder is refused; the
    /// killed one's lock goes with it.
    @Test func aSweepKilledMidwayResumesAndWritesTheSameFilesAsAnUninterruptedOne() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let command = try Self.sweepCommand(in: dir)
        let whole = try bgsim(command + ["--out", dir.appendingPathComponent("whole").path, "--quiet"])
        #expect(whole.status == 0, "stderr: \(whole.stderr)")

        let out = dir.appendingPathComponent("out")
        let (p, _) = try Self.start(command + ["--out", out.path, "--quiet"])
        // Wait until some units are finished (96 in all), then kill it outright.
        try Self.waitForUnits(10, of: p, into: out)
        // The same command into the same folder while the first runs stops at once, naming
        // the folder, and touches nothing.
        let second = try bgsim(command + ["--out", out.path, "--quiet"])
        #expect(
            second.status == 1
                && second.stderr == "error: \(out.path) is in use: another bgsim is writing there "
                    + "(a run, sweep, merge or forecast); wait for it to end, or choose another --out\n",
            "\(second.stderr)")
        // So is a forecast (it took no lock, and wrote into a folder a run was writing).
        let app = repo.appendingPathComponent("Examples/forecast/news-app.yaml").path
        let forecast = try bgsim(["forecast", app, "--people", "2", "--sweep-people", "0", "--no-ranges", "--out", out.path, "--quiet"])
        #expect(forecast.status == 1 && forecast.stderr.contains("is in use: another bgsim is writing there"), "\(forecast.stderr)")
        try #require(p.isRunning, "the sweep ended before it could be killed; make it longer")
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        #expect(p.terminationReason == .uncaughtSignal)
        let left = try FileManager.default.contentsOfDirectory(atPath: out.path)
        #expect(left.allSatisfy { $0 == "units" || $0.hasPrefix(".") }, "no result file may look finished: \(left)")
        let done = Self.finishedUnits(out).count
        #expect(done >= 10 && done < 96)

        let r = try bgsim(command + ["--out", out.path])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(r.stdout.contains("(\(96 - done) units run, \(done) already finished)") || r.stdout.contains("already finished)"), "\(r.stdout)")
        #expect(r.stderr.contains("already finished"), "progress says it resumed")
        let names = ["apps.csv", "comparisons.csv", "events.csv", "manifest.json", "runs.csv", "summary.csv", "tasks.csv", "timeline.csv"]
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).sorted() == names, "no unit store or temporary is left")
        for name in names {
            let a = try Data(contentsOf: out.appendingPathComponent(name))
            let b = try Data(contentsOf: dir.appendingPathComponent("whole").appendingPathComponent(name))
            #expect(a == b, "\(name) differs from the uninterrupted sweep's")
        }
    }

    /// A symbolic link inside `--out` where bgsim keeps its own files is never followed: a
    /// `units` link is refused (exit 2) with nothing written where it points; a unit's record
    /// or rows replaced by links are written again as files, the link's target untouched; and
    /// merge refuses a shard whose unit file is a link, even one to identical bytes.
    @Test func symbolicLinksInsideTheOutputFolderAreNotFollowed() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fm = FileManager.default
        let command = ["run", defaultScenario, "--set", "duration=2h", "--replications", "2", "--set", "policies=[eager]"]
        let target = dir.appendingPathComponent("elsewhere")
        try fm.createDirectory(at: target, withIntermediateDirectories: true)
        try fm.createDirectory(at: dir.appendingPathComponent("out"), withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: dir.appendingPathComponent("out/units").path, withDestinationPath: target.path)
        let linked = try bgsim(command + ["--out", "out"], in: dir)
        #expect(linked.status == 2, "\(linked.stderr)")
        #expect(linked.stderr.contains("out/units is a symbolic link; bgsim keeps the finished units there and does not follow a link"), "\(linked.stderr)")
        #expect(try fm.contentsOfDirectory(atPath: target.path).isEmpty, "nothing written through the link")

        // A shard keeps its units; two of its files become links to a file outside.
        #expect(try bgsim(command + ["--out", "shard", "--shard", "1/1", "--quiet"], in: dir).status == 0)
        let units = dir.appendingPathComponent("shard/units")
        let names = try fm.contentsOfDirectory(atPath: units.path).sorted()
        let record = try #require(names.first { $0.hasSuffix(".unit.txt") })
        let rows = try #require(names.first { $0.hasSuffix(".tasks.csv") })
        let victim = dir.appendingPathComponent("victim.txt")
        try "keep me\n".write(to: victim, atomically: true, encoding: .utf8)
        for name in [record, rows] {
            try fm.removeItem(at: units.appendingPathComponent(name))
            try fm.createSymbolicLink(atPath: units.appendingPathComponent(name).path, withDestinationPath: victim.path)
        }
        let again = try bgsim(command + ["--out", "shard", "--shard", "1/1", "--quiet"], in: dir)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try String(contentsOf: victim, encoding: .utf8) == "keep me\n", "the link's target is untouched")
        for name in [record, rows] { #expect(!OutputFilesProbe.isLink(units.appendingPathComponent(name).path), "\(name) is a file again") }

        // Merge: a unit file that is a link to a copy of its own bytes is still refused.
        let copy = dir.appendingPathComponent("copy.csv")
        try fm.copyItem(at: units.appendingPathComponent(rows), to: copy)
        try fm.removeItem(at: units.appendingPathComponent(rows))
        try fm.createSymbolicLink(atPath: units.appendingPathComponent(rows).path, withDestinationPath: copy.path)
        let merge = try bgsim(["merge", "shard", "--out", "merged"], in: dir)
        #expect(merge.status == 3 && merge.stderr.contains("\(rows): a symbolic link, which merge does not follow"), "\(merge.stderr)")
        #expect(!fm.fileExists(atPath: dir.appendingPathComponent("merged/manifest.json").path))
    }

    /// Ctrl-C (SIGINT) or SIGTERM (`kill`, or Slurm at a time limit) in the middle of a sweep:
    /// bgsim says on stderr, even with --quiet, how many units had finished, where they are
    /// kept and that the same command goes on from them; it then dies of the signal, as
    /// without a handler; and the same command resumes from those units.
    @Test(arguments: [SIGINT, SIGTERM])
    func aSweepStoppedBySIGINTOrSIGTERMSaysWhatIsKeptAndDiesOfTheSignal(signo: Int32) throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let command = try Self.sweepCommand(in: dir)
        let out = dir.appendingPathComponent("out")
        // Started as from a terminal, with the signal's default action (a test runner may
        // have been started with SIGINT ignored, which bgsim then keeps ignoring): Python
        // resets it and execs bgsim in the same process.
        let (p, err) = try Self.start(
            command + ["--out", out.path, "--quiet"],
            under: [
                "python3", "-c", "import os, signal, sys; signal.signal(\(signo), signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])", bgsimBinary(),
            ])
        try Self.waitForUnits(10, of: p, into: out)
        kill(p.processIdentifier, signo)
        let said = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationReason == .uncaughtSignal && p.terminationStatus == signo)
        // The message counts the units whose end the sweep has taken in; with --jobs 2, at
        // most two more have written their records (ended, or ending before the process).
        let done = Self.finishedUnits(out).count
        let name = signo == SIGINT ? "SIGINT" : "SIGTERM"
        let prefix = "bgsim: stopped by \(name): "
        let said0 = said.hasPrefix(prefix) ? said.dropFirst(prefix.count) : ""
        let finished = Int(said0.prefix { $0.isNumber }) ?? -1
        #expect(done >= 10 && finished <= done && done <= finished + 2, "\(said), \(done) units on disk")
        #expect(
            said == prefix + "\(finished) of 96 units had finished; they are kept in \(out.path)/units, "
                + "and the same command runs the other \(96 - finished) and writes the results.\n", "\(said)")

        let r = try bgsim(command + ["--out", out.path])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(r.stdout.contains("(\(96 - done) units run, \(done) already finished)"), "\(r.stdout)")
    }

    /// With --precision, more replications may follow those asked for so far: a stopped run
    /// says how many of those had finished, and only that the same command goes on from them.
    @Test func aPrecisionRunStoppedSaysOnlyThatItGoesOn() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("out")
        let (p, err) = try Self.start(
            [
                "run", defaultScenario, "--set", "duration=2d", "--precision", "0.0001", "--jobs", "2",
                "--out", out.path, "--quiet",
            ],
            under: [
                "python3", "-c", "import os, signal, sys; signal.signal(signal.SIGTERM, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])", bgsimBinary(),
            ])
        try Self.waitForUnits(4, of: p, into: out)
        kill(p.processIdentifier, SIGTERM)
        let said = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationReason == .uncaughtSignal && p.terminationStatus == SIGTERM)
        #expect(
            said.hasPrefix("bgsim: stopped by SIGTERM: ") && said.contains(" units asked for so far had finished; they are kept in ")
                && said.hasSuffix("\(out.path)/units, and the same command goes on from them.\n"), "\(said)")
    }
}

enum OutputFilesProbe {
    static func isLink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
    }
}
