import PhoneWorld
import PolicyAPI
import SimEngine

/// A clairvoyant bound, not a deployable policy: it is shown this replication's future
/// (the person's launches, the charger, the network) and places each request where it costs
/// least energy while still finishing before the app's next foreground use.
///
/// For a request of app A eligible at t, the window is `[t, next launch of A - finishMargin)`
/// (to the horizon if A is not opened again). Each instant in it has a cost class, lowest
/// first: Wi-Fi and charging, Wi-Fi, cellular and charging, cellular, no connection. The
/// request is planned at the latest instant of the best class in its window: running late
/// means the fewest runs (an app's handler resubmits an interval after each run) and the
/// freshest content at the next use. On cellular, where promotion and tail dominate (about
/// 10 J a fetch, docs/sources.md §6), it is planned instead at the last instant of that class at
/// which the person opens an app that fetches (the radio will be awake: the work rides it).
///
/// At a decision point it starts every request whose planned instant has come, and with them
/// every request for which now is of its best class (they share the promotion); it also
/// starts those whose best class is now's while the radio is already awake.
///
/// The plan is a greedy heuristic over known futures, so it bounds what foresight buys
/// rather than proving an optimum; it cannot see the gates' future either (Low Power Mode, a
/// Wi-Fi-only setting), and a request that meets a closed gate at its planned instant starts
/// when the gate opens.
struct OraclePolicy: RegisteredPolicy {
    /// The bound's parameters (`finish_margin`, `ride_foreground`).
    struct Parameters: Equatable, Sendable {
        /// How long before the app's next use a request must start (the refresh budget).
        var finishMargin: SimDuration = .seconds(30)
        /// Whether to plan cellular work at the moments a foreground fetch wakes the radio.
        var rideForeground = true
        /// The defaults above.
        init() {}
    }

    struct Plan {
        var at: SimInstant
        var cost: Int
    }

    /// The parameters in use.
    var parameters: Parameters
    var future: FutureWorld?
    /// Per app, the start of each launch, in time order.
    var launchesByApp: [[SimInstant]] = []
    /// Launches that fetch in the foreground, in time order.
    var fetchingLaunches: [SimInstant] = []
    /// The future cut where the network or the charger changes: segment `k` starts at
    /// `segmentStarts[k]` (the first at the start) and has cost class `segmentCosts[k]`.
    /// Worked out once from the future, so a plan is binary searches and a walk over the
    /// segments of its window, not a scan of the whole future per instant it looks at.
    var segmentStarts: [SimInstant] = []
    var segmentCosts: [Int] = []
    /// Each request's plan, by task number, made the first time it is seen.
    var plans: [Plan?] = []

    /// The bound with `parameters`.
    init(_ parameters: Parameters) { self.parameters = parameters }
    /// The bound with the default parameters.
    init() { self.init(Parameters()) }

    /// `oracle`.
    static let policyName = "oracle"
    /// For `bgsim policies`.
    static let summary = "plans each request at its cheapest instant before the app's next use, knowing the future"
    /// Waiting for the planned instant.
    static let holdReasons = ["planned"]
    /// The bound's parameters, as scenario keys.
    static let parameters: [PolicyParameter<Self>] = [
        .duration("finish_margin", \.parameters.finishMargin, help: "how long before the app's next use a request must start"),
        .flag("ride_foreground", \.parameters.rideForeground, help: "plan cellular work at the moments a foreground fetch wakes the radio"),
    ]
    /// True: the oracle is shown the replication's future, and results mark it as a bound.
    static var isClairvoyant: Bool { true }

    /// Takes the replication's launches, to plan each request before the app's next use, and
    /// cuts the future into segments of one cost class.
    mutating func foresee(_ future: FutureWorld) {
        self.future = future
        launchesByApp = Array(repeating: [], count: future.launchDownBytes.count)
        fetchingLaunches = []
        for l in future.timeline.people.launches {
            guard let app = l.app else { continue }
            launchesByApp[app].append(l.start)
            if future.launchDownBytes[app] > 0 { fetchingLaunches.append(l.start) }
        }
        var changes: [SimInstant] = [.start]
        for c in future.timeline.network where c.time > .start { changes.append(c.time) }
        for session in future.timeline.charging {
            if session.start > .start { changes.append(session.start) }
            if session.end > .start { changes.append(session.end) }
        }
        changes.sort()
        segmentStarts = []
        segmentCosts = []
        for t in changes where t != segmentStarts.last {
            segmentStarts.append(t)
            segmentCosts.append(Self.cost(at: t, in: future.timeline))
        }
        plans = []
    }

    /// Drops the plan of a task that ended.
    mutating func taskEnded(_ record: TaskRecord) {
        let i = record.request.id.rawValue
        if i < plans.count { plans[i] = nil }
    }

