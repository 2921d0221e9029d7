import Foundation
import Scheduling
import SimRandom
import Testing

@testable import Experiments
@testable import ScenarioFiles

/// forecast.csv and people.csv read back, every column recomputed: people.csv's from each
/// person's tallies, forecast.csv's statistics of runs and completions from people.csv's rows,
/// those of every other metric from the people's values, each variant's paired difference
/// from its people and the base's. A column no check reads fails by name.
@Suite("Forecast columns")
struct ForecastColumnTests {
    @Test func everyColumnOfForecastAndPeopleIsRecomputed() async throws {
        let app = repoRoot.appendingPathComponent("Examples/forecast/news-app.yaml").path
        let fleet = repoRoot.appendingPathComponent("models/scenarios/fleet.yaml").path
        let setup = try ForecastSetup.load(
            app: app, base: fleet, person: nil, policies: ["ios", "android"], replications: 8, duration: "2d", seed: "7", more: [])
        let forecast = try await Forecast.run(setup, sweepPeople: 4, ranges: nil, jobs: 2)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-forecast-columns-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try forecast.csv(forecast.rows()).write(to: dir.appendingPathComponent("forecast.csv"), atomically: true, encoding: .utf8)
        try forecast.peopleCSV().write(to: dir.appendingPathComponent("people.csv"), atomically: true, encoding: .utf8)
        let reads = ColumnReads()
        let (peopleColumns, people) = try reads.rows(dir, "people.csv")
        let (forecastColumns, rows) = try reads.rows(dir, "forecast.csv")
        reads.checking("people.csv") { checkPeople(people, forecast) }
        reads.checking("forecast.csv") { checkForecast(rows, people: people, forecast) }
        for (file, header) in [("people.csv", peopleColumns), ("forecast.csv", forecastColumns)] {
            let unread = reads.unread(file, header: header)
            #expect(unread.isEmpty, "\(file): no check reads \(unread.count) columns: \(unread)")
        }
    }

    /// A row per base person and identifier, in order: the person's traits, runs and
    /// completions a day and the longest cause, from the person's tallies.
    func checkPeople(_ people: [CheckedRow], _ forecast: Forecast) {
        var k = 0
        for v in forecast.variants where v.name == "base" {
            for p in v.people {
                for (id, _) in forecast.identifiers {
                    guard k < people.count else { break }
                    let row = people[k], t = p.tasks[id]
                    k += 1
                    let what = "people.csv \(v.policy)/\(p.replication)/\(id)"
                    #expect(row["policy"] == v.policy && row["replication"] == "\(p.replication)" && row["identifier"] == id, "\(what): in order")
                    #expect(forecast.traitNames.map { row[$0]! } == p.traits, "\(what): the person's traits")
                    #expect(row.number("runs_per_day") == Double(t?.started ?? 0) / p.days, "\(what): runs_per_day")
                    #expect(row.number("completed_per_day") == Double(t?.count(.completed) ?? 0) / p.days, "\(what): completed_per_day")
                    let top = t.flatMap { Forecast.causes($0).first }
                    #expect(row["top_cause"] == (top?.cause ?? ""), "\(what): top_cause")
                    #expect(row.number("top_cause_h_per_day") == top.map { $0.seconds / 3600 / p.days }, "\(what): top_cause_h_per_day")
                }
            }
        }
        #expect(k == people.count && k > 20, "people.csv: \(people.count) rows, \(k) base people and identifiers")
    }

    /// Each row's count, mean, median, p10, p90 and share of zeros; runs and completions from
    /// people.csv's rows, every other metric from the people's values; a variant's paired
    /// difference from the same people under the base.
    func checkForecast(_ rows: [CheckedRow], people: [CheckedRow], _ forecast: Forecast) {
        let metrics = Dictionary(uniqueKeysWithValues: forecast.metrics().map { ($0.name, $0) })
        var fromPeople = 0
        for row in rows {
            let (policy, variant, id) = (row["policy"]!, row["variant"]!, row["identifier"]!)
            let metric = row["metric"]!, what = "forecast.csv \(policy)/\(variant)/\(id)/\(metric)"
            guard let v = forecast.variants.first(where: { $0.policy == policy && $0.name == variant }),
                let m = metrics[metric], let kind = forecast.identifiers.first(where: { $0.identifier == id })?.kind
            else {
                Issue.record("\(what): no such variant, metric or identifier")
                continue
            }
            #expect(row["kind"] == kind.rawValue, "\(what): kind")
            var values = v.people.map { m.value($0, $0.tasks[id]) }
            if variant == "base", ["runs_per_day", "completed_per_day"].contains(metric) {
                values = people.filter { $0.values["policy"] == policy && $0.values["identifier"] == id }.map { Double($0.values[metric]!) }
                fromPeople += 1
            }
            let present = values.compactMap { $0 }, sorted = present.sorted()
            #expect(row.number("people") == Double(present.count), "\(what): people")
            #expect(row.number("mean").map { Self.near($0, present.reduce(0, +) / Double(present.count)) } == true, "\(what): mean")
            for (column, p) in [("median", 0.5), ("p10", 0.1), ("p90", 0.9)] {
                #expect(row.number(column).map { Self.near($0, Statistics.quantile(sorted: sorted, p)) } == true, "\(what): \(column)")
            }
            #expect(row.number("zero_pct") == 100 * Double(values.count { $0 == nil || $0 == 0 }) / Double(values.count), "\(what): zero_pct")
            let base = forecast.variants.first { $0.policy == policy && $0.name == "base" }!
            let diffs = v.people.indices.compactMap { k -> Double? in
                guard variant != "base", let a = m.value(v.people[k], v.people[k].tasks[id]),
                    let b = m.value(base.people[k], base.people[k].tasks[id])
                else { return nil }
                return a - b
            }
            if diffs.count >= 2 {
                let mean = diffs.reduce(0, +) / Double(diffs.count), ci = ConfidenceInterval(diffs)
                #expect(row.number("difference_mean").map { Self.near($0, mean) } == true, "\(what): difference_mean")
                #expect(row.number("difference_ci95_low").map { Self.near($0, ci.mean - ci.halfWidth) } == true, "\(what): difference_ci95_low")
                #expect(row.number("difference_ci95_high").map { Self.near($0, ci.mean + ci.halfWidth) } == true, "\(what): difference_ci95_high")
            } else {
                #expect(row["difference_mean"] == "" && row["difference_ci95_low"] == "" && row["difference_ci95_high"] == "", "\(what): no difference")
            }
        }
        #expect(fromPeople == 2 * 2 * forecast.identifiers.count, "forecast.csv: runs and completions checked from people.csv")
    }

    static func near(_ a: Double, _ b: Double) -> Bool { abs(a - b) <= 1e-9 * max(1, abs(a), abs(b)) || (a.isNaN && b.isNaN) }
}
