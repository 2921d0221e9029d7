import Foundation
import ScenarioFiles
import Scheduling
import SimEngine
import SimRandom

extension Forecast {
    /// The policy whose plausible parameters the ranges vary: iOS's own, the one a forecast
    /// answers for.
    static let rangedPolicy = "ios"

    /// How a forecast's answers are varied over the assumptions (docs/forecast.md): Morris
    /// screening of every assumption of the policy, then Sobol' indices of the `top` that
    /// matter most, each point run on the same first `people` people (common random numbers).
    package struct RangeDesign: Sendable, Equatable {
        /// People each point runs on: the fleet's first, the same at every point.
        package var people = 20
        /// Morris trajectories: trajectories × (assumptions + 1) points.
        package var trajectories = 6
        /// Base samples of Saltelli's design over the top assumptions: samples × (top + 2) points.
        package var samples = 64
        /// Assumptions Morris screening hands on to the Sobol' indices, at least: each task's
        /// two most influential are handed on too (at most 6 in all).
        package var top = 3

        /// The defaults: about 450 points of 20 people for `ios`'s 19 assumptions, about a
        /// minute of CPU for a week of the example app (docs/performance.md).
        package init() {}
    }

    /// One answer (a metric of one identifier under one policy) over the assumptions' ranges:
    /// its value at the defaults, the 10th to 90th percentile over the design's points, and
    /// the assumptions it depends on most, each with its share (its total Sobol' index over
    /// the sum of the top assumptions').
    package struct AssumptionRange: Sendable {
        /// The policy, identifier and metric (`runs_per_day`, `energy_per_day_j`, `none_pct`).
        package var policy, identifier, metric: String
        /// The mean over the range's people at the defaults, and the median, 10th and 90th
        /// percentiles of that mean over the design's points.
        package var atDefaults, median, p10, p90: Double
        /// The top assumptions, most influential first, with their shares (0 to 1).
        package var shares: [(assumption: String, share: Double)]
        /// People per point, and points run.
        package var people, points: Int
    }

    /// The metrics a range is given for, as one number per point from the people's tallies.
    static let rangeMetrics: [(name: String, value: @Sendable ([Person], String) -> Double)] = [
        ("runs_per_day", { people, id in Statistics.mean(people.map { Double($0.tasks[id]?.started ?? 0) / $0.days }) }),
        ("energy_per_day_j", { people, id in Statistics.mean(people.map { ($0.tasks[id]?.energyJ ?? 0) / $0.days }) }),
        ("none_pct", { people, id in 100 * Double(people.filter { ($0.tasks[id]?.started ?? 0) == 0 }.count) / Double(max(people.count, 1)) }),
    ]

    /// A point of the unit cube as values of the policy's assumptions: each mapped linearly
    /// onto its plausible range (a duration to whole milliseconds; a flag is false below one
    /// half), set on the policy as a scenario's entry would set them.
    static func values(_ u: [Double], _ factors: [PolicyParameterInfo]) -> [String: PolicyParameterValue] {
        var out: [String: PolicyParameterValue] = [:]
        for (x, f) in zip(u, factors) {
            let r = f.plausible!
            let v = r.low + x * (r.high - r.low)
            out[f.name] =
                switch f.kind {
                case .duration: .duration(.milliseconds(Int64((v * 1000).rounded())))
                case .flag: .flag(x >= 0.5)
                case .integer: .integer(Int(v.rounded()))
                default: .number(v)
                }
        }
        return out
    }

