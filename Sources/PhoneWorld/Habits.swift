import Foundation
import SimEngine
import Synchronization

/// When in the day a person tends to open an app (docs/sources.md §8: news in the morning,
/// games at night, tools on waking), and how strongly its launches follow that habit.
///
/// The habit reshapes which app a session opens, not how many sessions there are: at time t
/// the app's weight in the choice of a launch's app is `usage_weight × ((1 − strength) +
/// strength × profile(t))`, where the profile, one per day type, is the hourly weights plus a
/// bump `weight × exp(−d² / 2 spread²)` around each anchor (d the distance to it on the
/// 24-hour clock), scaled so that its mean under the person's session rate over their waking
/// day is 1. So the person's sessions a day and their lengths are unchanged, and the app's share
/// of launches stays close to what `usage_weight` gives; what moves is when they happen.
public struct AppHabit: Hashable, Sendable {
    /// The days a routine holds on.
    public enum Days: String, Hashable, Sendable, CaseIterable {
        /// Every day.
        case all
        /// Monday to Friday (day 0 is a Monday).
        case weekdays
        /// Saturday and Sunday.
        case weekends
    }

    /// A routine use: around `at` (a time of day), give or take `spread`, on `days`.
    public struct Anchor: Hashable, Sendable {
        /// The time of day of the routine.
        public var at: SimDuration
        /// The standard deviation of its time.
        public var spread: SimDuration
        /// The days it holds on.
        public var days: Days
        /// Its peak, on the scale of the hourly weights.
        public var weight: Double
        /// A routine around `at`, give or take `spread`, on `days`, peaking at `weight`.
        public init(at: SimDuration, spread: SimDuration, days: Days = .all, weight: Double = 1) {
            self.at = at
            self.spread = spread
            self.days = days
            self.weight = weight
        }
    }

    /// The share, from 0 to 1, of the app's choice weight that follows the profile; the rest
    /// follows the person's general rhythm.
    public var strength: Double = 0.5
    /// Routine uses.
    public var anchors: [Anchor] = []
    /// Relative use in each hour of a weekday (24 values), under the anchors; `nil`: none.
    public var hourly: [Double]?
    /// The same for weekends; `nil`: `hourly`.
    public var weekendHourly: [Double]?

    /// A habit of `strength` with no routine yet.
    public init(strength: Double = 0.5, anchors: [Anchor] = [], hourly: [Double]? = nil, weekendHourly: [Double]? = nil) {
        self.strength = strength
        self.anchors = anchors
        self.hourly = hourly
        self.weekendHourly = weekendHourly
    }

    /// Bins of the profile: five minutes each.
    public static let binsPerDay = 288
    /// The length of a bin.
    public static let bin = SimDuration.minutes(5)

    /// The profile of one day type, per bin from midnight, scaled to mean 1 under `rate` (the
    /// person's session rate per bin over the waking day); flat where the habit says nothing
    /// of that day type or all of it falls where the rate is zero.
    public func profile(weekend: Bool, rate: [Double]) -> [Double] {
        precondition(rate.count == Self.binsPerDay, "one rate per bin")
        let p = Self.shapes.shape(of: self, weekend: weekend)
        let weighted = zip(p, rate).reduce(0.0) { $0 + $1.0 * $1.1 }
        let total = rate.reduce(0, +)
        guard weighted > 0, total > 0 else { return [Double](repeating: 1, count: Self.binsPerDay) }
        let scale = total / weighted
        return p.map { $0 * scale }
    }

    /// The profile of one day type before its scaling, per bin: the hourly weight plus the
    /// anchors' bumps.
    func shape(weekend: Bool) -> [Double] {
        let hours = weekend ? (weekendHourly ?? hourly) : hourly
        var p = [Double](repeating: 0, count: Self.binsPerDay)
        for b in 0..<Self.binsPerDay {
            let t = (Double(b) + 0.5) * Self.bin.hours
            var v = hours?[b / 12] ?? 0
            for a in anchors where a.days == .all || (a.days == .weekends) == weekend {
                var d = abs(t - a.at.hours).truncatingRemainder(dividingBy: 24)
                if d > 12 { d = 24 - d }
                let sd = max(a.spread.hours, 1e-6)
                v += a.weight * exp(-d * d / (2 * sd * sd))
            }
            p[b] = v
        }
        return p
    }

    /// The shapes made so far, by habit and day type: the people of a fleet or a forecast share
    /// their apps' habits, and making the shapes (an `exp` per bin and anchor) was most of each
    /// person's choice of apps, 2 M instructions a forecast's person (callgrind). Kept for the
    /// process, at most 512.
    static let shapes = Shapes()

    final class Shapes: Sendable {
        private let made = Mutex<[ShapeKey: [Double]]>([:])

        struct ShapeKey: Hashable {
            var habit: AppHabit
            var weekend: Bool
        }

        func shape(of habit: AppHabit, weekend: Bool) -> [Double] {
            let key = ShapeKey(habit: habit, weekend: weekend)
            if let shape = made.withLock({ $0[key] }) { return shape }
            let shape = habit.shape(weekend: weekend)
            made.withLock { made in
                if made.count >= 512 { made.removeAll(keepingCapacity: true) }
                made[key] = shape
            }
            return shape
        }
    }
}

extension PeopleTimeline {
    /// How predictable by the hour of day `launches` of the scenario's `apps` apps are: 1 − H /
    /// log2 24, where H is the mean over apps, weighted by their launches, of the entropy in
    /// bits of the hour of day of each app's launches, with the Miller-Madow correction for a
    /// finite sample. 0: every app's launches spread evenly over the 24 hours; 1: each app's
    /// launches all in one hour. The correction is first-order: with few launches a person
    /// still looks somewhat more predictable, so compare people of similar use. `nan` without
    /// a launch of a scenario app.
    public static func launchPredictability(_ launches: some Collection<AppLaunch>, apps: Int) -> Double {
        var counts = LaunchHours(apps: apps)
        for launch in launches { counts.add(launch) }
        return counts.predictability
    }
}

/// Launches counted by app and hour of the day, as a run draws them: what
/// `launchPredictability` needs, without keeping the launches.
public struct LaunchHours: Sendable {
    let apps: Int
    var counts: [Int]
    var total = 0

    /// No launches of `apps` apps yet.
    public init(apps: Int) {
        self.apps = apps
        counts = [Int](repeating: 0, count: apps * 24)
    }

    /// Counts `launch` (one of an app outside the scenario counts for nothing).
    public mutating func add(_ launch: AppLaunch) {
        guard let a = launch.app, a < apps else { return }
        counts[a * 24 + Int(launch.start.timeOfDay.microseconds / 3_600_000_000)] += 1
        total += 1
    }

    /// `PeopleTimeline.launchPredictability` of the launches counted.
    public var predictability: Double {
        guard total > 0 else { return .nan }
        var weighted = 0.0
        for a in 0..<apps {
            let row = counts[(a * 24)..<(a * 24 + 24)]
            let n = row.reduce(0, +)
            guard n > 0 else { continue }
            var h = 0.0
            for c in row where c > 0 {
                let p = Double(c) / Double(n)
                h -= p * log2(p)
            }
            // Miller-Madow: the plug-in entropy of n draws falls short by about (k - 1) / 2n
            // nats, k the occupied hours; without it a light user looked predictable.
            let occupied = row.filter { $0 > 0 }.count
            h = min(log2(24), h + Double(occupied - 1) / (2 * Double(n) * log(2)))
            weighted += Double(n) * h
        }
        return 1 - weighted / Double(total) / log2(24)
    }
}
