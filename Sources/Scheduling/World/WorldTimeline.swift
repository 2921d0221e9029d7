import PhoneWorld
import SimEngine
import SimRandom

/// The exogenous world of one replication (or its traces): the same for every policy.
///
/// Charging, the network and purges are drawn before the run. The person's launches, calls
/// and interruptions are drawn a week at a time as the run goes (`launch(_:)`, `call(_:)`,
/// `interruption(_:)` draw what they need; `forget` drops what is past), so that memory does
/// not grow with the horizon; `whole` draws them all at once, for a policy that sees the
/// future and for tools. The numbers are the same either way.
///
/// `@unchecked Sendable`: the generators draw from the run's own streams, used by the one
/// thread that runs it; a timeline that crosses threads (`FutureWorld`) is drawn whole.
public struct WorldTimeline: @unchecked Sendable {
    /// Charging sessions, in time order.
    public var charging: [ChargingSession]
    /// Connection changes, in time order.
    public var network: [NetworkChange]
    /// Sleep, launches, calls, purges and interruptions: all of them, or the window drawn and
    /// not yet forgotten (its first launch, call and interruption are `launchBase`,
    /// `callBase` and `interruptionBase` of the run's).
    public var people: PeopleTimeline
    /// Silent pushes from a trace, in time order (drawn ones come as the run goes).
    public var pushes: [PushArrival]
    var days: PeopleDays?
    var drawnUntil = SimInstant.start
    let horizon: SimInstant
    let interruptionRate: Double, interruptionMean: SimDuration
    let interruptionStream: RandomStream?
    var launchBase = 0, callBase = 0, interruptionBase = 0
    /// The launches before the horizon, counted as they are drawn: the run's totals.
    var launchHours: LaunchHours
    var launchesBeforeHorizon = 0, sessionsBeforeHorizon = 0
    /// Whether the person is drawn whole (else sleep and session starts are dropped once
    /// counted).
    let whole: Bool

    /// The world `setup` describes, drawn from `streams` (or taken from its traces); the
    /// person whole, or (`whole: false`) a week at a time as the run asks.
    public init(setup: PhoneSetup, streams: WorldStreams, whole: Bool = true) {
        horizon = SimInstant.after(setup.duration)
        charging = setup.chargingTrace.map(ChargingSession.merged) ?? setup.charging.sessions(until: horizon, stream: streams.charger)
        network = setup.networkTrace ?? setup.network.changes(until: horizon, stream: streams.network)
        // Drawn pushes come one at a time as the run goes (`serverPush`); a trace is replayed.
        pushes = setup.pushTrace ?? []
        interruptionRate = setup.people.interruptionsPerHour
        interruptionMean = setup.people.interruptionMean
        interruptionStream = streams.interruptions
        launchHours = LaunchHours(apps: setup.apps.count)
        self.whole = whole
        if let trace = setup.peopleTrace {
            people = trace
            people.interruptions = []
        } else {
            people = PeopleTimeline()
            var purges = PurgeTimes(setup.people, until: horizon, stream: streams.purges)
            while let p = purges.next() { people.purges.append(p) }
            days = PeopleDays(
                setup.people, until: horizon, appWeights: setup.apps.map(\.usageWeight), habits: setup.apps.map(\.habit),
                people: streams.people)
        }
        counted(from: 0, sessionsFrom: 0)
        if whole { drawStretch(through: .after(.days(36_600))) } else { drawStretch(through: .after(.days(7))) }
    }

    /// Draws the person's days that begin before `time`, with their interruptions, and counts
    /// their launches.
    mutating func drawStretch(through time: SimInstant) {
        guard var d = days, !d.isFinished else { return }
        let launchesBefore = people.launches.count, sessionsBefore = people.sessionStarts.count
        d.draw(through: time, into: &people)
        days = d
        drawnUntil = time
        counted(from: launchesBefore, sessionsFrom: sessionsBefore)
    }

    /// Counts launches and sessions from these local indices on, and draws the interruptions
    /// of those launches.
    mutating func counted(from first: Int, sessionsFrom firstSession: Int) {
        for launch in people.launches[first...] where launch.start < horizon {
            launchHours.add(launch)
            launchesBeforeHorizon += 1
        }
        for k in people.sessionStarts[firstSession...] {
            let local = k - launchBase
            if local < people.launches.count, people.launches[local].start < horizon { sessionsBeforeHorizon += 1 }
        }
        if let stream = interruptionStream {
            people.interruptions += PeopleTimeline.drawInterruptions(
                of: people.launches[first...], perHour: interruptionRate, mean: interruptionMean, stream: stream)
        }
        if !whole {
            people.sessionStarts.removeAll(keepingCapacity: true)
            people.awake.removeAll(keepingCapacity: true)
        }
    }

    /// Launch `i` of the run, drawing more days if it is not drawn yet; `nil` past the last.
    mutating func launch(_ i: Int) -> AppLaunch? {
        while i - launchBase >= people.launches.count, let d = days, !d.isFinished { drawStretch(through: drawnUntil + .days(7)) }
        return i - launchBase < people.launches.count ? people.launches[i - launchBase] : nil
    }

    /// Launch `i`, already drawn.
    func drawnLaunch(_ i: Int) -> AppLaunch { people.launches[i - launchBase] }

    /// Call `i`, drawing more days if needed; `nil` past the last.
    mutating func call(_ i: Int) -> Call? {
        while i - callBase >= people.calls.count, let d = days, !d.isFinished { drawStretch(through: drawnUntil + .days(7)) }
        return i - callBase < people.calls.count ? people.calls[i - callBase] : nil
    }

    /// Interruption `i`, drawing more days if needed; `nil` past the last.
    mutating func interruption(_ i: Int) -> Interruption? {
        while i - interruptionBase >= people.interruptions.count, let d = days, !d.isFinished {
            drawStretch(through: drawnUntil + .days(7))
        }
        return i - interruptionBase < people.interruptions.count ? people.interruptions[i - interruptionBase] : nil
    }

    /// Interruption `i`, already drawn.
    func drawnInterruption(_ i: Int) -> Interruption { people.interruptions[i - interruptionBase] }

    /// Drops launches before `launch`, calls before `call` and interruptions before
    /// `interruption`, a few thousand at a time, when the person is drawn as the run goes.
    mutating func forget(launchesBefore launch: Int? = nil, callsBefore call: Int? = nil, interruptionsBefore interruption: Int? = nil) {
        guard days != nil else { return }
        if let launch, launch - launchBase >= 4096 {
            people.launches.removeFirst(launch - launchBase)
            launchBase = launch
        }
        if let call, call - callBase >= 1024 {
            people.calls.removeFirst(call - callBase)
            callBase = call
        }
        if let interruption, interruption - interruptionBase >= 1024 {
            people.interruptions.removeFirst(interruption - interruptionBase)
            interruptionBase = interruption
        }
    }
}
