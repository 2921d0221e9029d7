import Foundation
import Scheduling
import SimEngine
import SimRandom
import Testing

@testable import Experiments
@testable import Reports
@testable import ResultFiles
@testable import ScenarioFiles

/// What the report's charts promise: colours by name, one unit per axis, paired differences
/// that are comparisons.csv's, a typical day, and waits that are the run's own.
@Suite("Report charts")
struct ReportChartTests {
    @Test func aPolicyKeepsItsColourWhateverElseIsInTheStudy() {
        let a = Palette.colors(["eager", "ios", "quiet-hours"])
        let b = Palette.colors(["quiet-hours", "android", "ios"])
        #expect(a[1] == "#0072B2" && b[2] == "#0072B2", "ios is fixed")
        #expect(a[2] == b[0], "a user's policy hashes to the same colour in both")
        #expect(Palette.fnv1a("quiet-hours") == 0xeb65_7a49_ff85_61ad, "FNV-1a, as the Python reader computes it")
        #expect(a[2] == Palette.free[Int(0xeb65_7a49_ff85_61ad % UInt64(Palette.free.count))])
        // Two names that hash to one colour in one study get two colours.
        let names = (0..<40).map { "p\($0)" }
        let colors = Palette.colors(Array(names.prefix(Palette.free.count)))
        #expect(Set(colors).count == Palette.free.count, "\(colors)")
        #expect(Set(Palette.fixed.values).isDisjoint(with: Palette.free), "a hashed policy never looks like a built-in one")
    }

    @Test func aLinearDurationAxisHasOneUnit() {
        let hours = SVG.durationTicks([0, 3600, 7200])
        #expect([0, 3600, 7200].map(hours) == ["0 h", "1 h", "2 h"])
        let minutes = SVG.durationTicks([0, 1800, 3600])
        #expect([0, 1800, 3600].map(minutes) == ["0 min", "30 min", "60 min"], "never \"0 s, 30.0 min, 60.0 min\"")
        let halves = SVG.durationTicks([-5400, 0, 5400, 10800])
        #expect([-5400, 0, 5400, 10800].map(halves) == ["-1.5 h", "0.0 h", "1.5 h", "3.0 h"])
        let numbers = SVG.numberTicks([-10, -7.5, -5, -2.5, 0])
        #expect([-10, -7.5, -5, -2.5, 0].map(numbers) == ["-10.0", "-7.5", "-5.0", "-2.5", "0.0"])
        #expect([-750, -500, -250, 0].map(SVG.numberTicks([-750, -500, -250, 0])) == ["-750", "-500", "-250", "0"])
        let log = SVG.unitTicks(SVG.Scale(lo: 1, hi: 86_400, from: 0, to: 1, log: true, durations: true), [])!
        #expect([1, 10, 60, 600, 3600, 21600, 86400].map(log) == ["1 s", "10 s", "1 min", "10 min", "1 h", "6 h", "1 d"])
    }

    /// The report's paired chart and table show comparisons.csv's intervals: the same
    /// differences, made the same way.
    @Test func thePairedChartIsComparisonsCSV() async throws {
        let dir = try await ReportTests.study(tasks: false)
        defer { try? FileManager.default.removeItem(at: dir) }
        let report = Report(try ResultSet.load(dir.path))
        let c = try CSVTable.read(dir.appendingPathComponent("comparisons.csv"))
        let (p, b, m, low, high, mean) = (
            c.column("policy")!, c.column("baseline")!, c.column("metric")!, c.column("ci95_low")!, c.column("ci95_high")!,
            c.column("difference_mean")!
        )
        var checked = 0
        for row in c.rows where Report.pairedMetrics.contains(where: { $0.metric == row[m] }) {
            let ci = report.paired(row[m], policy: row[p], baseline: row[b])
            for (got, text) in [(ci.mean, row[mean]), (ci.lower, row[low]), (ci.upper, row[high])] {
                guard let want = Double(text) else { continue }
                #expect(abs(got - want) <= 1e-9 * max(1, abs(want)), "\(row[p]) \(row[m])")
            }
            checked += 1
        }
        #expect(checked == 5 * Report.pairedMetrics.count)
        let html = try report.html()
        #expect(html.contains("id=\"paired-0\"") && html.contains("difference from eager"))
        #expect(report.markdown().contains("### Against eager, pair by pair"))
    }

    /// Day 0 starts at midnight unplugged; the typical day is another, with the phone on the
    /// charger at night.
    @Test func theTimelineShowsATypicalDayWithAChargingNight() async throws {
        let dir = try await ReportTests.study(tasks: false)
        defer { try? FileManager.default.removeItem(at: dir) }
        let report = Report(try ResultSet.load(dir.path))
        let scenario = try #require(report.scenario)
        let (day, why) = try report.typicalDay(scenario, days: 2)
        #expect(day == 1 && why.contains("night is on the charger"), "\(day) \(why)")
        let html = try report.html()
        #expect(html.contains("day 1 of days 0 to 1") && html.contains("chosen as typical"))
        let chosen = Report(try ResultSet.load(dir.path), options: ReportOptions(day: 0))
        #expect(try chosen.html().contains("day 0 of days 0 to 1") && !(try chosen.html().contains("chosen as typical")))
    }

