import SimEngine
import SimRandom

/// How the person uses the phone: when they sleep, how often and how long they pick the phone
/// up, which apps they open, and how they leave them.
///
/// Session arrivals are a Poisson process while the person is awake, with a rate shaped by
/// the hour of day; session lengths have an exponential body and a Pareto tail (Falaki et al.,
/// MobiSys 2010: 10-200 sessions a day, mean session 10-250 s, exponential body and
/// shifted-Pareto tail, about 90% of sessions use one app; docs/sources.md §8). Profiles light,
/// median and heavy are files in `models/people/`.
public struct PeopleParameters: Equatable, Sendable {
    /// Mean time of day the person goes to sleep (may be after midnight, such as 00:30).
    public var bedtime: SimDuration = .hours(23)
    /// Mean wake-up time on weekdays.
    public var wakeWeekday: SimDuration = .hours(7)
    /// Mean wake-up time at weekends.
    public var wakeWeekend: SimDuration = .hours(8) + .minutes(30)
    /// Standard deviation of bedtime and wake-up (normal).
    public var sleepJitter: SimDuration = .minutes(30)
    /// Mean sessions per waking day.
    public var sessionsPerDay: Double = 50
    /// Relative session rate in each hour of the day (24 values); only their ratios matter.
    public var hourlyWeights = [Double](repeating: 1, count: 24)
    /// Exponential body of session lengths: its mean.
    public var sessionBodyMean: SimDuration = .seconds(40)
    /// Share of sessions drawn from the Pareto tail instead of the body.
    public var sessionTailShare: Double = 0.1
    /// Minimum (scale) of the Pareto tail; the tail's mean is shape * minimum / (shape - 1).
    public var sessionTailMinimum: SimDuration = .minutes(3)
    /// Shape of the Pareto tail (above 1, so its mean is finite).
    public var sessionTailShape: Double = 2.5
    /// Share of sessions that use a single app (docs/sources.md §8: about 90%); each other session
    /// opens 1 + k apps, k >= 1 geometric with mean `extraAppsMean`.
    public var singleAppShare: Double = 0.9
    /// Mean number of apps beyond the first in a multi-app session.
    public var extraAppsMean: Double = 1.5
    /// Weight of apps outside the scenario (messages, camera...) against the scenario apps'
    /// own `usageWeight`s when picking the app of a launch.
    public var otherAppsWeight: Double = 4
    /// Share of app exits that swipe the app away in the switcher [assumption].
    public var swipeAwayShare: Double = 0.1
    /// Incoming calls per waking day [assumption].
    public var callsPerDay: Double = 1
    /// Mean length of a call (exponential) [assumption].
    public var callMean: SimDuration = .minutes(3)
    /// Probability of accepting the Low Power Mode prompt at 20% and at 10% [assumption].
    public var lowPowerAcceptShare: Double = 0.5
    /// Chance that the person opening an app makes memory pressure purge one suspended app
    /// (memory pressure comes from use) [assumption].
    public var purgePerLaunch: Double = 0.2
    /// How long the person has used the phone before the run: the system's record of app use
    /// (what iOS's predictor and Android's standby buckets learn from) starts this long
    /// before the run, drawn from this model [assumption: 14 days, enough for a week's
    /// habits].
    public var history: SimDuration = .days(14)
    /// Interruptions that leave the app in use inactive without sending it to the background
    /// (Notification Centre or Control Centre pulled over it, a call declined), per hour of
    /// use [assumption].
    public var interruptionsPerHour: Double = 2
    /// Mean length of an interruption (exponential) [assumption].
    public var interruptionMean: SimDuration = .seconds(5)
    /// How habitual this person is: each app habit's strength is multiplied by it (at most 1).
    public var habitScale: Double = 1

    /// A person with the defaults above.
    public init() {}

    /// Launches of apps a day these parameters give on average: each session opens one app,
    /// or with `1 - singleAppShare` chance `1 + extraAppsMean` on average.
    public var launchesPerDay: Double { sessionsPerDay * (1 + (1 - singleAppShare) * extraAppsMean) }

    /// The most of the person's launches that apps given as opens a day may take together:
    /// the rest goes to the other apps, so a person who picks the phone up rarely is not made
    /// to open it more.
    public static let maxOpensShare = 0.9