    /// Each point's people, the units of the range study run `jobs` at a time; the defaults'
    /// point reuses the base's first people, whose inputs it does not change.
    static func rangeStudy(
        _ setup: ForecastSetup, design: RangeDesign, base: [Person], jobs: Int, progress: (@Sendable (Int, Int) -> Void)?
    ) async throws -> [AssumptionRange] {
        let scenario = setup.scenario
        guard let p = scenario.policies.firstIndex(where: { $0.name == rangedPolicy }) else { return [] }
        let label = scenario.policies[p].label
        let factors = PolicyRegistry.type(named: rangedPolicy)!.parameterInfo.filter { $0.plausible != nil }
        let people = min(design.people, base.count)
        guard !factors.isEmpty, people > 0 else { return [] }
        let defaults = factors.map { f -> Double in
            let r = f.plausible!
            let x: Double =
                switch f.defaultValue {
                case .number(let v): v
                case .integer(let n): Double(n)
                case .duration(let d): d.seconds
                case .flag(let b): b ? r.high : r.low
                default: r.low
                }
            return (x - r.low) / (r.high - r.low)
        }
        let identifiers = setup.appParameters.tasks.map(\.identifier).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        // Morris over every assumption.
        let stream = try RandomStream(StreamID(masterSeed: scenario.seed, replication: 0, name: "forecast.ranges"))
        let morris = Sensitivity.morrisDesign(factors: factors.count, trajectories: design.trajectories, levels: 4, stream: stream)
        let morrisRuns = try await runPoints(morris.map { values($0, factors) }, setup, policy: p, people: people, jobs: jobs) {
            progress?($0, $1)
        }
        func outputs(_ runs: [[Person]], _ id: String, _ metric: Int) -> [Double] { runs.map { rangeMetrics[metric].value($0, id) } }
        // The top assumptions: each identifier's two largest μ* of its runs a day, then by μ*
        // relative to the largest over every identifier and metric, up to `top` (at most 6).
        var weight = [Double](repeating: 0, count: factors.count)
        var top: [Int] = []
        for id in identifiers {
            for m in rangeMetrics.indices {
                let effects = Sensitivity.morrisEffects(design: morris, outputs: outputs(morrisRuns, id, m), factors: factors.count)
                let largest = effects.map(\.muStar).max() ?? 0
                guard largest > 0 else { continue }
                for (i, e) in effects.enumerated() { weight[i] = max(weight[i], e.muStar / largest) }
                if m == 0 {
                    for i in factors.indices.sorted(by: { (effects[$0].muStar, -$0) > (effects[$1].muStar, -$1) }).prefix(2)
                    where effects[i].muStar > 0 && !top.contains(i) {
                        top.append(i)
                    }
                }
            }
        }
        for i in factors.indices.sorted(by: { (weight[$0], -$0) > (weight[$1], -$1) }) where top.count < design.top && !top.contains(i) {
            top.append(i)
        }
        top = Array(top.prefix(6))
        // Sobol' over the top ones, the others at their defaults.
        let saltelli = Sensitivity.sobolDesign(factors: top.count, samples: design.samples).map { u -> [Double] in
            var x = defaults
            for (j, i) in top.enumerated() { x[i] = u[j] }
            return x
        }
        let done = morris.count * people
        let sobolRuns = try await runPoints(saltelli.map { values($0, factors) }, setup, policy: p, people: people, jobs: jobs) {
            progress?(done + $0, done + $1)
        }
        let atDefaults = Array(base.prefix(people))
        var out: [AssumptionRange] = []
        for id in identifiers {
            for (m, metric) in rangeMetrics.enumerated() {
                let points = (outputs(morrisRuns, id, m) + outputs(sobolRuns, id, m)).sorted()
                let indices = Sensitivity.sobolIndices(outputs: outputs(sobolRuns, id, m), factors: top.count)
                let totals = indices.map { $0.total.isFinite ? max(0, $0.total) : 0 }
                let sum = totals.reduce(0, +)
                let shares = zip(top, totals).map { (factors[$0].name, sum > 0 ? $1 / sum : 0) }.sorted { $0.1 > $1.1 }
                out.append(
                    AssumptionRange(
                        policy: label, identifier: id, metric: metric.name, atDefaults: metric.value(atDefaults, id),
                        median: Statistics.quantile(sorted: points, 0.5), p10: Statistics.quantile(sorted: points, 0.1),
                        p90: Statistics.quantile(sorted: points, 0.9), shares: sum > 0 ? shares : [], people: people,
                        points: morris.count + saltelli.count))
            }
        }
        return out
    }

    /// Runs each point's values of the policy's parameters on the first `people` people under
    /// `policy`, `jobs` at a time; the people of each point, in order.
    static func runPoints(
        _ points: [[String: PolicyParameterValue]], _ setup: ForecastSetup, policy: Int, people: Int, jobs: Int, progress: (Int, Int) -> Void
    ) async throws -> [[Person]] {
        let scenarios = points.map { v -> Scenario in
            var s = setup.scenario
            s.policies[policy].rule.values.merge(v) { $1 }
            return s
        }
        let total = scenarios.count * people
        var results = [Person?](repeating: nil, count: total)
        let app = setup.app
        try await withThrowingTaskGroup(of: (Int, Person).self) { group in
            var next = 0, done = 0
            func launch() {
                let index = next, scenario = scenarios[next / people], replication = next % people
                next += 1
                group.addTask { (index, try Self.person(scenario, policy: policy, replication: replication, app: app)) }
            }
            while next < min(max(jobs, 1), total) { launch() }
            while let (index, person) = try await group.next() {
                results[index] = person
                done += 1
                progress(done, total)
                if next < total { launch() }
            }
        }
        return (0..<scenarios.count).map { s in (0..<people).map { results[s * people + $0]! } }
    }
}
