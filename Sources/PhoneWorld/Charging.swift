import SimEngine
import SimRandom

/// When the person plugs the phone in: one session a night, on most nights.
///
/// Most charging happens overnight (Ferreira et al., Pervasive 2011, FACTS.md §8); the
/// times and their spread are parameters, not confirmed distributions. How fast a session
/// charges is the `ChargingCurve`'s business.
public struct NightlyChargingParameters: Equatable, Sendable {
    /// Mean time of day the phone is plugged in.
    public var plugIn: SimDuration = .hours(23)
    /// Standard deviation of the plug-in time (normal).
    public var plugInJitter: SimDuration = .minutes(45)
    /// Mean time of day (next morning) the phone is unplugged.
    public var unplug: SimDuration = .hours(7)
    /// Standard deviation of the unplug time (normal).
    public var unplugJitter: SimDuration = .minutes(30)
    /// Probability that the person charges on a given night.
    public var nightlyProbability: Double = 0.9

    public init() {}
}

/// One period with the charger connected, `[start, end)`.
public struct ChargingSession: Equatable, Sendable {
    public var start: SimInstant
    public var end: SimInstant
    public init(start: SimInstant, end: SimInstant) {
        self.start = start
        self.end = end
    }
}

extension NightlyChargingParameters {
    /// The charging sessions that overlap `[0, horizon)`, in order, clipped to it.
    ///
    /// Nights are drawn in calendar order from the night before day 0 (so a phone can start
    /// the simulation plugged in), three draws per night whether or not the night charges, so
    /// night n's times do not depend on earlier nights' outcomes. Sessions never overlap and
    /// last at least a minute.
    public func sessions(until horizon: SimInstant, stream: RandomStream) -> [ChargingSession] {
        var out: [ChargingSession] = []
        let lastNight = horizon.day
        var previousEnd = SimInstant(microseconds: .min)
        for night in -1...lastNight {
            let charges = stream.bernoulli(nightlyProbability)
            let plugOffset = stream.normal(sigma: plugInJitter.seconds)
            let unplugOffset = stream.normal(sigma: unplugJitter.seconds)
            guard charges else { continue }
            let midnight = SimInstant.after(.days(night))
            var start = midnight + plugIn + SimDuration(seconds: plugOffset)
            let end = midnight + .days(1) + unplug + SimDuration(seconds: unplugOffset)
            start = max(start, previousEnd)
            guard end - start >= .minutes(1) else { continue }
            previousEnd = end
            let clipped = ChargingSession(start: max(start, .start), end: min(end, horizon))
            if clipped.start < clipped.end { out.append(clipped) }
        }
        return out
    }
}