    /// Each app's weight in the choice of a launch's app: its `usageWeight`, or for an app
    /// given as opens a day the weight that gives it that many of the person's launches
    /// (`launchesPerDay`), the person's total unchanged. When such apps ask for more than
    /// `maxOpensShare` of the launches together, they share that much in proportion. A habit
    /// raises an app's weight where the person uses the phone least as well as most, so its
    /// share under a habit is found by iteration: the expected opens under the habits, over a
    /// week of five weekdays and two weekend days, are brought to the target.
    public func appWeights(_ apps: [AppParameters]) -> [Double] {
        let total = launchesPerDay
        let asked = apps.reduce(0.0) { $0 + ($1.opensPerDay ?? 0) }
        guard asked > 0, total > 0 else { return apps.map { $0.opensPerDay == nil ? $0.usageWeight : 0 } }
        let scale = min(1, Self.maxOpensShare * total / asked)
        let fixedShare = asked * scale / total
        // The apps given by weight and the apps outside the scenario share the rest.
        let rest = apps.reduce(otherAppsWeight) { $0 + ($1.opensPerDay == nil ? $1.usageWeight : 0) }
        let perShare = rest / (1 - fixedShare)
        var weights = apps.map { a in a.opensPerDay.map { perShare * $0 * scale / total } ?? a.usageWeight }
        guard apps.contains(where: { $0.habit != nil && $0.opensPerDay != nil }) else { return weights }
        // Per day type, each bin's share of the day's sessions and each app's habit factor.
        let days: [(share: Double, rate: [Double], factors: [[Double]?])] = [(5.0 / 7, false), (2.0 / 7, true)].map { share, weekend in
            let rate = sessionRate(weekend: weekend)
            let sum = rate.reduce(0, +)
            let factors = apps.map { a in
                a.habit.map { h in
                    let strength = min(1, h.strength * habitScale)
                    return h.profile(weekend: weekend, rate: rate).map { (1 - strength) + strength * $0 }
                }
            }
            return (share, sum > 0 ? rate.map { $0 / sum } : rate, factors)
        }
        for _ in 0..<40 {
            var expected = [Double](repeating: 0, count: apps.count)
            for day in days {
                for b in 0..<AppHabit.binsPerDay where day.rate[b] > 0 {
                    var sum = otherAppsWeight
                    for a in apps.indices { sum += weights[a] * (day.factors[a]?[b] ?? 1) }
                    for a in apps.indices { expected[a] += day.share * day.rate[b] * weights[a] * (day.factors[a]?[b] ?? 1) / sum }
                }
            }
            for a in apps.indices {
                if let opens = apps[a].opensPerDay, expected[a] > 0 { weights[a] *= opens * scale / (expected[a] * total) }
            }
        }
        return weights
    }

    /// The mean session length these parameters give.
    public var meanSessionLength: SimDuration {
        let tail = sessionTailShape * sessionTailMinimum.seconds / (sessionTailShape - 1)
        return SimDuration(seconds: (1 - sessionTailShare) * sessionBodyMean.seconds + sessionTailShare * tail)
    }

    /// Nobody uses the phone: no sessions, calls or purges, and nobody did before the run.
    public static var absent: PeopleParameters {
        var p = PeopleParameters()
        p.sessionsPerDay = 0
        p.callsPerDay = 0
        p.purgePerLaunch = 0
        p.history = .zero
        return p
    }
}

/// The person opens an app for `[start, end)` and then leaves it, swiping it away or not.
public struct AppLaunch: Equatable, Sendable {
    /// Index into the scenario's apps, or `nil` for an app outside the scenario.
    public var app: Int?
    /// When the person opens it.
    public var start: SimInstant
    /// When the person leaves it.
    public var end: SimInstant
    /// Whether the person swiped it away on leaving.
    public var swipedAway: Bool
    /// A launch of `app` over `[start, end)`.
    public init(app: Int?, start: SimInstant, end: SimInstant, swipedAway: Bool) {
        self.app = app
        self.start = start
        self.end = end
        self.swipedAway = swipedAway
    }
}

/// An incoming call over `[start, end)`.
public struct Call: Equatable, Sendable {
    /// When the call starts.
    public var start: SimInstant
    /// When it ends.
    public var end: SimInstant
    /// A call over `[start, end)`.
    public init(start: SimInstant, end: SimInstant) {
        self.start = start
        self.end = end
    }
}

