import SimEngine
import SimRandom

/// The person's days drawn a stretch at a time, so that a run need not hold its whole
/// horizon: the same draws in the same order as one pass over every day
/// (`PeopleParameters.timeline`), which is this drawn to the end.
///
/// Each waking day draws its sessions from a Poisson process whose rate is `sessionsPerDay`
/// spread over the waking hours by `hourlyWeights`; a session that arrives while the previous
/// one lasts starts when it ends. Calls are a Poisson number per waking day at uniform times;
/// one that rings during another starts after it, carried across stretches.
public struct PeopleDays {
    let person: PeopleParameters
    let choice: LaunchChoice
    let people: RandomStream
    let lastDay: Int64
    /// The next day to draw.
    public private(set) var day: Int64 = 0
    var busyUntil = SimInstant.start
    var lastAwakeEnd: SimInstant?
    var lastCallEnd: SimInstant?
    /// Launches drawn so far, over every stretch (the global index of the next).
    public private(set) var launchesDrawn = 0

    /// Days from `firstDay` (0, or before the run for the person's history) to the one holding
    /// the last instant before `horizon`.
    public init(
        _ person: PeopleParameters, from firstDay: Int64 = 0, until horizon: SimInstant, appWeights: [Double], habits: [AppHabit?],
        people: RandomStream
    ) {
        self.init(person, from: firstDay, until: horizon, apps: LaunchChoice(person, appWeights: appWeights, habits: habits), people: people)
    }

    /// The same, choosing each launch's app by `apps`, made once for the person's days of the
    /// run and of the history before it.
    package init(_ person: PeopleParameters, from firstDay: Int64 = 0, until horizon: SimInstant, apps: LaunchChoice, people: RandomStream) {
        self.person = person
        self.choice = apps
        self.people = people
        self.day = firstDay
        self.busyUntil = SimInstant.after(.days(firstDay))
        self.lastDay = max(firstDay, (horizon - .microseconds(1)).day)
    }

    /// Whether every day has been drawn.
    public var isFinished: Bool { day > lastDay }

    /// Draws the days that begin before `time`, appending to `out` (session starts as global
    /// launch indices).
    public mutating func draw(through time: SimInstant, into out: inout PeopleTimeline) {
        var calls: [Call] = []
        while day <= lastDay, SimInstant.after(.days(day)) < time {
            drawDay(into: &out, calls: &calls)
            day += 1
        }
        // Sorted within the stretch: a later day's calls start after an earlier day's (waking
        // windows do not overlap), so stretches sort as the whole would.
        calls.sort { $0.start < $1.start }
        for i in calls.indices {
            if let end = i > 0 ? calls[i - 1].end : lastCallEnd, calls[i].start < end {
                let length = calls[i].end - calls[i].start
                calls[i].start = end
                calls[i].end = end + length
            }
        }
        lastCallEnd = calls.last?.end ?? lastCallEnd
        out.calls += calls
    }

    mutating func drawDay(into out: inout PeopleTimeline, calls: inout [Call]) {
        let p = person
        let midnight = SimInstant.after(.days(day))
        let wakeMean = NetworkEnvironment.isWeekend(day: day) ? p.wakeWeekend : p.wakeWeekday
        var wake = midnight + wakeMean + SimDuration(seconds: people.normal(sigma: p.sleepJitter.seconds))
        // Bedtime before noon means after midnight (00:30 is the next day's).
        let bedOffset = p.bedtime < .hours(12) ? p.bedtime + .days(1) : p.bedtime
        var bed = midnight + bedOffset + SimDuration(seconds: people.normal(sigma: p.sleepJitter.seconds))
        wake = max(wake, lastAwakeEnd ?? wake)
        bed = max(bed, wake)
        lastAwakeEnd = bed
        out.awake.append(wake...bed)

        // Sessions: piecewise-constant rate, one piece per clock hour inside [wake, bed).
        var pieces: [(SimInstant, SimInstant, Double)] = []
        var t = wake
        while t < bed {
            // Hours since the start, rounded down (a history's days are before it).
            let hours = (t.microseconds - t.timeOfDay.microseconds) / 3_600_000_000 + t.timeOfDay.microseconds / 3_600_000_000
            let end = min(SimInstant.after(.hours(hours + 1)), bed)
            let hour = Int(t.timeOfDay.microseconds / 3_600_000_000)
            pieces.append((t, end, p.hourlyWeights[hour]))
            t = end
        }
        let weightHours = pieces.reduce(0.0) { $0 + $1.2 * ($1.1 - $1.0).hours }
        let perWeightHour = weightHours > 0 ? p.sessionsPerDay / weightHours : 0
        var arrivals: [SimInstant] = []
        for (start, end, w) in pieces where w > 0 && perWeightHour > 0 {
            let meanGap = 3600 / (w * perWeightHour)
            var a = start + SimDuration(seconds: people.exponential(mean: meanGap))
            while a < end {
                arrivals.append(a)
                a = a + SimDuration(seconds: people.exponential(mean: meanGap))
            }
        }
        for arrival in arrivals {
            let length = max(p.drawSessionLength(people), .microseconds(1))
            let apps = people.bernoulli(p.singleAppShare) ? 1 : 2 + p.geometric(mean: p.extraAppsMean - 1, people)
            var s = max(arrival, busyUntil)
            let end = s + length
            out.sessionStarts.append(launchesDrawn)
            for k in 0..<apps {
                let e = k == apps - 1 ? end : s + SimDuration(microseconds: length.microseconds / Int64(apps))
                let pick = choice.habitual?.sample(at: s, using: people) ?? choice.plain?.sample(using: people) ?? choice.count
                let swiped = people.bernoulli(p.swipeAwayShare)
                if e > s {
                    out.launches.append(AppLaunch(app: pick < choice.count ? pick : nil, start: s, end: e, swipedAway: swiped))
                    launchesDrawn += 1
                }
                s = e
            }
            busyUntil = end
        }

        // Calls: a Poisson number per waking day at uniform times.
        let count = people.poisson(mean: p.callsPerDay)
        for _ in 0..<count {
            let start = wake + SimDuration(seconds: people.uniform() * (bed - wake).seconds)
            let length = SimDuration(seconds: people.exponential(mean: p.callMean.seconds))
            calls.append(Call(start: start, end: start + length))
        }
    }
}

/// The choice of a launch's app among a person's apps and the apps outside the scenario: the
/// plain weighted choice, or by time of day when some app has a habit. Worked out once per
/// person (the habits' tables are most of a short run's setting up) and shared by the run's
/// days and the history's.
package struct LaunchChoice {
    /// The scenario's apps; a pick of `count` is an app outside the scenario.
    let count: Int
    let plain: WeightedChoice?
    let habitual: HabitualChoice?

    /// The choice among apps of weights `appWeights` (`PeopleParameters.appWeights`) and habits `habits`.
    package init(_ person: PeopleParameters, appWeights: [Double], habits: [AppHabit?]) {
        count = appWeights.count
        plain = try? WeightedChoice(weights: appWeights + [person.otherAppsWeight])
        habitual = HabitualChoice(person, appWeights: appWeights, habits: habits)
    }
}
