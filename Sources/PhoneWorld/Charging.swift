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
    /// `[topUpFrom, topUpUntil)` and lasting an exponential time with mean `topUpMean`; one
    /// that begins while the phone charges joins that session.
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
    /// night n's times do not depend on earlier nights' outcomes. Top-ups are drawn after all
    /// nights: a Poisson count per day, then a start and a length each (at least a minute).
    /// The phone is on the charger whenever a night or a top-up says so: sessions that overlap
    /// or touch are one session (`ChargingSession.merged`), so a top-up that begins while the
    /// phone charges is no new plug-in, and the plug-ins of top-ups are the Poisson process the
    /// key describes wherever the phone is off the charger.
    public func sessions(until horizon: SimInstant, stream: RandomStream) -> [ChargingSession] {
        var out: [ChargingSession] = []
        let lastNight = horizon.day
        for night in -1...lastNight {
            let charges = stream.bernoulli(nightlyProbability)
            let plugOffset = stream.normal(sigma: plugInJitter.seconds)
            let unplugOffset = stream.normal(sigma: unplugJitter.seconds)
            guard charges else { continue }
            let midnight = SimInstant.after(.days(night))
            // A plug-in time before noon is after midnight, the same night (00:30).
            let plugInOffset = plugIn < .hours(12) ? plugIn + .days(1) : plugIn
            let start = midnight + plugInOffset + SimDuration(seconds: plugOffset)
            let end = midnight + .days(1) + unplug + SimDuration(seconds: unplugOffset)
            guard end - start >= .minutes(1) else { continue }
            out.append(ChargingSession(start: start, end: end))
        }
        if topUpsPerDay > 0 {
            let window = max(topUpUntil - topUpFrom, .zero)
            for day in 0...lastNight {
                let n = stream.poisson(mean: topUpsPerDay)
                for _ in 0..<n {
                    let start = SimInstant.after(.days(day)) + topUpFrom + SimDuration(seconds: stream.uniform() * window.seconds)
                    let length = SimDuration(seconds: stream.exponential(mean: topUpMean.seconds))
                    out.append(ChargingSession(start: start, end: start + max(length, .minutes(1))))
                }
            }
        }
        return ChargingSession.merged(out).compactMap { s in
            let clipped = ChargingSession(start: max(s.start, .start), end: min(s.end, horizon))
            return clipped.start < clipped.end ? clipped : nil
        }
    }
}

extension ChargingSession {
    /// `sessions` in time order, those that overlap or touch joined into one: the phone stays
    /// on the charger, so an unplug and a plug-in at the same instant are no unplug.
    public static func merged(_ sessions: [ChargingSession]) -> [ChargingSession] {
        var out: [ChargingSession] = []
        out.reserveCapacity(sessions.count)
        for s in sessions.sorted(by: { $0.start < $1.start }) {
            if let last = out.last, s.start <= last.end {
                out[out.count - 1].end = max(last.end, s.end)
            } else {
                out.append(s)
            }
        }
        return out
    }
}
