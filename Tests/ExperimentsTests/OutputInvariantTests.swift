import Foundation
import Policies
import Scheduling
import SimEngine
import Testing

@testable import Experiments
@testable import Reports
@testable import ScenarioFiles

/// Every output file read back, each row checked against what ties its columns together:
/// energies that sum, times that order, outcomes that match their columns, counts that match
/// the tasks. A column written from the wrong value breaks one of these (tasks.csv's
/// `radio_tail_energy_j` written from `radio_energy_j` makes a task that moved bytes spend
/// nothing on the active radio).
@Suite("Output invariants")
struct OutputInvariantTests {
    /// The default scenario, whose apps use every built-in mechanism, and a video editor whose
    /// exports are continued-processing tasks, for three days, with every file.
    static func results() async throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-invariants-\(UUID().uuidString)")
        let yaml = try String(contentsOfFile: defaultScenario, encoding: .utf8).replacingOccurrences(
            of: "  - game           # UIApplicationExitsOnSuspend\n",
            with: "  - game\n  - {profile: video-editor, continued_processing: {tap_after: 5s, gpu: false}}\n")
        let plan = StudyPlan(
            scenario: try Scenario.parse(
                yaml: yaml, file: defaultScenario, overrides: [Override(parsing: "replications=2")!, Override(parsing: "duration=3d")!]))
        _ = try await Experiment.perform(
            plan, options: StudyOptions(jobs: 2, record: RecordOptions(events: true, tasks: true, timelineEvery: .minutes(10))), to: dir)
        return dir
    }

    static func number(_ row: CheckedRow, _ column: String) -> Double? { row.number(column) }

    static func near(_ a: Double, _ b: Double, _ relative: Double = 1e-6) -> Bool {
        abs(a - b) <= relative * max(1, abs(a), abs(b))
    }

    /// Every row checked, and every column of runs, tasks, apps and summary read by a check:
    /// a column no check reads fails here by name.
    @Test func everyRowOfEveryFileKeepsItsInvariants() async throws {
        let dir = try await Self.results()
        defer { try? FileManager.default.removeItem(at: dir) }
        let reads = ColumnReads()
        let (taskColumns, tasks) = try reads.rows(dir, "tasks.csv")
        try #require(tasks.count > 1000, "the run has tasks (\(tasks.count))")
        let kinds = Set(tasks.map { $0["kind"]! })
        #expect(kinds.count >= 13, "the scenario exercises the mechanisms: \(kinds.sorted())")
        let (runColumns, runs) = try reads.rows(dir, "runs.csv")
        let (appColumns, apps) = try reads.rows(dir, "apps.csv")
        let (summaryColumns, summary) = try reads.rows(dir, "summary.csv")
        let events = try reads.rows(dir, "events.csv").rows
        let comparisons = try reads.rows(dir, "comparisons.csv").rows
        let duration = 3 * 86_400.0, logs = RunLog.read(events, duration: duration)
        let capacityJ = try Scenario.parse(yaml: try String(contentsOfFile: defaultScenario, encoding: .utf8), file: defaultScenario).setup.battery.capacityJ
        reads.checking("tasks.csv") {
            checkTasks(tasks)
            checkTaskColumns(tasks, events: events, logs: logs, policies: Set(PolicyRegistry.builtIn.map { $0.policyName }))
        }
        reads.checking("runs.csv") {
            checkRuns(runs, tasks: tasks)
            checkRunColumns(runs, tasks: tasks, logs: logs, apps: apps, duration: duration)
        }
        reads.checking("apps.csv") {
            checkApps(apps, tasks: tasks)
            checkAppColumns(apps, tasks: tasks, logs: logs, duration: duration, capacityJ: capacityJ)
        }
        checkTimeline(try reads.rows(dir, "timeline.csv").rows)
        checkEvents(events, tasks: tasks)
        reads.checking("summary.csv") {
            checkSummaries(summary, comparisons, runs: runs)
            checkSummaryColumns(summary, runs: runs, apps: apps)
        }
        for (file, header) in [("tasks.csv", taskColumns), ("runs.csv", runColumns), ("apps.csv", appColumns), ("summary.csv", summaryColumns)] {
            let unread = reads.unread(file, header: header)
            #expect(unread.isEmpty, "\(file): no check reads \(unread.count) columns: \(unread)")
        }
    }

    /// One task per row: its energy is its CPU's and its radio's; a task that moved bytes spent
    /// energy on the active radio beyond the tail; its times order; its outcome says which
    /// columns are filled; it was held no longer than it waited.
    func checkTasks(_ tasks: [CheckedRow]) {
        let started: Set<String> = ["completed", "expired", "killed"]
        let notStarted: Set<String> = ["replaced", "cancelled", "rejected", "never_run", "dropped"]
        var failures = 0
        func check(_ ok: Bool, _ what: String, _ row: CheckedRow) {
            guard !ok else { return }
            failures += 1
            if failures <= 5 { Issue.record("tasks.csv task \(row["task"]!) (\(row["policy"]!), \(row["kind"]!), \(row["outcome"]!)): \(what)") }
        }
        for row in tasks {
            let n = { Self.number(row, $0) }
            let (energy, cpu, radio, tail) = (n("energy_j")!, n("cpu_energy_j")!, n("radio_energy_j")!, n("radio_tail_energy_j")!)
            check(Self.near(energy, cpu + radio), "energy_j \(energy) is not cpu_energy_j + radio_energy_j (\(cpu + radio))", row)
            check(tail >= 0 && tail <= radio + 1e-9, "radio_tail_energy_j \(tail) is not within radio_energy_j \(radio)", row)
            let moved = n("up_bytes")! + n("down_bytes")!
            check(moved == 0 || radio > tail, "moved \(moved) bytes with no active radio energy (radio \(radio), tail \(tail))", row)
            let (submitted, earliest) = (n("submitted_s")!, n("earliest_begin_s")!)
            check(earliest >= submitted, "earliest_begin_s before submitted_s", row)
            let outcome = row["outcome"]!
            check(started.contains(outcome) || notStarted.contains(outcome), "unknown outcome", row)
            check(started.contains(outcome) == (n("started_s") != nil), "started_s filled \(n("started_s") != nil) for its outcome", row)
            check((outcome == "rejected") == (row["rejection"] != ""), "rejection filled only for rejected", row)
            check((outcome == "completed") == (row["success"] != ""), "success filled only for completed", row)
            if let begun = n("started_s"), let ended = n("ended_s") {
                check(begun >= earliest - 1e-6 && ended >= begun, "times out of order", row)
                check(Self.near(n("latency_s")!, begun - earliest, 1e-5), "latency_s is not started_s - earliest_begin_s", row)
                check(n("cpu_time_s")! <= ended - begun + 1e-6, "cpu_time_s longer than the run", row)
                if let c = n("completion_latency_s") {
                    check(Self.near(c, ended - earliest, 1e-5), "completion_latency_s is not ended_s - earliest_begin_s", row)
                }
            } else {
                check(n("latency_s") == nil && energy == 0 && moved == 0, "not started, yet a latency, energy or bytes", row)
            }
            let held = row.columns { $0.hasPrefix("held_") && $0.hasSuffix("_s") }
            let waited = (n("started_s") ?? n("ended_s") ?? earliest) - earliest
            let total = held.reduce(0) { $0 + n($1)! }
            check(total <= max(0, waited) + 1e-5 * Double(held.count), "held \(total) s, longer than it waited (\(waited) s)", row)
            let delayedBy = Set(held.filter { n($0)! > 0 }.map { String($0.dropFirst(5).dropLast(2)) })
            check(delayedBy == Set(row["delayed_by"]!.split(separator: ";").map(String.init)), "delayed_by is not the held columns above 0", row)
            check((n("held_policy_s")! > 0) == (row["policy_reason"] != ""), "policy_reason filled only when the policy held it", row)
        }
        #expect(failures == 0, "\(failures) rows of tasks.csv broke an invariant")
    }

    /// runs.csv's counts and energies per run are its tasks': submitted, each outcome, each
    /// kind's runs and energy, the unsuccessful; and the phone's energy is its components'.
    func checkRuns(_ runs: [CheckedRow], tasks: [CheckedRow]) {
        let byRun = Dictionary(grouping: tasks) { "\($0["policy"]!)/\($0["replication"]!)" }
        #expect(runs.count == 12, "6 policies x 2 replications")
        for run in runs {
            let key = "\(run["policy"]!)/\(run["replication"]!)"
            let own = byRun[key] ?? []
            func count(_ column: String, _ want: Int) {
                #expect(Self.number(run, column) == Double(want), "runs.csv \(key) \(column): \(run[column] ?? "missing"), its tasks say \(want)")
            }
            func sum(_ column: String, _ want: Double) {
                let got = Self.number(run, column) ?? .nan
                #expect(Self.near(got, want), "runs.csv \(key) \(column): \(got), its tasks sum to \(want)")
            }
            count("tasks_submitted", own.count)
            for outcome in TaskOutcome.allCases { count("tasks_\(outcome.rawValue)", own.filter { $0["outcome"] == outcome.rawValue }.count) }
            count("tasks_unsuccessful", own.filter { $0["success"] == "false" }.count)
            for kind in TaskKind.allCases {
                let mine = own.filter { $0["kind"] == kind.rawValue }
                count("runs_\(kind.rawValue)", mine.filter { $0["started_s"] != "" }.count)
                sum("background_energy_\(kind.rawValue)_j", mine.reduce(0) { $0 + Self.number($1, "energy_j")! })
            }
            sum("background_energy_j", own.reduce(0) { $0 + Self.number($1, "energy_j")! })
            let components = run.columns { $0.hasPrefix("energy_") && $0.hasSuffix("_j") }
            #expect(components.count >= 9, "the energy components: \(components.sorted())")
            sum("phone_energy_j", components.reduce(0) { $0 + Self.number(run, $1)! })
            let p = { Self.number(run, $0)! }
            #expect(p("min_charge_pct") <= p("final_charge_pct") + 1e-9 && p("min_charge_pct") >= 0 && p("final_charge_pct") <= 100)
            #expect(Self.near(p("wifi_pct") + p("cellular_pct") + p("no_network_pct"), 100), "network shares of \(key) sum to 100")
        }
    }

    /// apps.csv: per run, each (app, identifier, kind) row's counts are its tasks'.
    func checkApps(_ apps: [CheckedRow], tasks: [CheckedRow]) {
        // A kind's numbered requests are one row, under their wildcard.
        func identifier(_ t: CheckedRow) -> String {
            guard let kind = TaskKind(rawValue: t["kind"]!), kind.isNumbered else { return t["identifier"]! }
            return t["identifier"]!.split(separator: ".").dropLast().joined(separator: ".") + ".*"
        }
        let byKey = Dictionary(grouping: tasks) { "\($0["policy"]!)/\($0["replication"]!)/\($0["app"]!)/\(identifier($0))/\($0["kind"]!)" }
        #expect(apps.count >= byKey.count, "a row for every app, identifier and kind with tasks")
        for row in apps {
            let key = "\(row["policy"]!)/\(row["replication"]!)/\(row["app"]!)/\(row["identifier"]!)/\(row["kind"]!)"
            let own = byKey[key] ?? []
            #expect(Self.number(row, "submitted") == Double(own.count), "apps.csv \(key) submitted")
            #expect(Self.number(row, "started") == Double(own.filter { $0["started_s"] != "" }.count), "apps.csv \(key) started")
            for outcome in TaskOutcome.allCases {
                #expect(Self.number(row, outcome.rawValue) == Double(own.filter { $0["outcome"] == outcome.rawValue }.count), "apps.csv \(key) \(outcome)")
            }
            let energy = own.reduce(0) { $0 + Self.number($1, "energy_j")! }
            #expect(Self.near(Self.number(row, "energy_j") ?? .nan, energy), "apps.csv \(key) energy_j")
        }
    }

    /// timeline.csv: per run, samples in time order at the interval, a charge within 0-100,
    /// flags that are flags.
    func checkTimeline(_ timeline: [CheckedRow]) {
        let byRun = Dictionary(grouping: timeline) { "\($0["policy"]!)/\($0["replication"]!)" }
        #expect(byRun.count == 12)
        for (key, samples) in byRun {
            let times = samples.map { Self.number($0, "time_s")! }
            #expect(times == times.sorted() && times.first == 0, "timeline.csv \(key): times in order from 0")
            #expect(zip(times, times.dropFirst()).allSatisfy { Self.near($1 - $0, 600) }, "timeline.csv \(key): every 10 minutes")
            for s in samples {
                let charge = Self.number(s, "charge_pct")!
                #expect((0...100).contains(charge), "timeline.csv \(key) charge \(charge)")
                for flag in ["phone_on", "charging", "screen_on", "in_call", "low_power_mode"] { #expect(["0", "1"].contains(s[flag]!)) }
                #expect(Self.number(s, "tasks_running")! >= 0)
            }
        }
    }

    /// events.csv: per run, in time order; its tasks are tasks.csv's, each started once if it
    /// started, each ended with its outcome.
    func checkEvents(_ events: [CheckedRow], tasks: [CheckedRow]) {
        let byRun = Dictionary(grouping: events) { "\($0["policy"]!)/\($0["replication"]!)" }
        let tasksByRun = Dictionary(grouping: tasks) { "\($0["policy"]!)/\($0["replication"]!)" }
        #expect(byRun.count == 12)
        for (key, log) in byRun {
            let times = log.map { Self.number($0, "time_s")! }
            #expect(times == times.sorted(), "events.csv \(key): in time order")
            let taskEvents = log.filter { $0["subject"] == "task" }
            let own = tasksByRun[key] ?? []
            #expect(Set(taskEvents.map { $0["task"]! }) == Set(own.map { $0["task"]! }), "events.csv \(key): the tasks of tasks.csv")
            #expect(taskEvents.filter { $0["event"] == "started" }.count == own.filter { $0["started_s"] != "" }.count, "events.csv \(key): starts")
            for outcome in TaskOutcome.allCases {
                #expect(
                    taskEvents.filter { $0["event"] == outcome.rawValue }.count == own.filter { $0["outcome"] == outcome.rawValue }.count,
                    "events.csv \(key): \(outcome) events")
            }
        }
    }

    /// summary.csv's run rows and comparisons.csv are runs.csv's: each mean is the mean of
    /// its column, each interval holds its mean, each paired difference is the mean of the
    /// replications' differences.
    func checkSummaries(_ summary: [CheckedRow], _ comparisons: [CheckedRow], runs: [CheckedRow]) {
        func values(_ policy: String, _ metric: String) -> [Double] {
            runs.filter { $0["policy"] == policy }.sorted { $0["replication"]! < $1["replication"]! }.compactMap { Self.number($0, metric) }
        }
        var checked = 0
        for row in summary where row["app"] == "" {
            let v = values(row["policy"]!, row["metric"]!)
            guard v.count == 2, v.allSatisfy(\.isFinite), let mean = Self.number(row, "mean") else { continue }
            checked += 1
            #expect(Self.near(mean, (v[0] + v[1]) / 2), "summary.csv \(row["policy"]!) \(row["metric"]!): mean")
            let (low, high, half) = (Self.number(row, "ci95_low")!, Self.number(row, "ci95_high")!, Self.number(row, "ci95_half_width")!)
            #expect(low <= mean + 1e-9 && mean <= high + 1e-9 && Self.near(high - low, 2 * half), "summary.csv \(row["policy"]!) \(row["metric"]!): interval")
        }
        #expect(checked > 500, "summary rows checked: \(checked)")
        for row in comparisons {
            let (a, b) = (values(row["policy"]!, row["metric"]!), values(row["baseline"]!, row["metric"]!))
            guard a.count == 2, b.count == 2, let d = Self.number(row, "difference_mean") else { continue }
            #expect(Self.near(d, (a[0] - b[0] + a[1] - b[1]) / 2), "comparisons.csv \(row["policy"]!) against \(row["baseline"]!) \(row["metric"]!)")
        }
    }
}
