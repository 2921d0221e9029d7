import Experiments
import Foundation
import ScenarioFiles
import SimEngine
import SimRandom

extension Report {
    /// The sweep's point whose spread between policies (largest less smallest mean background
    /// energy over replications) is the median of the points': a point where the policies
    /// differ as they typically do, not point 0, which for a setting swept from `off` is four
    /// identical lanes. Ties go to the lower point.
    static func typicalPoint(_ results: ResultSet) -> Int {
        guard let pc = results.runs.column("point"), let pol = results.runs.column("policy"),
            let e = results.runs.column("background_energy_j")
        else { return 0 }
        var sums: [Int: [String: (Double, Int)]] = [:]
        for row in results.runs.rows {
            guard let p = Int(row[pc]), let v = Double(row[e]), v.isFinite else { continue }
            let (a, n) = sums[p]?[row[pol]] ?? (0, 0)
            sums[p, default: [:]][row[pol]] = (a + v, n + 1)
        }
        let spreads = sums.keys.sorted().map { p -> (Int, Double) in
            let means = sums[p]!.values.map { $0.0 / Double($0.1) }
            return (p, (means.max() ?? 0) - (means.min() ?? 0))
        }
        guard !spreads.isEmpty else { return 0 }
        let median = Statistics.quantile(sorted: spreads.map(\.1).sorted(), 0.5)
        return spreads.min { abs($0.1 - median) < abs($1.1 - median) }!.0
    }

    /// The days a typical day is chosen among, from day 1: a report re-simulates them, so a
    /// study of years is not re-simulated whole for one day's picture.
    static let typicalDayCandidates = 14

    /// A typical day of the replication shown: not day 0 when there are others (it starts at
    /// midnight with no evening before it, so its night has no charger), among the next
    /// `typicalDayCandidates` days a day whose night (midnight to 6:00) has the phone on the
    /// charger when any has, and among those the one whose number of task runs under the first
    /// policy is nearest their median. Returns the day and a phrase saying why.
    func typicalDay(_ scenario: Scenario, days: Int) throws -> (Int, String) {
        guard days > 1, let policy = scenario.policies.first else { return (0, "") }
        let last = min(days, Self.typicalDayCandidates + 1)
        let end = min(SimInstant.after(scenario.setup.duration), SimInstant.after(.days(Int64(last))))
        let trace = try Experiment.trace(scenario, policy: policy, replication: options.replication, window: .start..<end)
        let candidates = Array(1..<last)
        func chargedAtNight(_ d: Int) -> Bool {
            let night = SimInstant.after(.days(Int64(d)))..<SimInstant.after(.days(Int64(d)) + .hours(6))
            return Timeline.segments(trace.charging, from: night.lowerBound, to: night.upperBound).contains { $0.2 }
        }
        let charged = candidates.filter(chargedAtNight)
        let pool = charged.isEmpty ? candidates : charged
        let runs = pool.map { d in
            let a = SimInstant.after(.days(Int64(d))), b = a + .days(1)
            return Double(trace.runs.filter { $0.start >= a && $0.start < b }.count)
        }
        let median = Statistics.quantile(sorted: runs.sorted(), 0.5)
        let k = pool.indices.min { abs(runs[$0] - median) < abs(runs[$1] - median) }!
        var why =
            "\(Int(runs[k])) task runs under \(policy.name), the median of \(charged.isEmpty ? "days 1 to \(last - 1)" : "the days\(last < days ? " 1 to \(last - 1)" : "")")"
        if !charged.isEmpty { why += " whose night is on the charger" }
        return (pool[k], why)
    }
}
