import SimEngine
import SimRandom

/// When the person plugs the phone in: one session a night on most nights, plus daytime
/// top-ups.
///
/// Most charging happens overnight and daytime top-ups are shorter (Ferreira et al.,
/// Pervasive 2011, docs/sources.md §8); the times and their spread are parameters, not confirmed
/// distributions. Habits nightly, top-up and erratic are files in `models/charging/`. How
/// fast a session charges is the `ChargingCurve`'s business.
public struct ChargingHabit: Equatable, Sendable {
    /// Mean time of day the phone is plugged in; before noon means after midnight (00:30).
    public var plugIn: SimDuration = .hours(23)
    /// Standard deviation of the plug-in time (normal).
    public var plugInJitter: SimDuration = .minutes(45)
    /// Mean time of day (next morning) the phone is unplugged.
    public var unplug: SimDuration = .hours(7)
    /// Standard deviation of the unplug time (normal).
    public var unplugJitter: SimDuration = .minutes(30)
    /// Probability that the person charges on a given night.
    public var nightlyProbability: Double = 0.9
    /// Mean daytime top-ups per day (Poisson), each starting uniformly inside
    /// `[topUpFrom, topUpUntil)` and lasting an exponential time with mean `topUpMean`.
    public var topUpsPerDay: Double = 0
    /// Earliest time of day a top-up starts.
    public var topUpFrom: SimDuration = .hours(8)
    /// Latest time of day a top-up starts.
    public var topUpUntil: SimDuration = .hours(22)
    /// Mean length of a top-up (exponential).
    public var topUpMean: SimDuration = .minutes(30)

    /// The defaults above: a charge on nine nights in ten, no top-ups.
    public init() {}
}

/// One period with the charger connected, `[start, end)`.
public struct ChargingSession: Equatable, Sendable {
    /// When the charger was connected.
    public var start: SimInstant
    /// When it was removed.
    public var end: SimInstant
    /// A session from `start` to `end`.
    public init(start: SimInstant, end: SimInstant) {
        self.start = start
        self.end = end
    }
}

extension ChargingHabit {
    /// The charging sessions that overlap `[0, horizon)`, in order, clipped to it.
    ///
    /// Nights are drawn in calendar order from the night before day 0 (so a phone can start
    /// the simulation plugged in), three draws per night whether or not the night charges, so
    /// night n's times do not depend on earlier nights' outcomes. Sessions never overlap and
    /// last at least a minute. Top-ups are drawn after all nights (a Poisson count per day,
    /// then a start and a length each, at least a minute); one that would overlap another
    /// session starts when that one ends, so every top-up drawn happens before the horizon.
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
            // A plug-in time before noon is after midnight, the same night (00:30).
            let plugInOffset = plugIn < .hours(12) ? plugIn + .days(1) : plugIn
            var start = midnight + plugInOffset + SimDuration(seconds: plugOffset)
            let end = midnight + .days(1) + unplug + SimDuration(seconds: unplugOffset)
            start = max(start, previousEnd)
            guard end - start >= .minutes(1) else { continue }
            previousEnd = end
            let clipped = ChargingSession(start: max(start, .start), end: min(end, horizon))
            if clipped.start < clipped.end { out.append(clipped) }
        }
        guard topUpsPerDay > 0 else { return out }
        let window = max(topUpUntil - topUpFrom, .zero)
        var topUps: [(start: SimInstant, length: SimDuration)] = []
        for day in 0...lastNight {
            let n = stream.poisson(mean: topUpsPerDay)
            for _ in 0..<n {
                let start = SimInstant.after(.days(day)) + topUpFrom + SimDuration(seconds: stream.uniform() * window.seconds)
                let length = SimDuration(seconds: stream.exponential(mean: topUpMean.seconds))
                topUps.append((start, max(length, .minutes(1))))
            }
        }
        // Every drawn top-up happens: one that comes while the phone is on a charger starts
        // when that session ends (the person plugs in again), as the key's Poisson count says.
        topUps.sort { $0.start < $1.start }
        for topUp in topUps {
            var start = topUp.start
            while let busy = out.first(where: { $0.start <= start && start < $0.end })
                ?? out.first(where: { start < $0.start && $0.start < start + topUp.length })
            {
                start = max(start, busy.end)
            }
            guard start < horizon else { continue }
            out.append(ChargingSession(start: start, end: min(start + topUp.length, horizon)))
        }
        out.sort { $0.start < $1.start }
        return out
    }
}
