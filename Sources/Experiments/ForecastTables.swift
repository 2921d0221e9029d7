import Foundation
import ResultFiles
import ScenarioFiles
import Scheduling
import SimEngine
import SimRandom

extension Forecast {
    /// One number per person for one identifier; `nil` where it has no value (no runs to
    /// take a mean over).
    package struct Metric: Sendable {
        /// Its name in forecast.csv's `metric` column.
        package let name: String
        let value: @Sendable (Person, AppTaskTally?) -> Double?
    }

    /// One line of `forecast.csv`: a metric of one identifier under one policy and variant,
    /// across people, and for a variant its paired difference from the base.
    package struct Row: Sendable {
        /// The policy, the variant (`base` or a change of the sweep) and the task identifier.
        package var policy, variant, identifier: String
        /// The identifier's kind.
        package var kind: TaskKind
        /// The metric's name.
        package var metric: String
        /// People with a value, and their mean, median, 10th and 90th percentiles.
        package var people: Int
        package var mean, median, p10, p90: Double
        /// Share of all people whose value is 0 (or who have none).
        package var zeroPct: Double
        /// For a variant: the paired difference from the base over the people both ran.
        package var difference: ConfidenceInterval?
    }

    /// What held a request, one cause per gate (but `policy`) and per policy rule (or
    /// `policy` when the policy named none), with seconds held.
    package static func causes(_ t: AppTaskTally) -> [(cause: String, seconds: Double)] { causes(t.held, rules: t.rulesByTime) }

    /// What held one request, the same way: its gates and its policy's rules.
    package static func causes(_ r: TaskRecord) -> [(cause: String, seconds: Double)] { causes(r.held, rules: r.policyHolds) }

    static func causes(_ held: HoldTimes, rules: [(reason: String, seconds: Double)]) -> [(cause: String, seconds: Double)] {
        var out: [(String, Double)] = []
        for reason in HoldReason.allCases where reason != .policy && held[reason] > 0 { out.append((reason.token, held[reason])) }
        if rules.isEmpty, held[.policy] > 0 { out.append(("policy", held[.policy])) }
        out += rules.map { ($0.reason, $0.seconds) }
        return out.sorted { $0.1 > $1.1 }
    }

