import PhoneWorld
import PolicyAPI
import SimEngine
import SimRandom

/// Region monitoring (docs/sources.md §2): crossing a geofence of one of the app's places
/// wakes it in the background for the kind's budget (`system.region_budget`), exits before
/// entries. Whether the system relaunches an app the person swiped away is a phone-wide key
/// (`system.regions.after_swipe`), as the sources disagree; an app that exits on suspend is
/// not relaunched.
package final class Regions: Mechanism {
    /// `regions`.
    package static let name = "regions"
    /// For `bgsim mechanisms`.
    package static let summary = "Region monitoring: entering or leaving a monitored place wakes the app in the background"
    /// The app profile's keys.
    package static let parameters = keys.described(Section())
    static let keys: [Setting<Section>] = [
        .custom(
            "places", .places, help: "places of the network model whose geofences the app monitors", get: { .names($0.places) },
            set: { if case .names(let n) = $1 { $0.places = n } }
        ).required(),
        .distribution("cpu", \.cpu, .seconds, help: "CPU time of the handler of an entry or exit"),
        .distribution("up_kb", \.upBytes, .kilobytes, help: "bytes the handler sends"),
        .distribution("down_kb", \.downBytes, .kilobytes, help: "bytes the handler receives"),
    ]
    /// The keys of `system.regions`.
    package static let systemParameters = systemKeys.described(SystemKeys())
    struct SystemKeys { var afterSwipe = true }
    static let systemKeys: [Setting<SystemKeys>] = [
        .flag(
            "after_swipe", \.afterSwipe,
            help: "a crossing relaunches an app the person swiped away (false: dropped until they open it, as reported on iOS 26)")
    ]
    /// `app.<name>.region`: each crossing's work.
    package static let streams = [region.name]
    private static let region = DeclaredStream<Regions>("region")
    /// `region`: `system.region_budget` once woken.
    package static let kinds = [TaskKind.Traits("region", [.producesResult], budget: { $0.regionBudget })]
    /// The run's calls it implements.
    package static let hooks: MechanismHooks = [.placeChanged]

    struct Section {
        var places: [String] = [], cpu = Distribution.fixed(2), upBytes = Distribution.fixed(1_000), downBytes = Distribution.fixed(5_000)
    }

    let sections: [Section?]
    let afterSwipe: Bool
    let kind = MechanismRegistry.kind(Regions.self)

    /// The run's mechanism, from each app's section and `system.regions`.
    package init(apps: [MechanismValues?], system: MechanismValues) {
        afterSwipe = system.decode(Self.systemKeys, over: SystemKeys()).afterSwipe
        sections = apps.map { $0?.decode(Self.keys, over: Section()) }
    }

    /// Each app that monitors `left` or `entered` is woken, in app order, exit first.
    package func placeChanged<H: MechanismHost & ~Copyable>(left: String?, entered: String?, _ host: inout H) {
        for (app, section) in sections.enumerated() {
            guard let section, let stream = host.stream(app, Self.region) else { continue }
            for (crossing, place) in [(0, left), (1, entered)] {
                guard let place, let p = section.places.firstIndex(of: place) else { continue }
                // Drawn for every crossing, delivered or not, so later draws stay aligned.
                let work = SimDuration(seconds: section.cpu.draw(stream))
                let up = section.upBytes.draw(stream).rounded(), down = section.downBytes.draw(stream).rounded()
                let task = host.submit(app: app, kind: kind, source: 2 * p + crossing, work: work, upBytes: up, downBytes: down, powerW: host.cpuPowerW(app))
                if !host.phoneIsOn || host.isDraining || host.exitsOnSuspend(app) || (!afterSwipe && host.isSwipedAway(app)) {
                    host.end(task, .dropped, rejection: nil)
                } else {
                    host.run(task)
                }
            }
        }
    }

    /// `region.exit.home`, `region.enter.work`.
    package func identifier(app: Int, source: Int) -> String {
        "region.\(source & 1 == 0 ? "exit" : "enter").\(sections[app]?.places[source >> 1] ?? "")"
    }
}
