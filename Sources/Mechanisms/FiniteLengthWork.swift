import PhoneWorld
import PolicyAPI
import SimEngine
import SimRandom

/// Finite-length background time (`beginBackgroundTask`, docs/sources.md §3): work an app
/// finishes after the person leaves it, such as an upload in flight. Its section is a list,
/// each entry a piece of work with its chance: `begin: leave` begins in
/// `applicationDidEnterBackground`, within the grant (`system.background_time`) every such
/// piece shares; `begin: in_use` at a uniform time within a launch, running without a deadline
/// until the person leaves, then on what is left of the grant.
///
/// Each leave draws for every `leave` entry, and each launch for every `in_use` one, whether
/// or not the work begins, so that later leaves and launches draw what they would have.
package final class FiniteLengthWork: Mechanism {
    /// `background_work`.
    package static let name = "background_work"
    /// For `bgsim mechanisms`.
    package static let summary = "Finite-length background time (beginBackgroundTask), a list of pieces of work"
    /// A list of pieces of work.
    package static let isList = true
    /// Each entry's keys.
    package static let parameters = keys.described(Keys())
    struct Keys {
        var inUse = false, probability = 100.0 / 100, cpu = Distribution.fixed(2), upBytes = Distribution.fixed(0), downBytes = Distribution.fixed(0)
    }
    static let keys: [Setting<Keys>] = [
        .custom(
            "begin", .choice(["leave", "in_use"]), help: "leave: as the app enters the background; in_use: at a uniform time within a launch",
            get: { .text($0.inUse ? "in_use" : "leave") }, set: { if case .text(let t) = $1 { $0.inUse = t == "in_use" } }),
        .number("probability_pct", \.probability, in: 0...100, unit: .percent("a chance"), help: "chance that a leave (or launch) begins it"),
        .distribution("cpu", \.cpu, .seconds, help: "CPU time of the work"),
        .distribution("up_kb", \.upBytes, .kilobytes, help: "bytes it sends"),
        .distribution("down_kb", \.downBytes, .kilobytes, help: "bytes it receives"),
    ]
    /// `app.<name>.leave` and `app.<name>.use`: the draws at leaves and at launches.
    package static let streams = [leave.name, use.name]
    private static let leave = DeclaredStream<FiniteLengthWork>("leave")
    private static let use = DeclaredStream<FiniteLengthWork>("use")
    /// `finite_length`: the app's grant in the background, no limit in the foreground; its
    /// latencies count, as a policy's requests' do.
    package static let kinds = [TaskKind.Traits("finite_length", [.usesGrant, .countsLatency], budget: { $0.backgroundTime })]
    /// The run's calls it implements.
    package static let hooks: MechanismHooks = [.start, .appEnteredBackground, .appLeft, .personLaunched]

    struct Work {
        var inUse: Bool
        var probability: Double
        var cpu, upBytes, downBytes: PreparedDistribution
    }

    /// Per app, its entries, by index (a task's source).
    let work: [[Work]]
    /// Per app, whether it has work that begins on leaving, and work that begins in use.
    let hasLeaveWork: [Bool], hasInUseWork: [Bool]
    /// A piece as drawn.
    struct Drawn {
        var app: Int, source = 0
        var cpu, up, down: Double
        var forgets: Bool
    }

    /// In-use work drawn at launches, waiting for its moment, by key (an event's payload).
    var waiting: [Int: Drawn] = [:]
    var nextKey = 0
    let kind = MechanismRegistry.kind(FiniteLengthWork.self)
    /// Per app, read once as the run starts: its streams, and its chance of forgetting
    /// `endBackgroundTask` (looking them up at each leave copied the scenario).
    var leave: [RandomStream?] = [], use: [RandomStream?] = [], forgets: [Double] = []

    /// The run's mechanism, from each app's list.
    package init(apps: [MechanismValues?], system: MechanismValues) {
        work = apps.map { section in
            (section?.entries ?? []).map {
                let k = $0.decode(Self.keys, over: Keys())
                return Work(
                    inUse: k.inUse, probability: k.probability, cpu: PreparedDistribution(k.cpu), upBytes: PreparedDistribution(k.upBytes),
                    downBytes: PreparedDistribution(k.downBytes))
            }
        }
        hasLeaveWork = work.map { $0.contains { !$0.inUse } }
        hasInUseWork = work.map { $0.contains(where: \.inUse) }
    }

    /// Each app's streams and chance of forgetting.
    package func start<H: MechanismHost & ~Copyable>(_ host: inout H) {
        leave = work.indices.map { host.stream($0, Self.leave) }
        use = work.indices.map { host.stream($0, Self.use) }
        forgets = host.scenario.apps.map(\.forgetsEndBackground)
    }

    /// A piece's draws after whether it begins: its CPU time and bytes, and whether the app
    /// forgets `endBackgroundTask`.
    func draw(_ w: Work, app: Int, _ stream: RandomStream) -> Drawn {
        let cpu = w.cpu.draw(stream), up = w.upBytes.draw(stream), down = w.downBytes.draw(stream)
        return Drawn(app: app, cpu: cpu, up: up, down: down, forgets: stream.bernoulli(forgets[app]))
    }

    /// The app's `leave` work begins, each piece with its chance.
    package func appEnteredBackground<H: MechanismHost & ~Copyable>(_ app: Int, _ host: inout H) {
        guard hasLeaveWork[app], let stream = leave[app] else { return }
        for (source, w) in work[app].enumerated() where !w.inUse {
            let begins = stream.bernoulli(w.probability)
            var d = draw(w, app: app, stream)
            d.source = source
            if begins { begin(d, &host) }
        }
    }

    /// Swiped away as it was left: no work begins, but the leave's draws are made.
    package func appLeft<H: MechanismHost & ~Copyable>(_ app: Int, swiped: Bool, _ host: inout H) {
        guard swiped, hasLeaveWork[app], let stream = leave[app] else { return }
        for w in work[app] where !w.inUse {
            _ = stream.bernoulli(w.probability)
            _ = draw(w, app: app, stream)
        }
    }

    /// The launch's `in_use` work is drawn now, each piece at its moment within the launch.
    package func personLaunched<H: MechanismHost & ~Copyable>(_ app: Int, until: SimInstant, _ host: inout H) {
        guard hasInUseWork[app], let stream = use[app] else { return }
        let length = until - host.now
        for (source, w) in work[app].enumerated() where w.inUse {
            let begins = stream.bernoulli(w.probability)
            let at = stream.uniform(0, 1)
            var d = draw(w, app: app, stream)
            d.source = source
            guard begins, !host.isDraining else { continue }
            waiting[nextKey] = d
            host.schedule(nextKey, at: host.now + SimDuration(seconds: at * length.seconds), as: .world)
            nextKey += 1
        }
    }

    /// In-use work's moment came. Nothing begins in an app that is not running.
    package func event<H: MechanismHost & ~Copyable>(_ key: Int, _ host: inout H) {
        guard let w = waiting.removeValue(forKey: key) else { return }
        let state = host.appState(w.app)
        guard host.phoneIsOn, !host.isDraining, state.isForeground || state == .background else { return }
        begin(w, &host)
    }

    /// `beginBackgroundTask`: the piece runs now.
    func begin<H: MechanismHost & ~Copyable>(_ d: Drawn, _ host: inout H) {
        let task = host.submit(
            app: d.app, kind: kind, source: d.source, work: SimDuration(seconds: d.cpu), upBytes: d.up.rounded(),
            downBytes: d.down.rounded(), powerW: host.cpuPowerW(d.app))
        if d.forgets { host.forgetsCompletion(task) }
        host.run(task)
    }

    /// `background-work.<n>`, its entry's index.
    package func identifier(app: Int, source: Int) -> String { "background-work.\(source)" }
}
