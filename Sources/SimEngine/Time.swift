/// A span of simulated time, in integer microseconds.
///
/// Time is an integer so that event order and results are exact and reproducible: two runs
/// that add the same durations reach the same instant, on every machine. A microsecond
/// resolves the shortest physical effect bgsim models (radio promotions of tens of
/// milliseconds) while an `Int64` still spans about 292,000 years.
///
/// Build durations with the unit constructors: `.seconds(30)`, `.minutes(15)`, `.hours(8)`.
public struct SimDuration: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The duration in microseconds.
    public var microseconds: Int64

    /// A duration of exactly `microseconds`.
    @inlinable
    public init(microseconds: Int64) { self.microseconds = microseconds }

    // Constants are inlinable computed properties rather than `static let` globals, which
    // other modules reach through an accessor with a once-check at every use.
    /// No time at all.
    @inlinable public static var zero: SimDuration { SimDuration(microseconds: 0) }

    /// `n` microseconds.
    @inlinable public static func microseconds(_ n: Int64) -> SimDuration { .init(microseconds: n) }
    /// `n` milliseconds.
    @inlinable public static func milliseconds(_ n: Int64) -> SimDuration { .init(microseconds: n * 1_000) }
    /// `n` seconds.
    @inlinable public static func seconds(_ n: Int64) -> SimDuration { .init(microseconds: n * 1_000_000) }
    /// `n` minutes.
    @inlinable public static func minutes(_ n: Int64) -> SimDuration { .init(microseconds: n * 60_000_000) }
    /// `n` hours.
    @inlinable public static func hours(_ n: Int64) -> SimDuration { .init(microseconds: n * 3_600_000_000) }
    /// `n` days of 24 hours (simulated time has no daylight-saving changes).
    @inlinable public static func days(_ n: Int64) -> SimDuration { .init(microseconds: n * 86_400_000_000) }

    /// The longest duration a real number of seconds becomes: about 317 years, past every
    /// horizon (at most 100 years), and small enough that adding a few to an instant never
    /// overflows. A draw from a wide distribution or a size over a tiny throughput saturates
    /// here instead of trapping.
    @inlinable public static var far: SimDuration { SimDuration(microseconds: 10_000_000_000_000_000) }

    /// A duration from a real number of seconds, rounded to the nearest microsecond, and
    /// saturated at `±far` (not a number: `far`).
    ///
    /// Random draws arrive as `Double`; this is the one place they become integer time.
    @inlinable
    public init(seconds: Double) {
        let us = seconds * 1e6
        guard us.magnitude < 1e16 else {
            self = us < 0 ? SimDuration(microseconds: -Self.far.microseconds) : Self.far
            return
        }
        // Half away from zero, by hand: `.rounded()` is a libm call, and this runs per event.
        self.init(microseconds: Int64(us + (us < 0 ? -0.5 : 0.5)))
    }

    /// A duration of at least `seconds`, rounded up to the microsecond, saturated at `far`.
    @inlinable
    public init(secondsRoundedUp seconds: Double) { self.init(microsecondsRoundedUp: seconds * 1e6) }

    /// A duration of at least `us` microseconds, rounded up, saturated at `far`.
    @inlinable
    public init(microsecondsRoundedUp us: Double) {
        guard us.magnitude < 1e16 else {
            self = us < 0 ? SimDuration(microseconds: -Self.far.microseconds) : Self.far
            return
        }
        // Up by hand: `.rounded(.up)` is a libm call, and this runs per radio phase. Truncation
        // is exact beyond 2^53, where a Double has no fraction.
        let t = Int64(us)
        self.init(microseconds: Double(t) < us ? t + 1 : t)
    }

    /// The duration in seconds, as a real number (for energy and rate arithmetic).
    @inlinable public var seconds: Double { Double(microseconds) / 1e6 }
    /// The duration in hours, as a real number.
    @inlinable public var hours: Double { Double(microseconds) / 3.6e9 }

    /// Whether `a` is shorter than `b`.
    @inlinable public static func < (a: SimDuration, b: SimDuration) -> Bool { a.microseconds < b.microseconds }
    /// The sum of two durations; traps on overflow, as integer arithmetic does.
    @inlinable public static func + (a: SimDuration, b: SimDuration) -> SimDuration { .init(microseconds: a.microseconds + b.microseconds) }
    /// The difference of two durations (negative when `b` is longer).
    @inlinable public static func - (a: SimDuration, b: SimDuration) -> SimDuration { .init(microseconds: a.microseconds - b.microseconds) }
    /// `a` repeated `n` times.
    @inlinable public static func * (a: SimDuration, n: Int64) -> SimDuration { .init(microseconds: a.microseconds * n) }
    /// The duration with its sign reversed.
    @inlinable public static prefix func - (a: SimDuration) -> SimDuration { .init(microseconds: -a.microseconds) }
    /// Adds `b` to `a`.
    @inlinable public static func += (a: inout SimDuration, b: SimDuration) { a.microseconds += b.microseconds }

    /// Compact human form, largest units first: `1d2h`, `15m`, `30s`, `250ms`, `0s`.
    public var description: String {
        if microseconds == 0 { return "0s" }
        var rest = abs(microseconds)
        var out = microseconds < 0 ? "-" : ""
        let units: [(Int64, String)] = [
            (86_400_000_000, "d"), (3_600_000_000, "h"), (60_000_000, "m"),
            (1_000_000, "s"), (1_000, "ms"), (1, "us"),
        ]
        for (size, name) in units where rest >= size {
            out += "\(rest / size)\(name)"
            rest %= size
        }
        return out
    }
}

