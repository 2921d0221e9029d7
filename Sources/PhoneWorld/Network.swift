import Foundation
import SimEngine
import SimRandom

/// The kind of connection the phone has.
public enum NetworkKind: String, Sendable, CaseIterable {
    /// A Wi-Fi network.
    case wifi
    /// A cellular data connection.
    case cellular
    /// No connection.
    case none

    /// Position in `allCases`, without building that array (this runs per event).
    public var index: Int {
        switch self {
        case .wifi: 0
        case .cellular: 1
        case .none: 2
        }
    }
}

/// The phone's connection at some instant: its kind and throughput in Mbit/s.
public struct NetworkState: Equatable, Sendable {
    /// Wi-Fi, cellular or none.
    public var kind: NetworkKind
    /// Download throughput, in Mbit/s (0 without a connection).
    public var downMbps: Double
    /// Upload throughput, in Mbit/s (0 without a connection).
    public var upMbps: Double
    /// A connection of `kind` at the given throughputs; `.none` has none.
    public init(kind: NetworkKind, downMbps: Double = 0, upMbps: Double = 0) {
        self.kind = kind
        self.downMbps = kind == .none ? 0 : downMbps
        self.upMbps = kind == .none ? 0 : upMbps
    }
    /// No connection.
    public static let disconnected = NetworkState(kind: .none)

    /// Link quality from 0 to 100, as a policy sees it: 0 without a connection, else
    /// `100 * log10(1 + down) / log10(1 + 100)` capped at 100, so 1 Mbit/s scores 15,
    /// 10 Mbit/s 52 and 100 Mbit/s or more 100. iOS reports a quality score that dasd's
    /// network policy compares with thresholds (50 seen in a log, docs/sources.md §4) but not how
    /// it is computed: this logarithmic map of throughput is the model's assumption.
    public var quality: Double {
        guard kind != .none, downMbps > 0 else { return 0 }
        return min(100, 100 * log10(1 + downMbps) / log10(101))
    }
}

/// From `time` on, the phone's connection is `state`, and the person is at `place` (`nil`:
/// between places, or places not modelled).
public struct NetworkChange: Equatable, Sendable {
    /// When the change happens.
    public var time: SimInstant
    /// The connection from then on.
    public var state: NetworkState
    /// Where the person is from then on, for region monitoring.
    public var place: String?
    /// The connection `state` from `time` on, at `place`.
    public init(time: SimInstant, state: NetworkState, place: String? = nil) {
        self.time = time
        self.state = state
        self.place = place
    }
}

/// Where the phone is connected over the day: a time-of-day schedule for weekdays and one
/// for weekends, boundaries moved by normal jitter, plus random dead spots while on cellular.
///
/// Day 0 is a Monday; days 5 and 6 of each week are the weekend. Environments such as
/// home-office, commuter and poor coverage are files in `models/networks/`.
public struct NetworkEnvironment: Equatable, Sendable {
    /// From `start` (time of day) to the next segment's start, the phone has `state`.
    public struct Segment: Equatable, Sendable {
        /// Time of day the segment starts.
        public var start: SimDuration
        /// The connection during the segment.
        public var state: NetworkState
        /// Where the person is (`home`, `work`), for region monitoring; `nil`: on the move.
        public var place: String?
        /// A segment starting at `start` (time of day) with `state`, at `place`.
        public init(start: SimDuration, state: NetworkState, place: String? = nil) {
            self.start = start
            self.state = state
            self.place = place
        }
    }

    /// Segments of Monday to Friday, in time-of-day order; the first starts at 00:00.
    public var weekday: [Segment] = [Segment(start: .zero, state: NetworkState(kind: .wifi, downMbps: 50, upMbps: 10))]
    /// Segments of Saturdays and Sundays, in time-of-day order; the first starts at 00:00.
    public var weekend: [Segment] = [Segment(start: .zero, state: NetworkState(kind: .wifi, downMbps: 50, upMbps: 10))]
    /// Standard deviation of every boundary but midnight (normal, clipped to its neighbours).
    public var jitter: SimDuration = .zero
    /// Rate of dead spots (no connection) while on cellular, per hour.
    public var deadSpotsPerHour: Double = 0
    /// Mean length of a dead spot (exponential).
    public var deadSpotMean: SimDuration = .minutes(2)
    /// Radio used on Wi-Fi.
    public var wifiRadio = RadioProfile.free
    /// Radio used on cellular.
    public var cellularRadio = RadioProfile.free

    /// Wi-Fi all day, 50 Mbit/s down and 10 up, no jitter or dead spots, radios that cost nothing.
    public init() {}

    /// Whether `day` (0 is a Monday) is a Saturday or Sunday.
    public static func isWeekend(day: Int64) -> Bool { ((day % 7) + 7) % 7 >= 5 }

