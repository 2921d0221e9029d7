import PhoneWorld
import SimEngine
import SimRandom

/// The exogenous world of one replication (or its traces): the same for every policy.
///
/// Charging is drawn before the run (a session or two a day), and the run schedules its
/// plug-ins and unplugs one at a time. The network's changes are drawn a day at a time as the
/// run goes (`networkChange(_:)`), and the person's launches, calls,
/// interruptions and the purges their launches bring are drawn a week at a time as the run
/// goes (`launch(_:)`, `call(_:)`, `interruption(_:)`, `purge(_:)` draw what they need;
/// `forget` drops what is past), so that memory does not grow with the horizon; `whole` draws
/// them all at once, for a policy that sees the future and for tools. The numbers are the
/// same either way. The person's use of the apps before the run (`history`) is drawn first.
///
/// `@unchecked Sendable`: the generators draw from the run's own streams, used by the one
/// thread that runs it; a timeline that crosses threads (`FutureWorld`) is drawn whole.
public struct WorldTimeline: @unchecked Sendable {
    /// Charging sessions, in time order.
    public var charging: [ChargingSession]
    /// Connection changes, in time order: all of them, or the days drawn and not yet
    /// forgotten (the first is the run's `networkBase`).
    public var network: [NetworkChange]
    var networkDays: NetworkDays?
    var networkBase = 0
    /// Sleep, launches, calls, purges and interruptions: all of them, or the window drawn and
    /// not yet forgotten (its first launch, call and interruption are `launchBase`,
    /// `callBase` and `interruptionBase` of the run's).
    public var people: PeopleTimeline
    /// Silent pushes from a trace, in time order (drawn ones come as the run goes).
    public var pushes: [PushArrival]
    /// The person's launches of the scenario's apps before the run (`PeopleParameters.history`,
    /// stream `history`), in time order, each ending by the run's start; none of an app
    /// installed as the run starts (`AppParameters.newInstall`), nor with a people trace.
    public var history: [AppLaunch] = []
    /// When the system's record of the person's use begins: `history` before the run's start,
    /// or the start.
    public var historySince = SimInstant.start
    var days: PeopleDays?
    var drawnUntil = SimInstant.start
    package let horizon: SimInstant
    let interruptionRate: Double, interruptionMean: SimDuration
    let interruptionStream: RandomStream?
    /// Drawn purges: each launch's chance, and their stream (`nil` with a people trace).
    let purgeChance: Double
    let purgeStream: RandomStream?
    @usableFromInline var launchBase = 0, callBase = 0, interruptionBase = 0, purgeBase = 0
    /// The launches before the horizon, counted as they are drawn: the run's totals.
    package var launchHours: LaunchHours
    package var launchesBeforeHorizon = 0, sessionsBeforeHorizon = 0
    /// Whether the person is drawn whole (else sleep and session starts are dropped once
    /// counted).
    let whole: Bool

