import PhoneWorld
import PolicyAPI
import SimEngine
import SimRandom

/// Continuous background modes (`UIBackgroundModes` audio, location, voip, Bluetooth;
/// docs/sources.md §1): a session the person began goes on after they leave the app, keeping
/// it running in the background (never suspended), drawing the mode's power and fetching its
/// chunks, until its drawn length ends or the app does (it then ends as completed). Without
/// one of the mode's keys in `UIBackgroundModes` no session goes on.
package final class BackgroundModes: Mechanism {
    /// `background_mode`.
    package static let name = "background_mode"
    /// For `bgsim mechanisms`.
    package static let summary = "Continuous background modes: music, navigation, a call or an accessory goes on after the person leaves"
    /// The app profile's keys.
    package static let parameters = keys.described(Keys())
    struct Keys {
        var mode = BackgroundModeKind.allCases[0], probability = 50.0 / 100, duration = Distribution.exponential(mean: 1800), powerW: Double?
        var chunkEvery: SimDuration?, chunkUpBytes = 0.0, chunkDownBytes = 0.0
    }
    static let keys: [Setting<Keys>] = [
        .choice("kind", \.mode, help: "the mode, which is also the sessions' task kind").required(),
        .number("probability_pct", \.probability, in: 0...100, unit: .percent("a chance"), help: "chance that the person leaves the app with a session going"),
        .distribution("duration", \.duration, .seconds, help: "how long a session goes on after they leave"),
        .optionalNumber(
            "power_w", \.powerW, in: NumberRange(0...), unit: .watts(),
            help: "power of the mode's hardware while a session goes on (none: the mode's own, from Android power profiles)"),
        .optionalDuration(
            "chunk_every", \.chunkEvery, in: .positive,
            help: "network use while it goes on: a chunk at once, then one each time this passes (none: no network use)"),
        .number("chunk_up_kb", \.chunkUpBytes, in: 0...1e9, unit: .kilobytes(), help: "bytes sent with each chunk"),
        .number("chunk_down_kb", \.chunkDownBytes, in: 0...1e9, unit: .kilobytes(), help: "bytes received with each chunk"),
    ]
    /// `app.<name>.mode`: at each leave, whether a session goes on and for how long.
    package static let streams = [mode.name]
    private static let mode = DeclaredStream<BackgroundModes>("mode")
    /// One kind per mode, in `BackgroundModeKind`'s order: sessions, with no time limit.
    package static let kinds = BackgroundModeKind.allCases.map { TaskKind.Traits($0.rawValue, .mode, budget: nil) }
    /// The run's calls it implements.
    package static let hooks: MechanismHooks = [.appLeft]

    struct Section {
        var mode: BackgroundModeKind, probability: Double, duration: PreparedDistribution, powerW: Double
        var chunkEvery: SimDuration?, chunkUpBytes: Double, chunkDownBytes: Double
    }

    let sections: [Section?]
    /// Per app, its session going on (a task); per session, its app, end and next chunk.
    var sessions: [Int?]
    var live: [Int: (app: Int, end: SimInstant)] = [:]
    var chunks: [Int: MechanismEvent] = [:]

    /// The run's mechanism, from each app's section.
    package init(apps: [MechanismValues?], system: MechanismValues) {
        sections = apps.map { v in
            v.map {
                let k = $0.decode(Self.keys, over: Keys())
                return Section(
                    mode: k.mode, probability: k.probability, duration: PreparedDistribution(k.duration), powerW: k.powerW ?? k.mode.defaultPowerW,
                    chunkEvery: k.chunkEvery, chunkUpBytes: k.chunkUpBytes, chunkDownBytes: k.chunkDownBytes)
            }
        }
        sessions = Array(repeating: nil, count: apps.count)
    }

    /// A session goes on with the mode's probability, unless the person swiped the app away.
    package func appLeft<H: MechanismHost & ~Copyable>(_ app: Int, swiped: Bool, _ host: inout H) {
        guard let s = sections[app], let stream = host.stream(app, Self.mode) else { return }
        // Drawn at every leave, so later sessions do not depend on earlier ones' ends.
        let starts = stream.bernoulli(s.probability)
        let length = SimDuration(seconds: s.duration.draw(stream))
        guard starts, sessions[app] == nil, length > .zero, !swiped, s.mode.keys.contains(where: { host.declares(app, $0) }) else { return }
        let task = host.submit(app: app, kind: Self.kind(s.mode), source: 0, work: length, upBytes: 0, downBytes: 0, powerW: s.powerW)
        sessions[app] = task
        live[task] = (app, host.now + length)
        host.run(task)
        chunk(task, &host)
    }

    /// A chunk of the session's network use now, and the next one's event before its end.
    func chunk<H: MechanismHost & ~Copyable>(_ task: Int, _ host: inout H) {
        guard let (app, end) = live[task], let s = sections[app], let every = s.chunkEvery, host.isRunning(task) else { return }
        host.transfer(task, upBytes: s.chunkUpBytes, downBytes: s.chunkDownBytes)
        if host.now + every < end { chunks[task] = host.schedule(task, at: host.now + every, as: .taskStep) }
    }

    /// Session `payload`'s next chunk.
    package func event<H: MechanismHost & ~Copyable>(_ payload: Int, _ host: inout H) {
        chunks[payload] = nil
        chunk(payload, &host)
    }

    /// The session is over: no more chunks.
    package func taskEnded<H: MechanismHost & ~Copyable>(_ task: Int, _ outcome: TaskOutcome, _ host: inout H) {
        if let e = chunks.removeValue(forKey: task) { host.cancel(e) }
        if let (app, _) = live.removeValue(forKey: task) { sessions[app] = nil }
    }

    /// The task kind of `mode`'s sessions.
    package static func kind(_ mode: BackgroundModeKind) -> TaskKind {
        MechanismRegistry.kind(Self.self, BackgroundModeKind.allCases.firstIndex(of: mode)!)
    }

    /// `mode.audio`, `mode.location`.
    package func identifier(app: Int, source: Int) -> String { "mode.\(sections[app]?.mode.rawValue ?? "")" }
}