    /// Starts the requests whose planned instant has come, and asks again at the next planned instant.
    mutating func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision {
        guard future != nil else { preconditionFailure("the oracle runs only with foresight") }
        let nowCost = cost(at: state.now)
        var due: [TaskID] = [], wake: SimInstant?
        var batch = state.radioAwake
        for task in eligible where plan(task, state.now).at <= state.now {
            due.append(task.id)
            batch = true
        }
        for task in eligible {
            let plan = plans[task.id.rawValue]!
            if plan.at <= state.now { continue }
            if batch && plan.cost == nowCost {
                due.append(task.id)
            } else {
                wake = min(wake ?? plan.at, plan.at)
            }
        }
        if due.count == eligible.count { return .startAll }
        return PolicyDecision(start: due.isEmpty ? .none : .some(due), reconsiderAt: wake, reason: Self.holdReasons[0])
    }

    /// The request's plan, made the first time it is seen.
    mutating func plan(_ task: EligibleTask, _ now: SimInstant) -> Plan {
        let id = task.id.rawValue
        if id < plans.count, let p = plans[id] { return p }
        let future = future!
        let starts = launchesByApp[task.app]
        let k = firstIndex(in: starts, after: now)
        let next = k < starts.count ? starts[k] : future.horizon
        let end = next - parameters.finishMargin
        var best = Plan(at: now, cost: cost(at: now))
        if end > now {
            // The best class in the window: of now, and of every segment that starts in it...
            var s = segment(at: now) + 1
            while s < segmentStarts.count, segmentStarts[s] < end {
                best.cost = min(best.cost, segmentCosts[s])
                s += 1
            }
            // ...at its latest instant: the fewest runs (the handler resubmits an interval
            // after a run) and the freshest content at the next use.
            best.at = latestOfClass(best.cost, from: now, to: end) ?? now
            if best.cost >= 2 && parameters.rideForeground {
                // Cellular: the last foreground fetch of that class in the window wakes the
                // radio; riding it saves a promotion and a tail.
                let first = firstIndex(in: fetchingLaunches, after: now)
                var k = fetchingLaunches.partitionIndex { $0 >= end } - 1
                while k >= first {
                    if cost(at: fetchingLaunches[k]) == best.cost {
                        best.at = fetchingLaunches[k]
                        break
                    }
                    k -= 1
                }
            }
        }
        if id >= plans.count { plans += repeatElement(nil, count: id + 1 - plans.count) }
        plans[id] = best
        return best
    }

    /// The last instant in `[from, to]` whose class is `c`: the end of the last run of segments
    /// of class `c` in the window (`to` if the window ends in one).
    func latestOfClass(_ c: Int, from: SimInstant, to: SimInstant) -> SimInstant? {
        var last: SimInstant?
        var inClass = false
        var s = segment(at: from)
        var t = from
        while true {
            if segmentCosts[s] == c {
                inClass = true
            } else if inClass {
                last = t - .microseconds(1)
                inClass = false
            }
            s += 1
            guard s < segmentStarts.count, segmentStarts[s] < to else { break }
            t = segmentStarts[s]
        }
        return inClass ? to : last
    }

    /// The segment that holds `t`.
    func segment(at t: SimInstant) -> Int {
        max(0, segmentStarts.partitionIndex { $0 > t } - 1)
    }

    /// Cost class at `t`: 0 Wi-Fi and charging, 1 Wi-Fi, 2 cellular and charging, 3 cellular,
    /// 4 no connection.
    func cost(at t: SimInstant) -> Int { segmentCosts[segment(at: t)] }

    /// Cost class at `t` in `world`, from its network changes and charging sessions.
    static func cost(at t: SimInstant, in world: WorldTimeline) -> Int {
        var kind = NetworkKind.none
        let i = world.network.partitionIndex { $0.time > t }
        if i > 0 { kind = world.network[i - 1].state.kind }
        let charging = world.charging.contains { $0.start <= t && t < $0.end }
        switch kind {
        case .wifi: return charging ? 0 : 1
        case .cellular: return charging ? 2 : 3
        case .none: return 4
        }
    }

    func firstIndex(in sorted: [SimInstant], after t: SimInstant) -> Int {
        sorted.partitionIndex { $0 > t }
    }
}

extension Array {
    /// The first index whose element satisfies `isAfter`, for a predicate false then true
    /// along the array (binary search).
    func partitionIndex(_ isAfter: (Element) -> Bool) -> Int {
        var lo = 0, hi = count
        while lo < hi {
            let mid = (lo + hi) / 2
            if isAfter(self[mid]) { hi = mid } else { lo = mid + 1 }
        }
        return lo
    }
}
