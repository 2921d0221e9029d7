import Foundation
import Scheduling
import SimEngine
import SimRandom
import Testing

@testable import Experiments
@testable import Reports
@testable import ResultFiles
@testable import ScenarioFiles

@Suite("Report")
struct ReportTests {
    /// A finished run of the default scenario (2 days, 3 replications) in a temporary folder.
    static func study(tasks: Bool = true) async throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-report-\(UUID().uuidString)")
        let plan = StudyPlan(
            scenario: try Scenario.load(
                file: defaultScenario,
                overrides: [
                    Override(parsing: "replications=3")!, Override(parsing: "duration=2d")!,
                ]))
        _ = try await Experiment.perform(plan, options: StudyOptions(jobs: 2, record: RecordOptions(tasks: tasks)), to: dir)
        return dir
    }

    /// The table, the report's tables and its bars mark the best the same way: every policy
    /// tied for the best mean, none when all are equal or fewer than two are ranked, never a
    /// bound, never a mean that is not finite.
    @Test func bestMarksEveryTieAndNothingWithoutAChoice() {
        let best = ComparisonTable.bestIndices
        let all = [true, true, true, true]
        #expect(best([3, 1, 1, 2], all, .lower) == [1, 2], "both policies tied for the lowest")
        #expect(best([3, 1, 3, 2], all, .higher) == [0, 2], "both policies tied for the highest")
        #expect(best([2, 2, 2, 2], all, .lower) == [], "all equal: no best")
        #expect(best([1, 2, 3, 4], all, .neither) == [], "a metric neither better high nor low")
        #expect(best([0, 1, 2, 3], [false, true, true, true], .lower) == [1], "a bound is not ranked")
        #expect(best([.nan, 1, 2, .infinity], all, .lower) == [1], "a mean that is not finite is not ranked")
        #expect(best([5, 1, 2, 3], [true, false, false, false], .lower) == [], "one ranked policy: no best")
    }

    /// The mechanism tables (terminal and report) show a share that is not nothing but rounds
    /// to 0.0 as "<0.1", nothing as 0.0, and no share without a total.
    @Test func aMechanismsShareIsNeverShownAsNothingWhenItIsSomething() {
        let percent = ComparisonTable.percent
        #expect(percent(0, 100) == "0.0")
        #expect(percent(0.0004, 1) == "<0.1", "0.04%")
        #expect(percent(5e-12, 1) == "<0.1")
        #expect(percent(0.0005, 1) == "0.1", "0.05% rounds up to 0.1")
        #expect(percent(12.34, 100) == "12.3")
        #expect(percent(1, 1) == "100.0")
        #expect(percent(1, 0) == nil, "no background energy at all")
        #expect(percent(.nan, 1) == nil)
    }

    @Test func csvReaderHandlesQuotesCommasNewlinesAndEmptyFields() throws {
        let t = try CSVTable.parse("a,b,c\n1,\"x, \"\"y\"\"\",\n\"multi\nline\",,3\n", file: "t.csv")
        #expect(t.header == ["a", "b", "c"])
        #expect(t.rows == [["1", "x, \"y\"", ""], ["multi\nline", "", "3"]])
        #expect(throws: ReportError.self) { try CSVTable.parse("a,b\n1,2,3\n", file: "t.csv") }
        #expect(throws: ReportError.self) { try CSVTable.parse("a\n\"open\n", file: "t.csv") }
    }

    /// The report keeps only the tasks.csv columns it draws from: the same rows as the whole
    /// table's, projected, with blank lines skipped, a last line without its line break read,
    /// and a row of the wrong width still an error naming it.
    @Test func csvReaderKeepsOnlyTheColumnsAskedFor() throws {
        let text = "a,b,c,d\n1,\"x, \"\"y\"\"\",,4\n\n\"multi\nline\",,3,\"\"\n5,6,7,8"
        let whole = try CSVTable.parse(text, file: "t.csv")
        var bytes = Array(text.utf8)
        let some = try bytes.withUnsafeMutableBufferPointer {
            try CSVTable.parse(UnsafeBufferPointer($0), file: "t.csv", columns: ["d", "b", "zz"])
        }
        #expect(some.header == ["b", "d"])
        #expect(some.rows == whole.rows.map { [$0[1], $0[3]] })
        #expect(some.rows == [["x, \"y\"", "4"], ["", ""], ["6", "8"]])
        var bad = Array("a,b\n1,2\n1,2,3\n".utf8)
        let error = #expect(throws: ReportError.self) {
            try bad.withUnsafeMutableBufferPointer { try CSVTable.parse(UnsafeBufferPointer($0), file: "t.csv", columns: ["b"]) }
        }
        #expect(error?.description == "t.csv: row 3 has 3 fields, the header has 2")
    }

    @Test func paretoFrontKeepsExactlyTheUndominatedPoints() {
        // (energy, staleness): 0 and 2 trade off; 1 is beaten by 0 on both; 3 ties 0 on x, worse y.
        #expect(SVG.paretoFront([(1, 5), (2, 6), (3, 1), (1, 7), (.nan, 0)]) == [0, 2])
        #expect(SVG.paretoFront([(1, 1), (1, 1)]) == [0, 1], "equal points do not dominate each other")
    }

    @Test func durationTicksAreRoundDurations() {
        let ticks = SVG.Scale(lo: 0, hi: 7200, from: 0, to: 100, durations: true).ticks(5)
        #expect(ticks == [0, 1800, 3600, 5400, 7200])
        #expect(SVG.Scale(lo: 1, hi: 100_000, from: 0, to: 100, log: true, durations: true).ticks() == [1, 10, 60, 600, 3600, 21600, 86400])
    }

    @Test func aRunsIntervalsAreTheSummaryFilesIntervals() async throws {
        let dir = try await Self.study()
        defer { try? FileManager.default.removeItem(at: dir) }
        let set = try ResultSet.load(dir.path)
        let report = Report(set)
        let s = try CSVTable.read(dir.appendingPathComponent("summary.csv"))
        let (p, m, mean, half) = (s.column("policy")!, s.column("metric")!, s.column("mean")!, s.column("ci95_half_width")!)
        var checked = 0
        for row in s.rows where Report.columns.contains(where: { $0.metric == row[m] }) {
            let ci = report.interval(row[m], policy: row[p])
            guard let expected = Double(row[mean]) else { continue }
            #expect(abs(ci.mean - expected) <= 1e-9 * max(1, abs(expected)), "\(row[p]) \(row[m])")
            if let h = Double(row[half]) { #expect(abs(ci.halfWidth - h) <= 1e-9 * max(1, h), "\(row[p]) \(row[m]) half-width") }
            checked += 1
        }
        #expect(checked >= 6 * 8)
    }

    @Test func theTimelineIsTheRunItself() async throws {
        // Re-simulated, the trace's task runs in the window are tasks.csv's rows of that
        // policy and replication that overlap it: same apps, kinds, starts and ends.
        let dir = try await Self.study()
        defer { try? FileManager.default.removeItem(at: dir) }
        let set = try ResultSet.load(dir.path)
        let report = Report(set)
        let scenario = try #require(report.scenario)
        let window = SimInstant.after(.hours(6))..<SimInstant.after(.hours(30))
        let policy = scenario.policies[3]
        let trace = try Experiment.trace(scenario, policy: policy, replication: 1, window: window)
        let t = try CSVTable.read(dir.appendingPathComponent("tasks.csv"))
        let (p, r, st, en, app, kind) = (
            t.column("policy")!, t.column("replication")!, t.column("started_s")!,
            t.column("ended_s")!, t.column("app")!, t.column("kind")!
        )
        let names = scenario.setup.apps.map(\.name)
        let expected = t.rows.filter {
            $0[p] == policy.name && $0[r] == "1" && !$0[st].isEmpty
                && Double($0[st])! < 30 * 3600 && Double($0[en])! >= 6 * 3600
        }
        .map { "\($0[app]) \($0[kind]) \($0[st]) \($0[en])" }.sorted()
        let got = trace.runs.map { "\(names[$0.app]) \($0.kind.rawValue) \(($0.start - .start).seconds) \(($0.end - .start).seconds)" }.sorted()
        #expect(!expected.isEmpty)
        #expect(got == expected)
        #expect(trace.charge.allSatisfy { $0.1 >= 0 && $0.1 <= 1 })
        #expect(zip(trace.charge, trace.charge.dropFirst()).allSatisfy { $0.0 <= $1.0 }, "time runs forward")
    }

    /// A study run with `--precision` says in its report what was asked and whether it was
    /// reached; one without says nothing of it.
    @Test func theReportSaysWhetherThePrecisionGoalWasReached() async throws {
        let s = try Scenario.load(
            file: defaultScenario,
            overrides: [
                Override(parsing: "replications=2")!, Override(parsing: "duration=1d")!,
                Override(parsing: "policies=[eager, charge-only]")!,
            ])
        var sentences: [String] = []
        for (target, max) in [(0.9, 20), (0.001, 3)] {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-report-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: dir) }
            let goal = PrecisionGoal(target: target, metrics: ["phone_energy_j"], maxReplications: max)
            let outcome = try await Experiment.perform(
                StudyPlan(scenario: s),
                options: StudyOptions(
                    jobs: 2, record: RecordOptions(tasks: false),
                    precision: goal), to: dir)
            let results = try ResultSet.load(dir.path)
            let sentence = try #require(results.precision)
            let p = try #require(outcome.precision)
            let worst = String(format: "%.3f", p.worst)
            #expect(
                sentence
                    == (p.reached
                        ? "Precision goal \(target) (relative 95% half-width) on phone_energy_j: reached by every policy with \(outcome.replications) replications (worst \(worst))."
                        : "Precision goal \(target) (relative 95% half-width) on phone_energy_j: NOT reached within \(max) replications (worst \(worst)); intervals are wider than asked.")
            )
            let report = Report(results)
            #expect(report.markdown().contains(sentence + "\n"))
            #expect(try report.html().contains("<p class=\"meta\">\(sentence)</p>"))
            sentences.append(sentence)
        }
        #expect(sentences[0].contains(": reached by") && sentences[1].contains(": NOT reached within 3"), "\(sentences)")
        let plain = try await Self.study(tasks: false)
        defer { try? FileManager.default.removeItem(at: plain) }
        let results = try ResultSet.load(plain.path)
        #expect(results.precision == nil && !Report(results).markdown().contains("Precision goal"))
    }

    @Test func theHTMLIsSelfContainedAndHasEveryPart() async throws {
        let dir = try await Self.study()
        defer { try? FileManager.default.removeItem(at: dir) }
        let html = try Report(try ResultSet.load(dir.path)).html()
        for part in [
            "<h2>Comparison</h2>", "id=\"bars-0\"", "id=\"bars-1\"", "id=\"bars-2\"", "id=\"cdf\"", "id=\"pareto\"",
            "id=\"timeline-0\"", "id=\"timeline-5\"", "<h2>Scenario</h2>", "Content-Security-Policy",
        ] {
            #expect(html.contains(part), "the report lacks \(part)")
        }
        #expect(html.contains("★"), "a best value is marked")
        // Nothing that loads: no scripts, no external references (the SVG namespace is a name, not a request).
        let stripped = html.replacingOccurrences(of: "xmlns=\"http://www.w3.org/2000/svg\"", with: "")
        for bad in ["<script", "src=", "href=", "http://", "https://", "@import", "url("] {
            #expect(!stripped.contains(bad), "the report contains \(bad)")
        }
        // Without tasks.csv the report says so instead of drawing a CDF.
        let bare = try await Self.study(tasks: false)
        defer { try? FileManager.default.removeItem(at: bare) }
        let noTasks = try Report(try ResultSet.load(bare.path)).html()
        #expect(!noTasks.contains("id=\"cdf\"") && noTasks.contains("did not write tasks.csv"))
    }

    @Test func aSweepReportDrawsEachMetricAgainstEachParameter() async throws {
        let sweep = try SweepTests.write(
            """
            scenario: \(defaultScenario)
            set: {duration: 1d}
            replications: 2
            policies: [eager, ios]
            design: grid
            axes:
              - {path: settings.background_app_refresh, values: [off, wifi]}
              - {path: system.refresh_budget, from: 10s, to: 30s, steps: 3}
            """)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-report-sweep-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try await Experiment.perform(try StudyPlan(sweep: try Sweep.load(file: sweep)), options: StudyOptions(jobs: 2), to: dir)
        let set = try ResultSet.load(dir.path)
        let report = Report(set)
        let html = try report.html()
        for a in 0..<2 { for m in 0..<4 { #expect(html.contains("id=\"sweep-\(a)-\(m)\"")) } }
        #expect(report.parameterValues("system.refresh_budget").numbers != nil, "durations are numeric")
        #expect(report.parameterValues("settings.background_app_refresh").numbers == nil)
        // A line's point is the replications' means over the other axis at that value.
        let column = try #require(set.runs.column("settings.background_app_refresh"))
        let ci = report.interval("background_energy_j", policy: "eager") { $0[column] == "off" }
        #expect(ci.count == 2)
        let md = report.markdown()
        #expect(md.contains("against `settings.background_app_refresh`") && md.contains("| off |"))
        // Against each parameter, the paired differences from the baseline (eager) too.
        for a in 0..<2 { for m in 0..<Report.pairedMetrics.count { #expect(html.contains("id=\"sweep-paired-\(a)-\(m)\"")) } }
        #expect(md.contains("### Background energy (J): difference from eager against `system.refresh_budget`"))
    }

    /// A sweep of one parameter read point by point: at each value the report's paired
    /// difference is comparisons.csv's row of that point, mean and interval.
    @Test func aOneAxisSweepsPairedDifferenceAtEachValueIsComparisonsCSV() async throws {
        let sweep = try SweepTests.write(
            """
            scenario: \(defaultScenario)
            set: {duration: 1d}
            replications: 3
            policies: [eager, ios, android]
            design: grid
            axes:
              - {path: "policies[ios].threshold", values: [0.2, 0.4, 0.6]}
            """)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-report-pairs-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try await Experiment.perform(try StudyPlan(sweep: try Sweep.load(file: sweep)), options: StudyOptions(jobs: 2), to: dir)
        let set = try ResultSet.load(dir.path)
        let report = Report(set)
        let axis = try #require(report.axis(set.parameters[0]))
        #expect(report.axisName(set.parameters[0]) == "ios.threshold")
        let comparisons = try CSVTable.read(dir.appendingPathComponent("comparisons.csv"))
        let (p, m, v) = (comparisons.column("policy")!, comparisons.column("metric")!, comparisons.column(set.parameters[0])!)
        let (mean, low, high) = (comparisons.column("difference_mean")!, comparisons.column("ci95_low")!, comparisons.column("ci95_high")!)
        var checked = 0
        for position in axis.order.indices {
            let value = axis.labels[axis.order[position]]
            for policy in ["ios", "android"] {
                for metric in Report.pairedMetrics.map(\.metric) {
                    let ci = report.pairedAt(axis, position, metric, policy, "eager")
                    let row = try #require(comparisons.rows.first { $0[p] == policy && $0[m] == metric && $0[v] == value })
                    guard let expected = Double(row[mean]) else { continue }
                    #expect(abs(ci.mean - expected) <= 1e-9 * max(1, abs(expected)), "\(policy) \(metric) at \(value)")
                    if let l = Double(row[low]), let h = Double(row[high]) {
                        #expect(abs(ci.lower - l) <= 1e-6 * max(1, abs(l)) && abs(ci.upper - h) <= 1e-6 * max(1, abs(h)), "\(policy) \(metric) at \(value)")
                    }
                    checked += 1
                }
            }
        }
        #expect(checked >= 24)
    }

    /// `report --point N`: a sweep's point rebuilt from the manifest is the scenario that ran
    /// there, even where the sweep's `set` and the command line's `--set` reach inside a
    /// swept profile; and when the profiles have changed since, it is refused, not drawn.
    @Test func aSweepPointIsRebuiltExactlyOrRefused() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-report-point-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        // A private copy of models/, so a profile can be changed after the sweep ran.
        try FileManager.default.copyItem(at: repoRoot.appendingPathComponent("models"), to: root.appendingPathComponent("models"))
        let sweep = root.appendingPathComponent("models/sweeps/point.yaml").path
        try """
        scenario: ../scenarios/default.yaml
        set: {duration: 1d, charging.plug_in: "21:30"}
        replications: 1
        policies: [eager, ios]
        design: grid
        axes:
          - {path: charging, values: [nightly, top-up]}
          - {path: people.sessions_per_day, values: [20, 60]}
        """.write(toFile: sweep, atomically: true, encoding: .utf8)
        let overrides = [Override(parsing: "charging.unplug=06:15")!]
        let plan = try StudyPlan(sweep: try Sweep.load(file: sweep), overrides: overrides)
        let dir = root.appendingPathComponent("out")
        _ = try await Experiment.perform(plan, options: StudyOptions(jobs: 2, record: RecordOptions(tasks: false), overrides: overrides), to: dir)
        let set = try ResultSet.load(dir.path)
        for p in plan.points.indices {
            #expect(SHA256.hex(try set.scenario(atPoint: p).resolvedJSON) == plan.points[p].scenarioDigest, "point \(p)")
        }
        let topUp = try set.scenario(atPoint: 3).resolvedJSON
        #expect(topUp.contains("\"top_ups_per_day\":\"1.5\"") && topUp.contains("\"plug_in\":\"21:30\"") && topUp.contains("\"unplug\":\"06:15\""))
        let html = try Report(set, options: ReportOptions(point: 3)).html()
        #expect(html.contains("at point 3 (charging=top-up, people.sessions_per_day=60)"))
        #expect(html.contains("id=\"timeline-1\""))
        let far = #expect(throws: ReportError.self) { try set.scenario(atPoint: 4) }
        #expect(far?.description == "the sweep has points 0 to 3 (runs.csv), not 4")
        // The top-up habit changed after the sweep: point 3 would not be the phone that ran.
        let habit = root.appendingPathComponent("models/charging/top-up.yaml")
        let text = try String(contentsOf: habit, encoding: .utf8)
        try text.replacingOccurrences(of: "top_ups_per_day: 1.5", with: "top_ups_per_day: 3").write(to: habit, atomically: true, encoding: .utf8)
        let changed = #expect(throws: ReportError.self) { try set.scenario(atPoint: 3) }
        #expect(changed?.description.contains("cannot be rebuilt exactly from the manifest") == true, "\(String(describing: changed))")
        #expect(Report(set, options: ReportOptions(point: 3)).scenarioProblem != nil)
        #expect(try set.scenario(atPoint: 0).resolvedJSON == plan.points[0].scenario.resolvedJSON, "point 0 is the manifest's own")
    }

    @Test func notAResultsFolderIsAClearError() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-empty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let missing = #expect(throws: ReportError.self) { try ResultSet.load(dir.path + "/nope") }
        #expect(missing?.description.contains("no such results folder") == true)
        let noManifest = #expect(throws: ReportError.self) { try ResultSet.load(dir.path) }
        #expect(noManifest?.description.contains("manifest.json: missing") == true)
        try #"{"kind": "shard", "policies": ["eager"], "replications": 1, "scenario": "x"}"#
            .write(to: dir.appendingPathComponent("manifest.json"), atomically: true, encoding: .utf8)
        let shard = #expect(throws: ReportError.self) { try ResultSet.load(dir.path) }
        #expect(shard?.description.contains("merge shards first") == true)
    }
}

@Suite("Bundled datasets")
struct DatasetTests {
    /// The datasets in notebooks-data/ are kept in git; when the schema moves on, `make
    /// datasets` must be run, or analysts would load files that no longer match the README.
    @Test(arguments: ["default", "refresh-setting", "charging-habit"])
    func bundledDatasetsAreCurrentAndWhole(name: String) throws {
        let folder = repoRoot.appendingPathComponent("notebooks-data/\(name)")
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("manifest.json"))) as? [String: Any])
        #expect(manifest["schema_version"] as? Int == Manifest.schemaVersion, "run make datasets")
        let set = try ResultSet.load(folder.path)
        // Every file the manifest lists that git keeps is there with its digest.
        for file in try #require(manifest["files"] as? [[String: Any]]) {
            let fileName = try #require(file["name"] as? String)
            guard fileName != "tasks.csv" else { continue }
            let data = try Data(contentsOf: folder.appendingPathComponent(fileName))
            var digest = SHA256()
            digest.update(data)
            #expect(digest.hexDigest() == file["sha256"] as? String, "\(name)/\(fileName) differs from its manifest")
        }
        #expect(set.runs.rows.count == set.policies.count * set.replications * max(1, Report(set).pointCount))
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("report.html").path))
    }
}
