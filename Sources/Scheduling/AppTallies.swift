import PhoneWorld
import SimEngine

/// One app's requests under one identifier in one run, added up from their records: what an
/// app developer asks of a run (how often it ran, where, why not, at what cost).
package struct AppTaskTally: Sendable {
    /// The app, as an index into the scenario's apps.
    package let app: Int
    /// The BGTaskScheduler identifier, or the system's name for the door (`silent-push`, ...).
    package let identifier: String
    /// The kind of its requests.
    package let kind: TaskKind
    /// Requests by final state, indexed like `TaskOutcome.allCases`.
    package internal(set) var outcomes = [Int](repeating: 0, count: TaskOutcome.allCases.count)
    /// Expiration handlers called, by reason, indexed like `ExpirationReason.allCases`.
    package internal(set) var expirations = [Int](repeating: 0, count: ExpirationReason.allCases.count)
    /// Rejected submissions by error, indexed like `SubmitError.allCases`.
    package internal(set) var rejections = [Int](repeating: 0, count: SubmitError.allCases.count)
    /// Completed requests whose app reported failure.
    package internal(set) var unsuccessful = 0
    /// Requests that started.
    package internal(set) var started = 0
    /// Of them, those that started on the charger.
    package internal(set) var startedCharging = 0
    /// Those that started on Wi-Fi.
    package internal(set) var startedOnWifi = 0
    /// Those that started on cellular.
    package internal(set) var startedOnCellular = 0
    /// Starts by hour of the day (the run starts at midnight).
    package internal(set) var startsByHour = [Int](repeating: 0, count: 24)
    /// The gaps between consecutive starts.
    package internal(set) var gaps = StartGaps()
    /// Of the requests that started: time from start to end.
    package internal(set) var runTime = SimDuration.zero
    /// The time they were given (budget, the policy's limit, the finite-length grant), summed
    /// over those that had one.
    package internal(set) var grant = SimDuration.zero
    /// How many had one.
    package internal(set) var granted = 0
    /// CPU time of all its requests (those that never started cost nothing).
    package internal(set) var cpuTime = SimDuration.zero
    /// Energy of all its requests, in joules.
    package internal(set) var energyJ = 0.0
    /// The part of it drawn while a charger was connected.
    package internal(set) var chargerEnergyJ = 0.0
    /// Bytes moved.
    package internal(set) var movedBytes = 0.0
    /// Sum of start latencies of those that started.
    package internal(set) var latency = SimDuration.zero
    /// Time held by each gate, and by the policy.
    package internal(set) var held = HoldTimes()
    /// Time held by each of the policy's reasons, in the order first heard (whole
    /// microseconds, so sums over requests are exact).
    var ruleTimes: [(reason: String, microseconds: Int64)] = []

    init(app: Int, identifier: String, kind: TaskKind) {
        self.app = app
        self.identifier = identifier
        self.kind = kind
    }

    /// Requests in all, every outcome counted.
    package var submitted: Int { outcomes.reduce(0, +) }
    /// Requests that ended in `outcome`.
    package func count(_ outcome: TaskOutcome) -> Int { outcomes[outcome.index] }

    /// Seconds held by each of the policy's reasons, longest first (ties in the order first
    /// heard).
    package var rulesByTime: [(reason: String, seconds: Double)] {
        ruleTimes.enumerated().sorted {
            $0.element.microseconds > $1.element.microseconds || ($0.element.microseconds == $1.element.microseconds && $0.offset < $1.offset)
        }
        .map { ($0.element.reason, Double($0.element.microseconds) / 1e6) }
    }

    mutating func add(_ r: borrowing TaskRecord) {
        outcomes[r.outcome.index] += 1
        if let e = r.expiration { expirations[ExpirationReason.allCases.firstIndex(of: e)!] += 1 }  // rare
        if let e = r.rejection { rejections[SubmitError.allCases.firstIndex(of: e)!] += 1 }
        if r.outcome == .completed && !r.success { unsuccessful += 1 }
        if let s = r.started {
            started += 1
            if r.startedCharging == true { startedCharging += 1 }
            if r.startedOn == .wifi { startedOnWifi += 1 }
            if r.startedOn == .cellular { startedOnCellular += 1 }
            startsByHour[Int((s.microseconds / 3_600_000_000) % 24)] += 1
            gaps.add(s)
            runTime += r.ended - s
            if let g = r.grant {
                grant += g
                granted += 1
            }
            if let l = r.latency { latency += l }
        }
        cpuTime += r.cpuTime
        energyJ += r.energyJ
        chargerEnergyJ += r.chargerEnergyJ
        movedBytes += r.movedUpBytes + r.movedDownBytes
        held.microseconds &+= r.held.microseconds
        for (reason, seconds) in r.policyHolds {
            let us = Int64((seconds * 1e6).rounded())
            if let k = ruleTimes.firstIndex(where: { $0.reason == reason }) {
                ruleTimes[k].microseconds += us
            } else {
                ruleTimes.append((reason, us))
            }
        }
    }
}

/// Every app's requests of a run, one tally per app and identifier, in the order first seen:
/// `apps.csv`'s rows.
package struct AppTallies: Sendable {
    /// The tallies, in the order their first record came.
    package private(set) var rows: [AppTaskTally] = []
    /// Per app, its rows' indexes into `rows`: an app has a few identifiers, so a linear search
    /// by string equality costs less than hashing the identifier (a dictionary here was 2% of
    /// a 30-day reference run, callgrind).
    var index: [[Int]]
    /// Past `Self.scanned` identifiers of an app, its rows by identifier: a linear search made
    /// an app of hundreds of tasks quadratic (800 tasks: a forecast's 1.8 s, 7.7% of it here).
    var many: [Int: [String: Int]] = [:]
    static let scanned = 16

    /// Tallies for `apps` apps, none yet.
    package init(apps: Int) { index = Array(repeating: [], count: apps) }

    /// Adds one ended request.
    package mutating func add(_ r: borrowing TaskRecord) {
        let app = r.request.app
        guard app < index.count else { return }
        let identifier = Self.tallied(r.request.identifier, r.request.kind)
        let k: Int
        if let found = index[app].count <= Self.scanned
            ? index[app].first(where: { rows[$0].identifier == identifier }) : many[app]?[identifier]
        {
            k = found
        } else {
            k = rows.count
            index[app].append(k)
            rows.append(AppTaskTally(app: app, identifier: identifier, kind: r.request.kind))
            if index[app].count > Self.scanned {
                if many[app] == nil { many[app] = Dictionary(uniqueKeysWithValues: index[app].map { (rows[$0].identifier, $0) }) }
                many[app]![identifier] = k
            }
        }
        rows[k].add(r)
    }

    /// The identifier a request is tallied under: its own, or for a kind's numbered requests
    /// (`com.example.export.7`) their wildcard (`com.example.export.*`), so that they make one
    /// row, not one each.
    static func tallied(_ identifier: String, _ kind: TaskKind) -> String {
        guard kind.isNumbered, let dot = identifier.lastIndex(of: ".") else { return identifier }
        return identifier[...dot] + "*"
    }

    /// The tallies ordered by app, then kind, then identifier: an order that does not depend on
    /// when each first ended.
    package var sorted: [AppTaskTally] {
        rows.sorted { ($0.app, $0.kind.index, $0.identifier) < ($1.app, $1.kind.index, $1.identifier) }
    }
}