    /// The connection changes over `[0, horizon)`, in time order, starting with the state at
    /// time 0. Consecutive equal states are merged.
    ///
    /// Each day draws the same number of numbers whatever happens (one jitter per boundary,
    /// then dead spots from a per-day Poisson count with a start and a length each), so one
    /// day's draws do not shift another's.
    public func changes(until horizon: SimInstant, stream: RandomStream) -> [NetworkChange] {
        var days = NetworkDays(self, until: horizon, stream: stream)
        var out: [NetworkChange] = []
        while !days.isFinished { days.drawDay(into: &out) }
        return out
    }

    /// The raw changes of `day` (0 is a Monday), drawn from `stream`, in time order: all of
    /// them before the next midnight, so days follow one another.
    func rawChanges(day: Int64, stream: RandomStream) -> [NetworkChange] {
        var raw: [NetworkChange] = []
        let midnight = SimInstant.after(.days(day))
        let segments = Self.isWeekend(day: day) ? weekend : weekday
        var starts: [SimInstant] = []
        for (i, segment) in segments.enumerated() {
            let offset = SimDuration(seconds: stream.normal(sigma: jitter.seconds))
            var t = midnight + segment.start + (i == 0 ? .zero : offset)
            // Keep the day's boundaries in order and inside the day.
            t = min(max(t, starts.last ?? midnight), midnight + .days(1))
            starts.append(t)
        }
        for (i, segment) in segments.enumerated() {
            let end = i + 1 < starts.count ? starts[i + 1] : midnight + .days(1)
            guard starts[i] < end else { continue }
            if segment.state.kind == .cellular, deadSpotsPerHour > 0 {
                // Dead spots: a Poisson number over the segment, uniform starts, each
                // cutting the connection for an exponential time inside the segment.
                let hours = (end - starts[i]).hours
                let n = stream.poisson(mean: deadSpotsPerHour * hours)
                var spots: [(SimInstant, SimInstant)] = []
                for _ in 0..<n {
                    let s = starts[i] + SimDuration(seconds: stream.uniform() * (end - starts[i]).seconds)
                    let length = SimDuration(seconds: stream.exponential(mean: deadSpotMean.seconds))
                    spots.append((s, min(s + length, end)))
                }
                spots.sort { $0.0 < $1.0 }
                var t = starts[i]
                for (s, e) in spots where e > t {
                    if s > t { raw.append(NetworkChange(time: t, state: segment.state, place: segment.place)) }
                    raw.append(NetworkChange(time: max(s, t), state: .disconnected, place: segment.place))
                    t = e
                }
                if t < end { raw.append(NetworkChange(time: t, state: segment.state, place: segment.place)) }
            } else {
                raw.append(NetworkChange(time: starts[i], state: segment.state, place: segment.place))
            }
        }
        return raw
    }

    /// Sorts stably by time, keeps the last change at each instant, drops changes at or after
    /// the horizon and changes to the state already in force.
    public static func normalized(_ changes: [NetworkChange], until horizon: SimInstant) -> [NetworkChange] {
        var out: [NetworkChange] = []
        appendNormalized(changes, until: horizon, to: &out)
        if out.first?.time != .start {
            out.insert(NetworkChange(time: .start, state: .disconnected), at: 0)
        }
        return out
    }

    /// `normalized`'s rule applied to `changes` appended to `out`, whose last change is the
    /// one before them: changes that all come at or after it give what normalizing the whole
    /// list at once would.
    static func appendNormalized(_ changes: [NetworkChange], until horizon: SimInstant, to out: inout [NetworkChange]) {
        let sorted = changes.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
        for c in sorted where c.time < horizon {
            if let last = out.last, last.time == c.time { out.removeLast() }
            if let last = out.last, last.state == c.state, last.place == c.place { continue }
            out.append(c)
        }
    }
}

/// A network environment's changes drawn a day at a time, as `NetworkEnvironment.changes`
/// draws them all: the same numbers from the same stream, so the same changes.
public struct NetworkDays {
    let environment: NetworkEnvironment
    let horizon: SimInstant
    let stream: RandomStream
    var day: Int64 = 0
    let lastDay: Int64

    /// The changes of `environment` over `[0, horizon)`, drawn from `stream` as asked.
    public init(_ environment: NetworkEnvironment, until horizon: SimInstant, stream: RandomStream) {
        self.environment = environment
        self.horizon = horizon
        self.stream = stream
        lastDay = max(0, (horizon - .microseconds(1)).day)
    }

    /// Whether every day up to the horizon is drawn.
    public var isFinished: Bool { day > lastDay }

    /// Draws the next day and appends its changes to `out`, which holds (at least the last
    /// of) the changes drawn before, normalized as `NetworkEnvironment.normalized` would; the
    /// first day starts `out` with the state at time 0.
    public mutating func drawDay(into out: inout [NetworkChange]) {
        guard !isFinished else { return }
        NetworkEnvironment.appendNormalized(environment.rawChanges(day: day, stream: stream), until: horizon, to: &out)
        if day == 0, out.first?.time != .start {
            out.insert(NetworkChange(time: .start, state: .disconnected), at: 0)
        }
        day += 1
    }
}
