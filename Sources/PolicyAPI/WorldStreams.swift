import PhoneWorld
import SimEngine
import SimRandom

/// The random streams of one replication, one per exogenous source (docs/sources.md §11), so that
/// within a replication every policy sees the same world.
///
/// Streams are named `charger`, `network`, `people`, `purges`, `low-power`, `history`, and per app
/// `app.<name>` (its tasks' work, in submission order) and `app.<name>.leave` (the
/// finite-length work it begins each time the person leaves it), so adding an app or
/// changing one source's parameters does not change the numbers any other source draws.
public struct WorldStreams {
    /// Stream `charger`: charging sessions.
    public var charger: RandomStream
    /// Stream `network`: connection changes and dead spots.
    public var network: RandomStream
    /// Stream `people`: sleep, sessions, launches and calls.
    public var people: RandomStream
    /// Stream `purges`: memory-pressure purges.
    public var purges: RandomStream
    /// Stream `history`, when the person has a history before the run: its launches.
    public var history: RandomStream?
    /// One draw per Low Power Mode prompt, in prompt order.
    public var lowPower: RandomStream
    /// Per app, stream `app.<name>`: its tasks' work, in submission order.
    public var apps: [RandomStream]
    /// Stream `interruptions`, when the person has any: Notification Centre and declined
    /// calls over the app in use.
    public var interruptions: RandomStream?
    /// Per app, the streams of the declared mechanisms whose section it has, by the name each
    /// mechanism gives them: `app.<name>.<stream>` (`Mechanism.streams`).
    public var declared: [[String: RandomStream]]
    /// The name of every stream made, in the order made: unique, so that no two sources
    /// draw the same numbers.
    public private(set) var names: [String] = []
    /// Stream `grants`, when refresh grants are drawn (`SystemRules.refreshGrant`): one draw
    /// per refresh, in start order.
    public var grants: RandomStream?

    /// The streams of `replication` under `masterSeed`, for the apps of `setup`, with each
    /// mechanism's `streams` for the apps that give its `section`.
    package init(
        setup: PhoneSetup, masterSeed: UInt64, replication: UInt64,
        generator: GeneratorKind = .mt19937, mechanisms: [(section: String, streams: [String])]
    ) throws(RandomStreamError) {
        var names: [String] = []
        func stream(_ name: String) throws(RandomStreamError) -> RandomStream {
            names.append(name)
            return try RandomStream(
                StreamID(masterSeed: masterSeed, replication: replication, name: name),
                kind: generator)
        }
        charger = try stream("charger")
        network = try stream("network")
        people = try stream("people")
        purges = try stream("purges")
        lowPower = try stream("low-power")
        var apps: [RandomStream] = []
        for app in setup.apps { apps.append(try stream("app.\(app.name)")) }
        self.apps = apps
        var declared: [[String: RandomStream]] = []
        for app in setup.apps {
            var own: [String: RandomStream] = [:]
            for m in mechanisms where app.hasSection(m.section) {
                for name in m.streams { own[name] = try stream("app.\(app.name).\(name)") }
            }
            declared.append(own)
        }
        self.declared = declared
        self.grants = setup.system.refreshGrant == nil ? nil : try stream("grants")
        self.interruptions = setup.people.interruptionsPerHour > 0 ? try stream("interruptions") : nil
        self.history = setup.people.history > .zero && setup.peopleTrace == nil ? try stream("history") : nil
        self.names = names
        assert(Set(names).count == names.count, "two random sources share a stream: \(Set(names.filter { n in names.filter { $0 == n }.count > 1 }).sorted())")
    }
}