/// The person pulls Notification Centre or Control Centre over the app in use, or declines a
/// call, over `[start, end)`: the app is inactive, still in the foreground (docs/sources.md §1).
public struct Interruption: Equatable, Sendable {
    /// The app in use, an index into the scenario's apps.
    public var app: Int
    /// When the app resigns active.
    public var start: SimInstant
    /// When it becomes active again.
    public var end: SimInstant
    /// An interruption of `app` over `[start, end)`.
    public init(app: Int, start: SimInstant, end: SimInstant) {
        self.app = app
        self.start = start
        self.end = end
    }
}

/// Memory pressure purges one suspended app at `time`: the app a trace names, or else the
/// one `pick` (uniform in [0, 1)) selects among the apps suspended then. Drawing `pick` in
/// advance keeps the purge stream the same whichever apps a policy's run has in memory.
/// Drawn purges come with launches (`PeopleTimeline.drawPurges`).
public struct Purge: Equatable, Sendable {
    /// When the purge happens.
    public var time: SimInstant
    /// The app purged, when a trace names it.
    public var app: Int?
    /// Uniform in [0, 1): picks the app among those suspended at `time`.
    public var pick: Double
    /// A purge at `time`, of `app` or of the one `pick` selects.
    public init(time: SimInstant, app: Int? = nil, pick: Double = 0) {
        self.time = time
        self.app = app
        self.pick = pick
    }
}

/// Everything the person does over a run, in time order within each list.
public struct PeopleTimeline: Equatable, Sendable {
    /// Waking periods `[wake, bedtime)`, one per day.
    public var awake: [ClosedRange<SimInstant>] = []
    /// App launches; launches of one session follow each other without a gap, and launches
    /// never overlap.
    public var launches: [AppLaunch] = []
    /// Index into `launches` of each session's first launch (a session is one pick-up of
    /// the phone; its launches follow each other without a gap).
    public var sessionStarts: [Int] = []
    /// Incoming calls.
    public var calls: [Call] = []
    /// Memory-pressure purges of one suspended app each.
    public var purges: [Purge] = []
    /// Interruptions of the app in use, in time order, each inside one launch.
    public var interruptions: [Interruption] = []
    /// A person who does nothing.
    public init() {}

    /// Interruptions of the launches of scenario apps: a Poisson process of `perHour` over
    /// each launch, lengths exponential with mean `mean`, each ending before its launch does
    /// (one that would not is not drawn) and before the next begins. Stream `interruptions`,
    /// launch by launch, so traces and drawn people get them alike.
    public func drawInterruptions(perHour: Double, mean: SimDuration, stream: RandomStream) -> [Interruption] {
        Self.drawInterruptions(of: launches[...], perHour: perHour, mean: mean, stream: stream)
    }

    /// Memory-pressure purges of some of the launches: each purges a suspended app as it
    /// starts with probability `chance`. Stream `purges`, two draws a launch (whether, and
    /// which app), so a change of `chance` does not move the later launches' picks.
    public static func drawPurges(of launches: ArraySlice<AppLaunch>, chance: Double, stream: RandomStream) -> [Purge] {
        guard chance > 0 else { return [] }
        var out: [Purge] = []
        for launch in launches {
            let purges = stream.bernoulli(chance)
            let pick = stream.uniform()
            // As the app opens, so never the app being opened.
            if purges { out.append(Purge(time: launch.start + .milliseconds(1), pick: pick)) }
        }
        return out
    }

    /// `drawInterruptions` of some of the launches (those a stretch of days added).
    public static func drawInterruptions(
        of launches: ArraySlice<AppLaunch>, perHour: Double, mean: SimDuration, stream: RandomStream
    ) -> [Interruption] {
        guard perHour > 0 else { return [] }
        var out: [Interruption] = []
        for launch in launches {
            guard let app = launch.app else { continue }
            var t = launch.start
            while true {
                t += SimDuration(seconds: stream.exponential(mean: 3600 / perHour))
                guard t < launch.end else { break }
                let end = t + max(SimDuration(seconds: stream.exponential(mean: mean.seconds)), .milliseconds(1))
                guard end < launch.end else { break }
                out.append(Interruption(app: app, start: t, end: end))
                t = end
            }
        }
        return out
    }
}