    /// The world `setup` describes, drawn from `streams` (or taken from its traces); the
    /// person whole, or (`whole: false`) a week at a time as the run asks.
    public init(setup: PhoneSetup, streams: WorldStreams, whole: Bool = true) {
        horizon = SimInstant.after(setup.duration)
        charging = setup.chargingTrace.map(ChargingSession.merged) ?? setup.charging.sessions(until: horizon, stream: streams.charger)
        if let trace = setup.networkTrace {
            network = trace
        } else if whole {
            network = setup.network.changes(until: horizon, stream: streams.network)
        } else {
            network = []
            networkDays = NetworkDays(setup.network, until: horizon, stream: streams.network)
            networkDays!.drawDay(into: &network)
        }
        // Drawn pushes come one at a time as the run goes (`serverPush`); a trace is replayed.
        pushes = setup.pushTrace ?? []
        interruptionRate = setup.people.interruptionsPerHour
        interruptionMean = setup.people.interruptionMean
        interruptionStream = streams.interruptions
        launchHours = LaunchHours(apps: setup.apps.count)
        self.whole = whole
        purgeChance = setup.people.purgePerLaunch
        if let trace = setup.peopleTrace {
            people = trace
            people.interruptions = []
            purgeStream = nil
        } else {
            people = PeopleTimeline()
            purgeStream = streams.purges
            let apps = LaunchChoice(setup.people, appWeights: setup.people.appWeights(setup.apps), habits: setup.apps.map(\.habit))
            days = PeopleDays(setup.people, until: horizon, apps: apps, people: streams.people)
            if setup.people.history > .zero, let stream = streams.history {
                history = Self.drawHistory(setup, apps: apps, stream: stream)
                historySince = .start - setup.people.history
            }
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
        if let stream = purgeStream {
            people.purges += PeopleTimeline.drawPurges(
                of: people.launches[first...].prefix { $0.start < horizon }, chance: purgeChance, stream: stream)
        }
        if !whole {
            people.sessionStarts.removeAll(keepingCapacity: true)
            people.awake.removeAll(keepingCapacity: true)
        }
    }

    /// Launch `i` of the run, drawing more days if it is not drawn yet; `nil` past the last.
    package mutating func launch(_ i: Int) -> AppLaunch? {
        while i - launchBase >= people.launches.count, let d = days, !d.isFinished { drawStretch(through: drawnUntil + .days(7)) }
        return i - launchBase < people.launches.count ? people.launches[i - launchBase] : nil
    }

    /// Connection change `i` of the run, drawing more days if it is not drawn yet; `nil` past
    /// the last.
    package mutating func networkChange(_ i: Int) -> NetworkChange? {
        while i - networkBase >= network.count, networkDays?.isFinished == false { networkDays!.drawDay(into: &network) }
        return i - networkBase < network.count ? network[i - networkBase] : nil
    }

    /// Drops the connection changes before `i`, a thousand or so at a time, when they are
    /// drawn as the run goes.
    package mutating func forget(networkChangesBefore i: Int) {
        guard networkDays != nil, i - networkBase >= 1024 else { return }
        network.removeFirst(i - networkBase)
        networkBase = i
    }

    /// Launch `i`, already drawn.
    @inlinable package func drawnLaunch(_ i: Int) -> AppLaunch { people.launches[i - launchBase] }

    /// Call `i`, drawing more days if needed; `nil` past the last.
    package mutating func call(_ i: Int) -> Call? {
        while i - callBase >= people.calls.count, let d = days, !d.isFinished { drawStretch(through: drawnUntil + .days(7)) }
        return i - callBase < people.calls.count ? people.calls[i - callBase] : nil
    }

    /// Interruption `i`, drawing more days if needed; `nil` past the last.
    package mutating func interruption(_ i: Int) -> Interruption? {
        while i - interruptionBase >= people.interruptions.count, let d = days, !d.isFinished {
            drawStretch(through: drawnUntil + .days(7))
        }
        return i - interruptionBase < people.interruptions.count ? people.interruptions[i - interruptionBase] : nil
    }

    /// Purge `i`, drawing more days if needed; `nil` past the last.
    package mutating func purge(_ i: Int) -> Purge? {
        while i - purgeBase >= people.purges.count, let d = days, !d.isFinished { drawStretch(through: drawnUntil + .days(7)) }
        return i - purgeBase < people.purges.count ? people.purges[i - purgeBase] : nil
    }

    /// Interruption `i`, already drawn.
    @inlinable package func drawnInterruption(_ i: Int) -> Interruption { people.interruptions[i - interruptionBase] }

    /// Drops launches before `launch`, calls before `call` and interruptions before
    /// `interruption`, a few thousand at a time, when the person is drawn as the run goes.
    package mutating func forget(
        launchesBefore launch: Int? = nil, callsBefore call: Int? = nil, interruptionsBefore interruption: Int? = nil,
        purgesBefore purge: Int? = nil
    ) {
        guard days != nil else { return }
        if let purge, purge - purgeBase >= 1024 {
            people.purges.removeFirst(purge - purgeBase)
            purgeBase = purge
        }
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

    /// The person's launches of the scenario's apps over the `history` before the run, drawn
    /// as the run's days are, from stream `history`: launches of apps installed as the run
    /// starts are left out, and the last ones end by the start.
    static func drawHistory(_ setup: PhoneSetup, apps: LaunchChoice, stream: RandomStream) -> [AppLaunch] {
        let firstDay = -max(1, Int64((setup.people.history.seconds / 86_400).rounded(.up)))
        var days = PeopleDays(setup.people, from: firstDay, until: .start, apps: apps, people: stream)
        var drawn = PeopleTimeline()
        days.draw(through: .start, into: &drawn)
        let since = SimInstant.start - setup.people.history
        return drawn.launches.compactMap { l in
            guard let app = l.app, !setup.apps[app].newInstall, l.start >= since, l.start < .start else { return nil }
            return AppLaunch(app: app, start: l.start, end: min(l.end, .start), swipedAway: l.swipedAway)
        }
    }
}

/// A silent push from an app's server: when it arrives, and the work its handler will do
/// (drawn in advance, so every policy sees the same pushes).
public struct PushArrival: Equatable, Sendable {
    /// When it reaches the phone.
    public var time: SimInstant
    /// The app it is for, as an index into the scenario's apps.
    public var app: Int
    /// CPU time its handler takes.
    public var work: SimDuration
    /// Bytes its handler sends.
    public var upBytes: Double
    /// Bytes its handler receives.
    public var downBytes: Double

    /// A push arriving at `time` for `app`, whose handler does the given work.
    public init(time: SimInstant, app: Int, work: SimDuration = .seconds(2), upBytes: Double = 0, downBytes: Double = 0) {
        self.time = time
        self.app = app
        self.work = work
        self.upBytes = upBytes
        self.downBytes = downBytes
    }
}