    /// The metrics every identifier gets, then one per cause of holds seen and one per hour.
    package func metrics() -> [Metric] {
        func perDay(_ f: @escaping @Sendable (AppTaskTally) -> Int) -> @Sendable (Person, AppTaskTally?) -> Double? {
            { p, t in Double(t.map(f) ?? 0) / p.days }
        }
        func ofRuns(_ f: @escaping @Sendable (AppTaskTally) -> Double) -> @Sendable (Person, AppTaskTally?) -> Double? {
            { _, t in t.flatMap { $0.started > 0 ? f($0) : nil } }
        }
        var out: [Metric] = [
            Metric(name: "runs_per_day", value: perDay(\.started)),
            Metric(name: "completed_per_day", value: perDay { $0.count(.completed) }),
            Metric(name: "expired_per_day", value: perDay { $0.count(.expired) + $0.count(.killed) }),
        ]
        for (k, e) in ExpirationReason.allCases.enumerated() {
            out.append(Metric(name: "expirations_\(e.rawValue)_per_day", value: perDay { $0.expirations[k] }))
        }
        out += [
            Metric(name: "killed_per_day", value: perDay { $0.count(.killed) }),
            Metric(name: "rejected_per_day", value: perDay { $0.count(.rejected) }),
            Metric(name: "energy_per_run_j", value: ofRuns { $0.energyJ / Double($0.started) }),
            Metric(name: "energy_per_day_j", value: { p, t in (t?.energyJ ?? 0) / p.days }),
            Metric(name: "charger_energy_per_day_j", value: { p, t in (t?.chargerEnergyJ ?? 0) / p.days }),
            Metric(name: "battery_pct_per_day", value: { p, t in 100 * ((t?.energyJ ?? 0) - (t?.chargerEnergyJ ?? 0)) / p.days / p.batteryJ }),
            Metric(name: "wait_mean_min", value: ofRuns { $0.latency.seconds / Double($0.started) / 60 }),
            Metric(name: "run_time_mean_s", value: ofRuns { $0.runTime.seconds / Double($0.started) }),
            Metric(name: "grant_used_pct", value: ofRuns { $0.grant > .zero ? 100 * $0.runTime.seconds / $0.grant.seconds : 0 }),
            Metric(
                name: "gap_median_h",
                value: { _, t in
                    t?.gaps.summary().map { $0.quantile(0.5) / 3_600 }
                }),
            Metric(name: "runs_charging_pct", value: ofRuns { 100 * Double($0.startedCharging) / Double($0.started) }),
            Metric(name: "runs_wifi_pct", value: ofRuns { 100 * Double($0.startedOnWifi) / Double($0.started) }),
            Metric(name: "runs_cellular_pct", value: ofRuns { 100 * Double($0.startedOnCellular) / Double($0.started) }),
            Metric(name: "app_launches_per_day", value: { p, _ in Double(p.launches) / p.days }),
            Metric(
                name: "staleness_mean_min",
                value: { p, t in
                    t?.kind == .refresh && p.launches > 0 ? p.stalenessSumS / Double(p.launches) / 60 : nil
                }),
            Metric(
                name: "fresh_pct",
                value: { p, t in
                    t?.kind == .refresh && p.launches > 0 ? 100 * Double(p.freshLaunches) / Double(p.launches) : nil
                }),
        ]
        var seen: [String] = []
        for v in variants where v.name == "base" {
            for person in v.people {
                // In the identifiers' order: a dictionary's order differs from process to process.
                for (id, _) in identifiers {
                    guard let t = person.tasks[id] else { continue }
                    for c in Self.causes(t) where !seen.contains(c.cause) { seen.append(c.cause) }
                }
            }
        }
        for cause in seen {
            out.append(
                Metric(name: "held_h_per_day:\(cause)") { p, t in
                    (t.map { Self.causes($0).first { $0.cause == cause }?.seconds ?? 0 } ?? 0) / 3600 / p.days
                })
        }
        for h in 0..<24 {
            out.append(Metric(name: "runs_per_day_at:\(h < 10 ? "0" : "")\(h)") { p, t in Double(t?.startsByHour[h] ?? 0) / p.days })
        }
        return out
    }

    /// Every row of `forecast.csv`: per policy, variant, identifier and metric.
    package func rows() -> [Row] {
        let metrics = metrics()
        var out: [Row] = []
        for v in variants {
            let base = variants.first { $0.name == "base" && $0.policy == v.policy }!
            for (id, kind) in identifiers {
                for m in metrics {
                    let values = v.people.map { m.value($0, $0.tasks[id]) }
                    let present = values.compactMap { $0 }
                    guard !present.isEmpty else { continue }
                    let sorted = present.sorted()
                    var row = Row(
                        policy: v.policy, variant: v.name, identifier: id, kind: kind, metric: m.name, people: present.count,
                        mean: Statistics.mean(present), median: Statistics.quantile(sorted: sorted, 0.5),
                        p10: Statistics.quantile(sorted: sorted, 0.1), p90: Statistics.quantile(sorted: sorted, 0.9),
                        zeroPct: 100 * Double(values.count { $0 == nil || $0 == 0 }) / Double(values.count))
                    if v.name != "base" {
                        var diffs: [Double] = []
                        for (k, person) in v.people.enumerated() {
                            if let a = m.value(person, person.tasks[id]), let b = m.value(base.people[k], base.people[k].tasks[id]) { diffs.append(a - b) }
                        }
                        if diffs.count >= 2 { row.difference = ConfidenceInterval(diffs) }
                    }
                    out.append(row)
                }
            }
        }
        // The answers over the assumptions' ranges: variant `ranges`, the mean at the defaults
        // and the percentiles over the design's points; each top assumption's share in percent.
        for r in ranges {
            let kind = identifiers.first { $0.identifier == r.identifier }?.kind ?? .refresh
            out.append(
                Row(
                    policy: r.policy, variant: "ranges", identifier: r.identifier, kind: kind, metric: r.metric, people: r.people,
                    mean: r.atDefaults, median: r.median, p10: r.p10, p90: r.p90, zeroPct: .nan))
            for (a, share) in r.shares {
                out.append(
                    Row(
                        policy: r.policy, variant: "ranges", identifier: r.identifier, kind: kind, metric: "\(r.metric):share:\(a)",
                        people: r.people, mean: 100 * share, median: .nan, p10: .nan, p90: .nan, zeroPct: .nan))
            }
        }
        return out
    }

