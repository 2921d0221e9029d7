import PhoneWorld
import SimEngine

/// Receives what happens in one simulated run.
///
/// The run loop calls these as things happen; a sink keeps what it needs. `RunMetrics`
/// keeps summaries; other sinks (a task log, a timeline) can keep more.
public protocol MetricsSink {
    /// A request ended, in whatever final state.
    mutating func taskEnded(_ record: TaskRecord)
    /// The battery reached `charge` at `time` (called at every change of slope, so the
    /// extremes of the piecewise-linear charge curve are all seen).
    mutating func chargeObserved(_ charge: Double, at time: SimInstant)
    /// The battery emptied and the phone shut down.
    mutating func phoneShutDown(at time: SimInstant)
    /// The phone booted after being off for `offFor`.
    mutating func phoneBooted(at time: SimInstant, offFor: SimDuration)
    /// The run ended at `time` with these energy books, the phone off since `offSince`
    /// (nil if on).
    mutating func runEnded(at time: SimInstant, energy: EnergyFlow, offSince: SimInstant?)
}

extension MetricsSink {
    public mutating func taskEnded(_ record: TaskRecord) {}
    public mutating func chargeObserved(_ charge: Double, at time: SimInstant) {}
    public mutating func phoneShutDown(at time: SimInstant) {}
    public mutating func phoneBooted(at time: SimInstant, offFor: SimDuration) {}
    public mutating func runEnded(at time: SimInstant, energy: EnergyFlow, offSince: SimInstant?) {}
}

/// The summary of one run: counts, latencies, energy, battery extremes.
public struct RunMetrics: MetricsSink, Sendable {
    /// Requests by final outcome, indexed like `TaskOutcome.allCases`.
    public private(set) var outcomeCounts = [Int](repeating: 0, count: TaskOutcome.allCases.count)
    /// Start latencies in seconds of every request that started, in end order.
    public private(set) var latenciesS: [Double] = []
    /// Energy of background work, in joules.
    public private(set) var backgroundEnergyJ = 0.0
    /// Energy of work that expired or was killed.
    public private(set) var wastedEnergyJ = 0.0
    public private(set) var energy = EnergyFlow()
    public private(set) var minCharge = 1.0
    public private(set) var finalCharge = 0.0
    public private(set) var shutdowns = 0
    public private(set) var timeOff = SimDuration.zero
    public private(set) var endTime = SimInstant.start

    public init() {}

    public func count(_ outcome: TaskOutcome) -> Int {
        outcomeCounts[TaskOutcome.allCases.firstIndex(of: outcome)!]
    }
    public var submitted: Int { outcomeCounts.reduce(0, +) }

    public mutating func taskEnded(_ record: TaskRecord) {
        outcomeCounts[TaskOutcome.allCases.firstIndex(of: record.outcome)!] += 1
        if let latency = record.latency { latenciesS.append(latency.seconds) }
        backgroundEnergyJ += record.energyJ
        if record.outcome == .expired || record.outcome == .killed { wastedEnergyJ += record.energyJ }
    }

    public mutating func chargeObserved(_ charge: Double, at time: SimInstant) {
        minCharge = min(minCharge, charge)
        finalCharge = charge
    }

    public mutating func phoneShutDown(at time: SimInstant) { shutdowns += 1 }

    public mutating func phoneBooted(at time: SimInstant, offFor: SimDuration) { timeOff += offFor }

    public mutating func runEnded(at time: SimInstant, energy: EnergyFlow, offSince: SimInstant?) {
        self.energy = energy
        endTime = time
        if let off = offSince { timeOff += time - off }
    }
}
