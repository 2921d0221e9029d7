import Foundation
import ResultFiles
import ScenarioFiles
import SimEngine

/// What a study runs: one or more points (scenarios), each under every policy in every
/// replication. `bgsim run` is a plan of one point without parameters; `bgsim sweep` one
/// point per design point, with the axes' values as parameters.
public struct StudyPlan: Sendable {
    /// One point of the plan: its parameter values and its scenario.
    package struct Point: Sendable {
        /// The axes' values at this point, as written to the parameter columns.
        package let values: [String]
        /// The point's scenario. Only point 0's keeps its `resolvedJSON` (the manifest's
        /// copy); the others keep its SHA-256, `scenarioDigest`, and the plan its share of
        /// `fingerprint`: at about 10 kB a point for the reference scenario, the JSON was two
        /// thirds of a sweep plan's memory (150 MB for 10,000 points, 53 MB without it).
        package let scenario: Scenario
        /// SHA-256 of the resolved scenario, made once here: every unit's fingerprint names
        /// it, and hashing the scenario twice per unit was about 1% of a unit's time.
        package let scenarioDigest: String

        init(values: [String], scenario: Scenario, keepJSON: Bool) {
            self.values = values
            scenarioDigest = SHA256.hex(scenario.resolvedJSON)
            var scenario = scenario
            if !keepJSON { scenario.resolvedJSON = "" }
            self.scenario = scenario
        }
    }

    /// Names the rows (`scenario` column) and the default output folder.
    package var name: String
    /// The scenario or sweep file.
    package var file: String
    /// The swept key paths, in axis order (the parameter columns); empty for a run.
    package var parameters: [String]
    /// The points, in design order (one for a run).
    package private(set) var points: [Point]
    /// What the plan's units compute, as a SHA-256: each point's values and resolved
    /// scenario, the replications. Shards of one plan share it; `merge` checks it.
    package private(set) var fingerprint: String
    /// Replications per point and policy.
    package var replications: Int
    /// The sweep's definition (canonical JSON), or nil for a run.
    var sweepJSON: String?
    /// The sweep's design (`grid`, `lhs`, ...), or nil for a run.
    package var design: String?
    /// The sweep's design whole, or nil for a run.
    package var sweepDesign: SweepDesign?
    /// Per policy, per point: the first point whose unit of that policy has the same inputs,
    /// so runs the same simulation (empty: every unit is its own). A point that sets only
    /// another policy's parameters leaves a policy's units as they were: a sweep over one
    /// policy's parameters simulates the others once.
    private var sources: [[Int32]] = []

    /// Whether the plan comes from a sweep file.
    package var isSweep: Bool { sweepJSON != nil }
    /// The policies every point runs, in output order.
    package var policies: [PolicySpec] { points[0].scenario.policies }
    /// Point 0's scenario (a run's only one).
    package var first: Scenario { points[0].scenario }

    /// A plan of one scenario.
    public init(scenario: Scenario) {
        name = scenario.name
        file = scenario.file
        parameters = []
        points = [Point(values: [], scenario: scenario, keepJSON: true)]
        replications = scenario.replications
        var digest = PlanDigest(replications: replications)
        digest.add(values: [], resolvedJSON: scenario.resolvedJSON)
        fingerprint = digest.hex()
    }

