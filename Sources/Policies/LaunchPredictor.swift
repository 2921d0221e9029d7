import PolicyAPI
import SimEngine

/// An online per-app launch predictor, learned from the simulated history as it happens.
///
/// The day is cut into bins of `binWidth` (7.5 minutes: dasd predicts launches about 7.5 min
/// ahead, docs/sources.md §4). For each app and bin it counts the days on which the person opened the
/// app in that bin, and estimates the probability of a launch in that bin as
/// `(days with a launch + prior * priorDays) / (days the bin has elapsed + priorDays)`: the
/// prior (dasd's default 0.0025) until history outweighs it.
struct LaunchPredictor: Sendable {
    /// Width of a time-of-day bin (default 7.5 minutes).
    var binWidth: SimDuration
    /// Launch probability of a bin before any history (dasd's default, 0.0025).
    var prior: Double
    /// How many days of history the prior weighs as.
    var priorDays: Double

    var binsPerDay: Int
    /// Per app and bin (at `app * binsPerDay + bin`): days with a launch, and the last day
    /// counted (so a day counts once). One flat array: a nested one cost a retain and a
    /// release per read, and the application score reads two bins per app per bin.
    var bins: [Bin] = []
    /// How many apps `bins` holds.
    var apps = 0

    struct Bin {
        var hits: Int32 = 0
        var lastDay: Int32 = .min
    }
    /// The first day of the record (`UsageHistory.since`): days elapsed count from it.
    var firstDay: Int64 = 0
    /// Per app, how many of its launches have been read from the history, and in all.
    var cursor: [Int] = []
    var learned = 0

    /// A predictor with no history yet.
    init(binWidth: SimDuration = .seconds(450), prior: Double = 0.0025, priorDays: Double = 1) {
        precondition(
            binWidth > .zero && SimDuration.days(1).microseconds % binWidth.microseconds == 0,
            "the bin width must divide a day")
        self.binWidth = binWidth
        self.prior = prior
        self.priorDays = priorDays
        self.binsPerDay = Int(SimDuration.days(1).microseconds / binWidth.microseconds)
    }

    func bin(of time: SimInstant) -> Int { Int(time.timeOfDay.microseconds / binWidth.microseconds) }

    /// Whether `usage` has launches, or apps, not yet learned.
    @inline(__always)
    func hasNew(_ usage: UsageHistory) -> Bool { usage.launchCount != learned || apps < usage.apps.count }

    /// Reads launches added to `usage` since the last call.
    mutating func learn(_ usage: UsageHistory) {
        guard hasNew(usage) else { return }
        learned = usage.launchCount
        firstDay = usage.since.day
        if apps < usage.apps.count {
            bins += Array(repeating: Bin(), count: (usage.apps.count - apps) * binsPerDay)
            cursor += Array(repeating: 0, count: usage.apps.count - apps)
            apps = usage.apps.count
        }
        for a in usage.apps.indices {
            let launches = usage.apps[a].launches
            while cursor[a] < launches.count {
                let t = launches[cursor[a]]
                cursor[a] += 1
                let k = a * binsPerDay + bin(of: t), day = Int32(t.day)
                if bins[k].lastDay != day {
                    bins[k].lastDay = day
                    bins[k].hits += 1
                }
            }
        }
    }

    /// Probability that the person opens `app` in the bin that starts at `binStart` (a bin
    /// boundary), from the days before `binStart`'s day.
    func probability(app: Int, binStart: SimInstant) -> Double { probability(app: app, place(binStart)) }

    /// A bin's start as `probability` reads it: its index in the day, its day, and the days of
    /// the record on which it has already passed, before its own. The same for every app, so
    /// worked out once per bin rather than per app (`DuetPolicy.rescore`).
    struct Place {
        var index: Int
        var day: Int64
        var elapsed: Double
    }

    func place(_ binStart: SimInstant) -> Place {
        Place(index: bin(of: binStart), day: binStart.day, elapsed: Double(max(0, binStart.day - firstDay)))
    }

    func probability(app: Int, _ place: Place) -> Double {
        var h = 0.0
        if app < apps {
            // A launch already seen in this bin on its own day is not history yet.
            let bin = bins[app * binsPerDay + place.index]
            h = Double(bin.hits) - (Int64(bin.lastDay) == place.day ? 1 : 0)
        }
        return min(1, (h + prior * priorDays) / (place.elapsed + priorDays))
    }

    /// Sets `places` to those of the bins from `first` to `last`, the bins' starts (as
    /// `forEachProbability` visits them), in place: a new array at each bin was a malloc.
    func places(from first: SimInstant, to last: SimInstant, into places: inout [Place]) {
        var k = 0, start = first
        while start <= last {
            if k < places.count { places[k] = place(start) } else { places.append(place(start)) }
            k += 1
            start += binWidth
        }
        if k < places.count { places.removeLast(places.count - k) }
    }

    /// How many of `app`'s launches have been learned: its probabilities change only with it
    /// (and the bin and the record's first day).
    func learnedLaunches(of app: Int) -> Int { app < cursor.count ? cursor[app] : 0 }

    /// The start of the bin that holds `time`.
    func binStart(of time: SimInstant) -> SimInstant {
        time - SimDuration(microseconds: time.timeOfDay.microseconds % binWidth.microseconds)
    }

    /// Calls `body` with the launch probability of `app` for each bin that overlaps
    /// `[now, now + lookahead]`, in time order (a closure, not an array: this runs per
    /// decision). At a bin boundary that is the current bin and the next.
    func forEachProbability(app: Int, now: SimInstant, lookahead: SimDuration, _ body: (Double) -> Void) {
        var start = binStart(of: now)
        let end = now + lookahead
        repeat {
            body(probability(app: app, binStart: start))
            start += binWidth
        } while start <= end
    }
}