    /// `forecast.csv`'s columns.
    package static let header = [
        "policy", "variant", "identifier", "kind", "metric", "people", "mean", "median", "p10", "p90", "zero_pct",
        "difference_mean", "difference_ci95_low", "difference_ci95_high",
    ]

    /// `forecast.csv`.
    package func csv(_ rows: [Row]) -> String {
        let out = CSVBytes(capacity: 1 << 16)
        for name in Self.header { out.field(name) }
        out.endRecord()
        for r in rows {
            for f in [r.policy, r.variant, r.identifier, r.kind.rawValue, r.metric] { out.field(f) }
            out.integer(r.people)
            for x in [r.mean, r.median, r.p10, r.p90, r.zeroPct] { out.number(x) }
            if let d = r.difference {
                for x in [d.mean, d.lower, d.upper] { out.number(x) }
            } else {
                for _ in 0..<3 { out.empty() }
            }
            out.endRecord()
        }
        return out.text
    }

    /// `people.csv`'s columns after the traits.
    package static let peopleColumns = ["identifier", "runs_per_day", "completed_per_day", "top_cause", "top_cause_h_per_day"]

    /// `people.csv`: the base's people, per policy and identifier: their drawn values, their
    /// runs, and what held the identifier's requests longest.
    package func peopleCSV() -> String {
        let out = CSVBytes(capacity: 1 << 16)
        for name in ["policy", "replication"] + traitNames + Self.peopleColumns { out.field(name) }
        out.endRecord()
        for v in variants where v.name == "base" {
            for p in v.people {
                for (id, _) in identifiers {
                    let t = p.tasks[id]
                    out.field(v.policy)
                    out.integer(p.replication)
                    for trait in p.traits { out.field(trait) }
                    out.field(id)
                    out.number(Double(t?.started ?? 0) / p.days)
                    out.number(Double(t?.count(.completed) ?? 0) / p.days)
                    if let top = t.flatMap({ Self.causes($0).first }) {
                        out.field(top.cause)
                        out.number(top.seconds / 3600 / p.days)
                    } else {
                        out.empty()
                        out.empty()
                    }
                    out.endRecord()
                }
            }
        }
        return out.text
    }
}

extension Forecast {
    /// The forecast's `manifest.json`: what made the folder (bgsim's version, the command, the
    /// app profile and the scenario with their SHA-256, people, policies and seed) and its files
    /// with their sizes and SHA-256, written last, as a study's is.
    package func manifest(commandLine: [String], sweepPeople: Int, files: [(name: String, bytes: Int, sha256: String)]) -> String {
        let s = setup.scenario
        let appDigest = SHA256.file(at: setup.appFile)?.hex ?? ""
        let pairs: [(String, String)] = [
            ("schema_version", String(Manifest.schemaVersion)),
            ("tool", JSON.string("bgsim")),
            ("tool_version", JSON.string(Manifest.toolVersion)),
            ("kind", JSON.string("forecast")),
            ("command_line", JSON.array(commandLine.map(JSON.string))),
            ("app", JSON.string(setup.appParameters.name)),
            ("app_file", JSON.string(setup.appFile)),
            ("app_sha256", JSON.string(appDigest)),
            ("scenario_file", JSON.string(setup.baseFile)),
            ("scenario_sha256", JSON.string(SHA256.hex(s.resolvedJSON))),
            ("fleet", JSON.array(s.fleet.map { JSON.string($0.path.description) })),
            ("seed", String(s.seed)),
            ("people", String(s.replications)),
            ("sweep_people", String(sweepPeople)),
            ("variants", JSON.array(variants.filter { $0.policy == variants[0].policy }.map { JSON.string($0.name) })),
            ("policies", JSON.array(s.policies.map { JSON.string($0.name) })),
            ("program", Program.current.json(s.policies, indent: 1)),
            ("files", Manifest.fileList(files, indent: 1)),
            ("resolved_scenario", s.resolvedJSON),
        ]
        return JSON.object(pairs) + "\n"
    }
}