    /// A sweep's plan: every point's scenario is read and checked before anything runs.
    /// `overrides` (from the command line) apply to every point after the sweep's own.
    ///
    /// Points are read on up to `jobs` threads (the first alone, so that the files every
    /// point shares are parsed once): reading a point takes about as long as a short run,
    /// and read one by one they kept a sweep of many short runs from using more than one
    /// core for half its time. The plan and any error (the first point's, in point order)
    /// are the same for every `jobs`.
    ///
    /// `progress`, if given, is told the points read so far and their number after each chunk
    /// (tens of thousands of points take seconds).
    package init(
        sweep: Sweep, overrides: [Override] = [], jobs: Int = 1,
        progress: ((_ read: Int, _ total: Int) -> Void)? = nil
    ) throws(ScenarioError) {
        let base = try InputFile.read(sweep.scenarioFile, .baseScenario)
        name = sweep.name
        file = sweep.file
        parameters = sweep.design.axes.map(\.path.description)
        design = sweep.design.kind.rawValue
        sweepDesign = sweep.design
        let count = sweep.design.pointCount
        let pointValues = sweep.design.makePoints()
        guard count > 0 else { throw ScenarioError(.invalid, file: sweep.file, keyPath: "axes", message: "the design has no points") }
        let documents = DocumentCache()
        /// Point `i` and its resolved JSON, which the plan's digest takes before it is let go.
        @Sendable func point(_ i: Int, _ values: [String]) -> Result<(json: String, point: Point), ScenarioError> {
            let axes = zip(sweep.design.axes.indices, values).map { a, v in
                Override(
                    path: sweep.design.axes[a].path, value: v,
                    origin: "\(sweep.file): axes[\(a)] (\(sweep.design.axes[a].path)=\(v)) at point \(i)")
            }
            do throws(ScenarioError) {
                var scenario = try Scenario.parse(
                    yaml: base, file: sweep.scenarioFile, overrides: sweep.common + axes + overrides,
                    documents: documents)
                scenario.name = sweep.name
                return .success((scenario.resolvedJSON, Point(values: values, scenario: scenario, keepJSON: i == 0)))
            } catch {
                let at = zip(sweep.design.axes, values).map { "\($0.path)=\($1)" }.joined(separator: ", ")
                return .failure(error.from("\(sweep.file): point \(i) (\(at))"))
            }
        }
        // Points are read in chunks, each hashed into the plan's digest in point order and its
        // JSON dropped before the next chunk, so a plan holds a chunk of JSON at a time.
        let chunk = max(256, 8 * jobs)
        var points: [Point] = []
        points.reserveCapacity(count)
        var digest: PlanDigest?
        var first: Scenario?
        for start in stride(from: 0, to: count, by: chunk) {
            let end = min(start + chunk, count)
            let values = (start..<end).map { _ in pointValues.next()! }
            var read = [Result<(json: String, point: Point), ScenarioError>?](repeating: nil, count: end - start)
            if start == 0 {
                read[0] = point(0, values[0])
                if case .failure(let error) = read[0]! { throw error }
            }
            let from = max(start, 1)
            if from < end {
                let workers = min(max(jobs, 1), end - from)
                read.withUnsafeMutableBufferPointer { buffer in
                    // Each point's slot is written by exactly one worker.
                    nonisolated(unsafe) let slots = buffer
                    DispatchQueue.concurrentPerform(iterations: workers) { w in
                        for i in stride(from: from + w, to: end, by: workers) { slots[i - start] = point(i, values[i - start]) }
                    }
                }
            }
            for (k, result) in read.enumerated() {
                let (json, p) = try result!.get()
                if let first {
                    // Policies are the same by label and rule; their parameters may vary by point.
                    let labels = { (s: Scenario) in s.policies.map { [$0.label, $0.rule.name] } }
                    if labels(p.scenario) != labels(first) || p.scenario.replications != first.replications || p.scenario.seed != first.seed
                        || p.scenario.fleet.map(\.path) != first.fleet.map(\.path)
                    {
                        throw ScenarioError(
                            .invalid, file: sweep.file, keyPath: "axes",
                            message: "point \(start + k) changes the policies, replications, seed or fleet parameters; every point must share them")
                    }
                } else {
                    first = p.scenario
                    digest = PlanDigest(replications: p.scenario.replications)
                    // Known from the first point: refused before the others are read.
                    let units = count * p.scenario.policies.count * p.scenario.replications
                    if units > Scenario.maxUnits {
                        throw ScenarioError(
                            .invalid, file: sweep.file, keyPath: "axes",
                            message: "\(count) points x \(p.scenario.policies.count) policies x \(p.scenario.replications) replications is \(units) runs; "
                                + "a study has at most \(Scenario.maxUnits) (its summary keeps about 1.5 kB a run)")
                    }
                }
                digest!.add(values: p.values, resolvedJSON: json)
                points.append(p)
            }
            progress?(points.count, count)
        }
        self.points = points
        replications = points[0].scenario.replications

        fingerprint = digest!.hex()
        sweepJSON = sweep.resolvedJSON
        sources = Self.sources(points, axes: sweep.design.axes.map(\.path))
    }