    /// The timeline's waits are the run's holds: per gate, their total over a replication is
    /// tasks.csv's `held_*_s`, and all of them together its held columns' total (a policy's
    /// rule may share a gate's name: ios's `device_in_use`).
    @Test func theTimelinesWaitsAreTheHoldsOfTasksCSV() async throws {
        let dir = try await ReportTests.study()
        defer { try? FileManager.default.removeItem(at: dir) }
        let report = Report(try ResultSet.load(dir.path))
        let scenario = try #require(report.scenario)
        let t = try CSVTable.read(dir.appendingPathComponent("tasks.csv"))
        for policy in [scenario.policies[3], scenario.policies[4]] {
            let trace = try Experiment.trace(scenario, policy: policy, replication: 1, window: .start..<SimInstant.after(.days(2)))
            var got: [String: Double] = [:]
            for w in trace.waits where w.cause != "earliest_begin" { got[w.cause, default: 0] += (w.to - w.from).seconds }
            let rows = t.rows.filter { $0[t.column("policy")!] == policy.name && $0[t.column("replication")!] == "1" }
            let rules = Set(rows.flatMap { $0[t.column("policy_reasons")!].split(separator: ";").map { String($0.split(separator: "=")[0]) } })
            let tolerance = 1e-3 * Double(rows.count) + 1e-6
            var total = 0.0
            for reason in HoldReason.allCases {
                let want = rows.reduce(0.0) { $0 + (Double($1[t.column("held_\(reason.token)_s")!]) ?? 0) }
                total += want
                guard reason != .policy, !rules.contains(reason.token) else { continue }
                #expect(abs((got[reason.token] ?? 0) - want) <= tolerance, "\(policy.name) \(reason.token): \(got[reason.token] ?? 0) against \(want)")
            }
            #expect(abs(got.values.reduce(0, +) - total) <= tolerance, "\(policy.name): every wait")
            #expect(got.keys.contains { !HoldReason.allCases.map(\.token).contains($0) }, "\(policy.name)'s own rules are drawn")
            #expect(trace.waits.allSatisfy { $0.from < $0.to })
        }
    }

    /// A variant's long name (its overrides) is cut in the heading and given whole below it;
    /// the terminal table stays aligned with a label longer than any policy's name.
    @Test func aLongNameIsCutInTheHeadingAndTheTableStaysAligned() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-title-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let long = "default_duration-2h_policies-eager-name-ios-label-ios-with-a-rather-long-label"
        let scenario = try Scenario.load(
            file: defaultScenario,
            overrides: [
                "replications=2", "duration=2h", "name=\(long)", "policies=[eager, {name: ios, label: ios-with-a-rather-long-label}]",
            ].map { Override(parsing: $0)! })
        let outcome = try await Experiment.perform(StudyPlan(scenario: scenario), options: StudyOptions(jobs: 2), to: dir)
        let report = Report(try ResultSet.load(dir.path))
        #expect(report.title.count == 47 && report.title.hasSuffix("…") && long.hasPrefix(report.title.dropLast()))
        let html = try report.html()
        #expect(html.contains("<h1>\(report.title): policy comparison</h1>") && html.contains("study \(long)"))
        #expect(report.markdown().hasPrefix("# \(report.title): policy comparison\n\nStudy `\(long)`."))
        let table = ComparisonTable.render(
            scenario, PolicySummary.summarise(outcome.runs[0], policies: scenario.policies), replications: 2
        ).split(separator: "\n").dropFirst().prefix(3)
        #expect(Set(table.map(\.count)).count == 1, "rows of different widths:\n\(table.joined(separator: "\n"))")
    }

    /// A day's timeline drawn from a run cut a week past it is the day a whole run draws, under
    /// every policy, the oracle (which sees the future) included. (Cut at the day's end
    /// instead, eager's lane already differs: the test fails.)
    @Test func aTimelineCutAWeekPastItsDayIsTheWholeRunsDay() throws {
        let scenario = try Scenario.load(file: defaultScenario, overrides: [Override(parsing: "duration=21d")!])
        let from = SimInstant.after(.days(5)), to = SimInstant.after(.days(6))
        let apps = scenario.setup.apps.map(\.name)
        for policy in scenario.policies {
            let cut = try Experiment.trace(scenario, policy: policy, replication: 1, window: from..<to)
            let whole = try Experiment.trace(scenario, policy: policy, replication: 1, window: from..<to, lookahead: .days(10_000))
            let a = Timeline.svg(id: "t", policy: policy.name, color: "#000", trace: cut, apps: apps, from: from, to: to)
            let b = Timeline.svg(id: "t", policy: policy.name, color: "#000", trace: whole, apps: apps, from: from, to: to)
            #expect(a == b, "\(policy.name)")
            #expect(!cut.runs.isEmpty)
        }
    }
}