extension PeopleParameters {
    /// The person's routine and phone use over `[0, horizon)`.
    ///
    /// Streams: `people` for sleep, sessions, apps and calls; `purges` for purge times, so
    /// changing how the person uses the phone does not move the purges. Each waking day
    /// draws its sessions from a Poisson process whose rate is `sessionsPerDay` spread over
    /// the waking hours by `hourlyWeights`, so the expected count per waking day is exactly
    /// `sessionsPerDay`. A session that arrives while the previous one lasts starts when it
    /// ends (the person keeps using the phone).
    ///
    /// - Parameters:
    ///   - horizon: the end of the span.
    ///   - appWeights: each scenario app's usage weight.
    ///   - habits: each scenario app's habit, if it has one (none: every app whenever).
    ///   - people: the stream of sleep, sessions, apps and calls.
    ///   - purgeStream: the stream of purges (which launches bring one, and which app).
    public func timeline(
        until horizon: SimInstant, appWeights: [Double], habits: [AppHabit?] = [], people: RandomStream,
        purges purgeStream: RandomStream
    ) -> PeopleTimeline {
        var out = PeopleTimeline()
        var days = PeopleDays(self, until: horizon, appWeights: appWeights, habits: habits, people: people)
        days.draw(through: horizon, into: &out)
        out.purges = PeopleTimeline.drawPurges(of: out.launches[...], chance: purgePerLaunch, stream: purgeStream)
        return out
    }

    /// The person's session rate per five-minute bin of a weekday or weekend day: the hourly
    /// weights between the mean wake-up time and the mean bedtime.
    func sessionRate(weekend: Bool) -> [Double] {
        let wake = (weekend ? wakeWeekend : wakeWeekday).hours
        let bed = bedtime < .hours(12) ? bedtime.hours + 24 : bedtime.hours
        return (0..<AppHabit.binsPerDay).map { b in
            let t = (Double(b) + 0.5) * AppHabit.bin.hours
            let awake = (t >= wake && t < bed) || t + 24 < bed
            return awake ? hourlyWeights[b / 12] : 0
        }
    }

    func drawSessionLength(_ stream: RandomStream) -> SimDuration {
        // Both draws always happen, so the body/tail choice does not shift later numbers.
        let tail = stream.bernoulli(sessionTailShare)
        let body = stream.exponential(mean: sessionBodyMean.seconds)
        let pareto = stream.pareto(shape: sessionTailShape, minimum: sessionTailMinimum.seconds)
        // At most a week: a heavy tail's rare draw (or a hostile shape) would otherwise keep
        // the phone in use for centuries, with interruptions drawn over all of it.
        return min(SimDuration(seconds: tail ? pareto : body), .days(7))
    }

    /// A geometric count on {0, 1, ...} with the given mean.
    func geometric(mean: Double, _ stream: RandomStream) -> Int {
        guard mean > 0 else { return 0 }
        let p = 1 / (1 + mean)
        var n = 0
        while !stream.bernoulli(p) { n += 1 }
        return n
    }
}

/// The choice of a launch's app when some apps have habits: their weights depend on the time
/// of day and the day type. One uniform draw per choice, by the cumulative weights.
struct HabitualChoice {
    /// Per day type (weekday, weekend), per bin, the cumulative weights of the scenario's apps
    /// and then of the other apps.
    let cumulative: [[[Double]]]

    /// `nil` when no app has a habit, so that the draws stay those of the plain choice.
    init?(_ person: PeopleParameters, appWeights: [Double], habits: [AppHabit?]) {
        guard habits.contains(where: { $0 != nil }) else { return nil }
        cumulative = [false, true].map { weekend in
            let rate = person.sessionRate(weekend: weekend)
            let profiles = appWeights.indices.map { a in
                a < habits.count ? habits[a].map { (min(1, $0.strength * person.habitScale), $0.profile(weekend: weekend, rate: rate)) } : nil
            }
            return (0..<AppHabit.binsPerDay).map { b in
                var sum = 0.0
                var out: [Double] = []
                out.reserveCapacity(appWeights.count + 1)
                for (a, w) in appWeights.enumerated() {
                    if let (strength, profile) = profiles[a] { sum += w * ((1 - strength) + strength * profile[b]) } else { sum += w }
                    out.append(sum)
                }
                out.append(sum + person.otherAppsWeight)
                return out
            }
        }
    }

    /// The app a launch at `time` opens: an index into the scenario's apps, or their count for
    /// another app.
    func sample(at time: SimInstant, using stream: RandomStream) -> Int {
        let weekend = NetworkEnvironment.isWeekend(day: time.day)
        let bin = Int(time.timeOfDay.microseconds / AppHabit.bin.microseconds)
        let c = cumulative[weekend ? 1 : 0][bin]
        let u = stream.uniform() * c[c.count - 1]
        return c.firstIndex { u < $0 } ?? c.count - 1
    }
}