    /// Each (policy, point)'s source: the first point with the same values of the axes that
    /// reach that policy's units, which are every axis but those setting another policy's
    /// parameters (`policies[2].threshold`). Points differ only by their axes' values (the
    /// rest of every point's scenario is the same), so those values are the unit's inputs;
    /// the specs are compared too, so a reuse is never taken on the axes' word alone.
    static func sources(_ points: [Point], axes: [ConfigKeyPath]) -> [[Int32]] {
        let labels = points[0].scenario.policies.map(\.label)
        let policyOf: [Int?] = axes.map { path in
            guard path.components.count == 3, path.components[0] == .key("policies") else { return nil }
            switch path.components[1] {
            case .index(let i): return i
            case .key(let label): return labels.firstIndex(of: label)
            }
        }
        guard policyOf.contains(where: { $0 != nil }) else { return [] }
        let policies = points[0].scenario.policies.count
        return (0..<policies).map { k in
            var first: [[String]: Int32] = [:]
            return points.indices.map { p in
                let key = zip(points[p].values, policyOf).compactMap { value, policy in policy == nil || policy == k ? value : nil }
                if let q = first[key], points[Int(q)].scenario.policies[k] == points[p].scenario.policies[k] { return q }
                first[key] = first[key] ?? Int32(p)
                return Int32(p)
            }
        }
    }

    /// An axis as people read it: a policy's parameter under the policy's label
    /// (`policies[3].refreshes_per_launch` as `ios.refreshes_per_launch`), others as written.
    package func axisName(_ path: String) -> String {
        guard path.hasPrefix("policies["), let close = path.firstIndex(of: "]"),
            let i = Int(path[path.index(path.startIndex, offsetBy: 9)..<close]), policies.indices.contains(i)
        else { return path }
        return policies[i].label + path[path.index(after: close)...]
    }

    /// The unit that runs the same simulation as `u`, first in point order (`u` itself when
    /// no earlier point's does).
    package func source(of u: UnitKey) -> UnitKey {
        guard !sources.isEmpty else { return u }
        return UnitKey(point: Int(sources[u.policy][u.point]), policy: u.policy, replication: u.replication)
    }

    /// Units in the plan: points x policies x replications.
    package var unitCount: Int { points.count * policies.count * replications }

    /// The unit at `index` in canonical order: point, then policy, then replication.
    package func unit(_ index: Int) -> UnitKey {
        let r = replications, p = policies.count
        return UnitKey(point: index / (p * r), policy: index / r % p, replication: index % r)
    }

    /// The canonical index of `u`: point, then policy, then replication.
    package func index(of u: UnitKey) -> Int { (u.point * policies.count + u.policy) * replications + u.replication }

    /// The units of replications `reps` of every point and policy, in canonical order; with a
    /// shard, only the shard's: those whose source's canonical index it holds, so that a unit
    /// and the units reusing its simulation are in one shard.
    package func units(replications reps: Range<Int>, shard: Shard? = nil) -> [UnitKey] {
        var units: [UnitKey] = []
        for p in points.indices {
            for k in policies.indices {
                for r in reps {
                    let u = UnitKey(point: p, policy: k, replication: r)
                    if let shard, !shard.contains(index(of: source(of: u))) { continue }
                    units.append(u)
                }
            }
        }
        return units
    }

