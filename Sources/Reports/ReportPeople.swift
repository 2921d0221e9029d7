import Experiments
import Foundation
import ResultFiles
import ScenarioFiles
import Scheduling
import SimEngine
import SimRandom

extension Report {
    /// A fleet's spread across people: each policy's per-person values as distributions, and
    /// who fares worst against the baseline, paired by person.
    func peopleSection(colors: [String]) -> String {
        let policies = results.policies
        var s = "<section><h2>People</h2><p class=\"note\">Each replication is one person drawn from the scenario's fleet ("
        s += results.fleet.map(Quoting.html).joined(separator: ", ")
        s += "), the same person under every policy. A sweep's person is first averaged over its points.</p><div class=\"grid\">"
        let staleness = policies.indices.map { i in
            SVG.Series(label: policies[i], color: colors[i], values: perPerson("staleness_mean_s", policy: policies[i]).values.sorted())
        }
        s += SVG.cdf(
            id: "people-0", title: "Mean staleness at launch, per person", xLabel: "staleness", series: staleness, floor: 1, of: "people",
            durations: true)
        // People differ fiftyfold in background energy and policies by a few percent, so each
        // policy's energy is drawn person by person against the baseline's, not as its own CDF
        // (six curves on one another).
        if let baseline = results.baseline, policies.contains(baseline) {
            let base = perPerson("background_energy_j", policy: baseline)
            let series = policies.indices.filter { policies[$0] != baseline }.map { i in
                let mine = perPerson("background_energy_j", policy: policies[i])
                let change = mine.keys.compactMap { p in base[p].flatMap { b in b > 0 ? 100 * (mine[p]! - b) / b : nil } }
                return SVG.Series(label: policies[i], color: colors[i], values: change.sorted())
            }
            s += SVG.cdf(
                id: "people-1", title: "Background energy against \(baseline), per person", xLabel: "change from \(baseline) (%)",
                series: series, of: "people", durations: false, linear: true)
        }
        s += "</div>"
        guard let baseline = results.baseline else { return s + "</section>" }
        s += "<h3>Against \(Quoting.html(baseline)), person by person</h3><table><tr>"
        s += Self.peopleHeadings.map { "<th>\($0)</th>" }.joined() + "</tr>"
        for row in peopleRows(baseline: baseline) { s += "<tr>" + row.map { "<td>\(Quoting.html($0))</td>" }.joined() + "</tr>" }
        return s + "</table></section>"
    }

    static let peopleHeadings = [
        "policy", "people staler", "staleness change p50 / p90", "energy change p50", "worst off (largest staleness increase)",
    ]

    /// Per policy other than the baseline, person by person against it: the share of people
    /// with staler content, the change's median and 90th percentile, the median change of
    /// background energy, and the person worst off with their drawn values.
    func peopleRows(baseline: String) -> [[String]] {
        guard results.policies.contains(baseline) else { return [] }
        let base = perPerson("staleness_mean_s", policy: baseline)
        let baseEnergy = perPerson("background_energy_j", policy: baseline)
        var rows: [[String]] = []
        for policy in results.policies where policy != baseline {
            let mine = perPerson("staleness_mean_s", policy: policy), energy = perPerson("background_energy_j", policy: policy)
            let people = mine.keys.filter { base[$0] != nil }.sorted()
            guard !people.isEmpty else { continue }
            let changes = people.map { mine[$0]! - base[$0]! }
            let sorted = changes.sorted()
            let energyChanges = people.compactMap { p in energy[p].flatMap { e in baseEnergy[p].map { e - $0 } } }.sorted()
            let worst = people.indices.max { changes[$0] < changes[$1] }!
            let staler = 100 * Double(changes.filter { $0 > 0 }.count) / Double(changes.count)
            rows.append([
                policy + (isBound(policy) ? " (bound)" : ""), String(format: "%.0f%%", staler),
                "\(signed(Statistics.quantile(sorted: sorted, 0.5))) / \(signed(Statistics.quantile(sorted: sorted, 0.9)))",
                energyChanges.isEmpty
                    ? "" : String(format: "%+.0f J", Statistics.quantile(sorted: energyChanges, 0.5)).replacingOccurrences(of: "-", with: "−"),
                changes[worst] > 0 ? "replication \(people[worst]): \(signed(changes[worst])) (\(personValues(people[worst])))" : "nobody is staler",
            ])
        }
        return rows
    }

    /// A duration change with its sign.
    func signed(_ seconds: Double) -> String { (seconds < 0 ? "−" : "+") + SVG.duration(abs(seconds)) }

    /// Per person (replication), the mean of `metric` over `policy`'s rows (over the points of
    /// a sweep).
    func perPerson(_ metric: String, policy: String) -> [Int: Double] {
        guard let m = results.runs.column(metric), let r = results.runs.column("replication"), let p = results.runs.column("policy") else {
            return [:]
        }
        var sums: [Int: (Double, Int)] = [:]
        for row in results.runs.rows where row[p] == policy {
            guard let v = Double(row[m]), v.isFinite, let rep = Int(row[r]) else { continue }
            let (a, n) = sums[rep] ?? (0, 0)
            sums[rep] = (a + v, n + 1)
        }
        return sums.mapValues { $0.0 / Double($0.1) }
    }

    /// A person's drawn values, as `path=value` pairs.
    func personValues(_ replication: Int) -> String {
        guard let r = results.runs.column("replication"),
            let row = results.runs.rows.first(where: { Int($0[r]) == replication })
        else { return "" }
        return results.fleet.compactMap { path in results.runs.column(path).map { "\(path)=\(row[$0])" } }.joined(separator: ", ")
    }
}
