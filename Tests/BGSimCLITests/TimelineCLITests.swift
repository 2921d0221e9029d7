import Foundation
import Testing

/// `bgsim timeline`: the trace of one phone's run, read back and held against the run's own
/// rows in tasks.csv and events.csv, slice by slice.
@Suite("Perfetto traces through the command line")
struct TimelineCLITests {
    typealias Event = [String: Any]

    /// Rows of a CSV file without quoted commas (tasks.csv's and events.csv's keys are plain),
    /// by column name; a quoted field is kept whole.
    static func rows(_ url: URL) throws -> [[String: String]] {
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
        func fields(_ line: Substring) -> [String] {
            var out: [String] = [], field = "", quoted = false
            for c in line {
                if c == "\"" { quoted.toggle() } else if c == "," && !quoted { out.append(field); field = "" } else { field.append(c) }
            }
            return out + [field]
        }
        let header = fields(lines[0])
        return lines.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(header, fields($0))) }
    }

    static func micros(_ seconds: String) -> Int64 { Int64((Double(seconds)! * 1e6).rounded()) }

    @Test func theTraceHoldsEveryTaskAndStateOfTheRunItRecords() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try bgsim(["run", defaultScenario, "--set", "duration=2d", "--replications", "1", "--events", "--out", "r", "--quiet"], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        let r = try bgsim(["timeline", "r", "--policy", "ios"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("Wrote r/trace-ios-0.json"), "\(r.stdout)")
        let data = try Data(contentsOf: dir.appendingPathComponent("r/trace-ios-0.json"))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let events = try #require(json["traceEvents"] as? [Event])
        let meta = try #require(json["otherData"] as? [String: Any])
        #expect(meta["policy"] as? String == "ios" && meta["replication"] as? Int == 0)
        func slices(_ cat: String) -> [Event] { events.filter { $0["ph"] as? String == "X" && $0["cat"] as? String == cat } }
        func ts(_ e: Event) -> Int64 { (e["ts"] as! NSNumber).int64Value }
        func end(_ e: Event) -> Int64 { ts(e) + (e["dur"] as! NSNumber).int64Value }
        func args(_ e: Event) -> [String: Any] { e["args"] as? [String: Any] ?? [:] }

        // Tracks are named: the phone's and every app's.
        let names = events.filter { $0["name"] as? String == "thread_name" }.compactMap { args($0)["name"] as? String }
        for track in ["Charger", "Network", "Screen (app in front)", "Wi-Fi radio", "Cellular radio", "State"] {
            #expect(names.contains(track), "no track \(track)")
        }

        // Each request that started has exactly one run slice, from its start to its end.
        let tasks = try Self.rows(dir.appendingPathComponent("r/tasks.csv")).filter { $0["policy"] == "ios" && $0["replication"] == "0" }
        let runs = slices("run")
        #expect(runs.count == tasks.filter { !$0["started_s"]!.isEmpty }.count)
        let runByTask = Dictionary(grouping: runs) { args($0)["task"] as! Int }
        for t in tasks {
            let id = Int(t["task"]!)!
            guard let started = t["started_s"], !started.isEmpty else {
                #expect(runByTask[id] == nil, "task \(id) never started but has a run")
                continue
            }
            let run = try #require(runByTask[id]?.first, "task \(id) has no run slice")
            #expect(runByTask[id]!.count == 1)
            #expect(ts(run) == Self.micros(started) && end(run) == Self.micros(t["ended_s"]!), "task \(id)'s run")
            #expect(run["name"] as? String == t["identifier"] && args(run)["outcome"] as? String == t["outcome"])
        }

        // Its waits lie between submission and start (or end), and the time each gate held it
        // is tasks.csv's held_<gate>_s to the microsecond; the policy's reasons add up to
        // held_policy_s.
        let waits = slices("wait")
        #expect(!waits.isEmpty)
        let taskRow = Dictionary(uniqueKeysWithValues: tasks.map { (Int($0["task"]!)!, $0) })
        let gates = tasks[0].keys.filter { $0.hasPrefix("held_") && $0.hasSuffix("_s") }.map { String($0.dropFirst(5).dropLast(2)) }
        var held: [Int: [String: Int64]] = [:]
        for w in waits {
            let id = args(w)["task"] as! Int, by = args(w)["held_by"] as! String
            let t = try #require(taskRow[id])
            let waitEnd = Self.micros(t["started_s"]!.isEmpty ? t["ended_s"]! : t["started_s"]!)
            #expect(ts(w) >= Self.micros(t["submitted_s"]!) && end(w) <= waitEnd, "task \(id)'s wait")
            #expect(w["name"] as? String == "held: \(by)")
            if by != "earliest_begin" { held[id, default: [:]][gates.contains(by) ? by : "policy", default: 0] += end(w) - ts(w) }
        }
        for t in tasks {
            for g in gates {
                let expected = Self.micros(t["held_\(g)_s"].flatMap { $0.isEmpty ? nil : $0 } ?? "0")
                #expect(abs((held[Int(t["task"]!)!]?[g] ?? 0) - expected) <= 1, "task \(t["task"]!) held_\(g)_s")
            }
        }

        // Each app's states are events.csv's transitions, in order; the charger's and the
        // network's slices start at its events.
        let rows = try Self.rows(dir.appendingPathComponent("r/events.csv")).filter { $0["policy"] == "ios" && $0["replication"] == "0" }
        let processes = Dictionary(
            uniqueKeysWithValues: events.filter { $0["name"] as? String == "process_name" }.map { ($0["pid"] as! Int, args($0)["name"] as! String) })
        let states = slices("app")
        var expectedStates: [String: [String]] = [:], seenStates: [String: [String]] = [:]
        for row in rows where row["subject"] == "app" {
            guard let arrow = row["event"]!.range(of: "->") else { continue }
            let to = String(row["event"]![arrow.upperBound...])
            if to != "not_running" { expectedStates["App " + row["app"]!, default: []].append("\(Self.micros(row["time_s"]!)) \(to)") }
        }
        for s in states { seenStates[processes[s["pid"] as! Int]!, default: []].append("\(ts(s)) \(s["name"] as! String)") }
        #expect(!expectedStates.isEmpty && seenStates == expectedStates)
        let plugs = rows.filter { $0["event"] == "plug_in" }.map { Self.micros($0["time_s"]!) }
        #expect(slices("charger").map(ts) == plugs)
        let networks = rows.filter { $0["event"] == "network" && !$0["detail"]!.hasPrefix("network=none") }.map { Self.micros($0["time_s"]!) }
        #expect(slices("network").map(ts) == networks)
        let launches = rows.filter { $0["event"] == "launch" }.map { Self.micros($0["time_s"]!) }
        #expect(slices("screen").map(ts) == launches)

        // Radios: one promotion slice per promotion runs.csv counts, no two slices of a radio
        // overlapping; the battery's counter stays within 0 to 100%.
        let runsRow = try #require(try Self.rows(dir.appendingPathComponent("r/runs.csv")).first { $0["policy"] == "ios" })
        let radio = slices("radio")
        #expect(radio.filter { $0["name"] as? String == "promoting" }.count == Int(runsRow["radio_promotions"]!)!)
        for tid in Set(radio.map { $0["tid"] as! Int }) {
            let track = radio.filter { $0["tid"] as! Int == tid }
            for (a, b) in zip(track, track.dropFirst()) { #expect(end(a) <= ts(b), "radio \(tid) overlaps at \(ts(b))") }
        }
        let battery = events.filter { $0["ph"] as? String == "C" }.map { args($0)["charge_pct"] as! Double }
        #expect(!battery.isEmpty && battery.allSatisfy { (0...100).contains($0) })
    }

    @Test func anUnknownPolicyOrReplicationIsOneLine() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try bgsim(["run", defaultScenario, "--set", "duration=1d", "--replications", "1", "--no-tasks", "--out", "r", "--quiet"], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        let policy = try bgsim(["timeline", "r", "--policy", "nope"], in: dir)
        #expect(policy.status == 2 && policy.stderr.contains("--policy nope: the study's policies are eager, "), "\(policy.stderr)")
        let replication = try bgsim(["timeline", "r", "--replication", "3"], in: dir)
        #expect(replication.status == 2 && replication.stderr.contains("replications 0 to 0"), "\(replication.stderr)")
    }
}

/// Results are not lost by accident: the same command over an edited scenario does not
/// replace the default folder's results unless told to; an app profile given to `run` is
/// told to use `forecast`.
@Suite("Results kept")
struct ResultsKeptTests {
    @Test func anEditedScenarioRunAgainKeepsTheEarlierResultsUnlessToldToReplace() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let text = try String(contentsOfFile: defaultScenario, encoding: .utf8).replacingOccurrences(of: "name: default", with: "name: mine")
        try text.write(to: dir.appendingPathComponent("mine.yaml"), atomically: true, encoding: .utf8)
        let args = ["run", "mine.yaml", "--set", "duration=1d", "--replications", "1", "--no-tasks", "--quiet"]
        #expect(try bgsim(args, in: dir).status == 0)
        let before = try Data(contentsOf: dir.appendingPathComponent("results/mine_duration-1d/runs.csv"))
        #expect(try bgsim(args, in: dir).status == 0, "the same file and command again replaces its own results")
        try text.replacingOccurrences(of: "seed: 42", with: "seed: 43").write(to: dir.appendingPathComponent("mine.yaml"), atomically: true, encoding: .utf8)
        let edited = try bgsim(args, in: dir)
        #expect(edited.status == 2 && edited.stderr.contains("its plan_sha256 differs") && edited.stderr.contains("--replace"), "\(edited.stderr)")
        #expect(try Data(contentsOf: dir.appendingPathComponent("results/mine_duration-1d/runs.csv")) == before, "nothing replaced")
        #expect(try bgsim(args + ["--replace"], in: dir).status == 0)
        #expect(try Data(contentsOf: dir.appendingPathComponent("results/mine_duration-1d/runs.csv")) != before)
    }

    @Test func anAppProfileGivenToRunIsToldToUseForecast() throws {
        let r = try bgsim(["run", repo.appendingPathComponent("Examples/forecast/news-app.yaml").path])
        #expect(r.status == 2 && r.stderr.contains("this is an app profile, not a scenario") && r.stderr.contains("bgsim forecast "), "\(r.stderr)")
    }
}