/// A point in simulated time: microseconds since the start of the simulation.
///
/// Instant zero is midnight at the start of day 0 of the scenario, so the time of day is
/// `instant mod 24 h`. Instants and durations are separate types so that adding two instants,
/// a classic unit bug, does not compile.
public struct SimInstant: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Microseconds since the start of the simulation.
    public var microseconds: Int64

    /// The instant `microseconds` after the start.
    @inlinable
    public init(microseconds: Int64) { self.microseconds = microseconds }

    /// The start of the simulation.
    @inlinable public static var start: SimInstant { SimInstant(microseconds: 0) }
    /// Later than every instant a simulation reaches.
    @inlinable public static var distantFuture: SimInstant { SimInstant(microseconds: .max) }

    /// The instant `offset` after the start.
    @inlinable public static func after(_ offset: SimDuration) -> SimInstant { .init(microseconds: offset.microseconds) }

    /// Time since the start of the simulation.
    @inlinable public var sinceStart: SimDuration { .init(microseconds: microseconds) }
    /// Time since the last midnight (day 0 starts at instant zero).
    @inlinable public var timeOfDay: SimDuration { .init(microseconds: microseconds - day * 86_400_000_000) }
    /// Whole days since the start (floor, so negative instants fall in day -1).
    @inlinable public var day: Int64 {
        let d = microseconds / 86_400_000_000
        return microseconds < 0 && microseconds % 86_400_000_000 != 0 ? d - 1 : d
    }

    /// Whether `a` comes before `b`.
    @inlinable public static func < (a: SimInstant, b: SimInstant) -> Bool { a.microseconds < b.microseconds }
    /// The instant `d` after `a`.
    @inlinable public static func + (a: SimInstant, d: SimDuration) -> SimInstant { .init(microseconds: a.microseconds + d.microseconds) }
    /// The instant `d` before `a`.
    @inlinable public static func - (a: SimInstant, d: SimDuration) -> SimInstant { .init(microseconds: a.microseconds - d.microseconds) }
    /// The time from `b` to `a` (negative when `a` is earlier).
    @inlinable public static func - (a: SimInstant, b: SimInstant) -> SimDuration { .init(microseconds: a.microseconds - b.microseconds) }
    /// Moves `a` later by `d`.
    @inlinable public static func += (a: inout SimInstant, d: SimDuration) { a.microseconds += d.microseconds }

    /// `t=<duration since start>`, for messages and logs.
    public var description: String { "t=\(sinceStart)" }
}