    /// A readable name for a unit in messages: `point 3 (people.sessions_per_day=50), ios, replication 7`.
    package func describe(_ u: UnitKey) -> String {
        var s = isSweep ? "point \(u.point) (" + zip(parameters, points[u.point].values).map { "\($0)=\($1)" }.joined(separator: ", ") + "), " : ""
        s += "\(policies[u.policy].name), replication \(u.replication)"
        return s
    }

    /// The fingerprint of one unit: its scenario, policy and replication, and what it records.
    func fingerprint(of u: UnitKey, record: RecordOptions) -> String {
        SHA256.hex(
            "\(points[u.point].scenarioDigest)\n\(policies[u.policy].name)\n\(u.replication)\n"
                + "timeline=\(record.timelineEvery.map { String($0.microseconds) } ?? "none")")
    }
}

/// A plan's SHA-256 (`StudyPlan.fingerprint`), fed one point at a time in point order, so
/// that neither a plan nor a report rebuilding one keeps every point's resolved JSON.
package struct PlanDigest {
    private var h = SHA256()

    package init(replications: Int) { h.update(Data("bgsim plan\n\(replications)\n".utf8)) }

    package mutating func add(values: [String], resolvedJSON: String) {
        h.update(Data((values.joined(separator: "\u{1f}") + "\n").utf8))
        h.update(Data((resolvedJSON + "\n").utf8))
    }

    package func hex() -> String {
        var copy = h
        return copy.hexDigest()
    }
}

/// One simulation of a plan: a point, a policy (index into the plan's policies), a replication.
package struct UnitKey: Hashable, Sendable, Comparable {
    /// The point, from 0.
    package var point: Int
    /// The policy, as an index into the plan's policies.
    package var policy: Int
    /// The replication, from 0.
    package var replication: Int
    /// The unit of `policy` in `replication` at `point`.
    package init(point: Int, policy: Int, replication: Int) {
        self.point = point
        self.policy = policy
        self.replication = replication
    }
    /// Canonical order: point, then policy, then replication.
    package static func < (a: UnitKey, b: UnitKey) -> Bool {
        (a.point, a.policy, a.replication) < (b.point, b.policy, b.replication)
    }
    /// The unit's name in a unit store and a shard manifest: `p000003-1-r000007`.
    var folderName: String {
        "p" + Self.pad(point, 6) + "-\(policy)-r" + Self.pad(replication, 6)
    }
    init?(folderName name: String) {
        let parts = name.split(separator: "-")
        guard parts.count == 3, parts[0].first == "p", parts[2].first == "r",
            let p = Int(parts[0].dropFirst()), let k = Int(parts[1]), let r = Int(parts[2].dropFirst())
        else { return nil }
        self.init(point: p, policy: k, replication: r)
    }
    static func pad(_ x: Int, _ width: Int) -> String {
        let s = String(x)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}

/// `--shard K/N`: the units whose canonical index is K-1 modulo N. Dealing round-robin
/// spreads every point and policy over the shards, so shards take about equal time.
public struct Shard: Sendable, Equatable, CustomStringConvertible {
    /// K, from 1.
    package var index: Int
    /// N, the number of shards.
    package var count: Int
    /// Parses `K/N` with 1 <= K <= N; nil otherwise.
    package init?(parsing text: String) {
        let parts = text.split(separator: "/")
        guard parts.count == 2, let k = Int(parts[0]), let n = Int(parts[1]), n >= 1, (1...n).contains(k) else { return nil }
        index = k
        count = n
    }
    /// Shard `index` of `count`.
    package init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }
    /// Whether the unit at canonical `unitIndex` is in this shard.
    package func contains(_ unitIndex: Int) -> Bool { unitIndex % count == index - 1 }
    /// `K/N`.
    public var description: String { "\(index)/\(count)" }
}
