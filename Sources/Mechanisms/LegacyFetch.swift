import PhoneWorld
import PolicyAPI
import SimEngine
import SimRandom

/// Legacy background fetch (`setMinimumBackgroundFetchInterval` and
/// `performFetchWithCompletionHandler`, before iOS 13; docs/sources.md §2): the system asks
/// the app for a fetch by itself, decided by the policy like a refresh, no sooner than
/// `minimum_interval` after the last one started; the handler has `system.fetch_budget`.
/// Declaring a BGTaskScheduler identifier, lacking the `fetch` background mode or exiting on
/// suspend turns it off.
///
/// A fetch draws its work from the app's own stream, as a BGTaskScheduler request does: an app
/// uses one or the other, never both.
package final class LegacyFetch: Mechanism {
    /// `background_fetch`.
    package static let name = "background_fetch"
    /// For `bgsim mechanisms`.
    package static let summary = "Legacy background fetch (before iOS 13): the system asks for fetches, decided like a refresh"
    /// The app profile's keys.
    package static let parameters = keys.described(Section())
    static let keys: [Setting<Section>] = [
        .duration("minimum_interval", \.interval, help: "setMinimumBackgroundFetchInterval: no fetch sooner than this after the last one started"),
        .distribution("cpu", \.cpu, .seconds, help: "CPU time of a fetch"),
        .distribution("up_kb", \.upBytes, .kilobytes, help: "bytes a fetch sends"),
        .distribution("down_kb", \.downBytes, .kilobytes, help: "bytes a fetch receives"),
        .number("success_pct", \.success, in: 0...100, unit: .percent("a chance"), help: "chance that a fetch reports new data"),
    ]
    /// None: a fetch draws from the app's own stream.
    package static let streams: [String] = []
    /// A fetch is the app's own work, in its BGTaskScheduler requests' place.
    package static let drawsAppStream = true
    /// `fetch`: decided like a refresh; `system.fetch_budget` once started.
    package static let kinds = [TaskKind.Traits("fetch", [.scheduled, .refreshLike, .producesResult], budget: { $0.fetchBudget })]
    /// The run's calls it implements.
    package static let hooks: MechanismHooks = [.start]

    struct Section {
        var interval = SimDuration.hours(1), cpu = Distribution.exponential(mean: 3), upBytes = Distribution.fixed(1_000)
        var downBytes = Distribution.fixed(10_000), success = 100.0 / 100
    }

    let sections: [Section?]
    let kind = MechanismRegistry.kind(LegacyFetch.self)
    /// Per app, `AppParameters.forgetsCompletion`, read once: the host's scenario is a copy of
    /// the whole setup.
    var forgetsCompletion: [Double] = []

    /// The run's mechanism, from each app's section.
    package init(apps: [MechanismValues?], system: MechanismValues) {
        sections = apps.map { $0?.decode(Self.keys, over: Section()) }
    }

    /// Whether app `app` fetches: its section, the `fetch` mode, no BGTaskScheduler identifier.
    func fetches<H: MechanismHost & ~Copyable>(_ app: Int, _ host: borrowing H) -> Bool {
        sections[app] != nil && host.scenario.apps[app].permitted.isEmpty && !host.exitsOnSuspend(app) && host.declares(app, .fetch)
    }

    /// Each fetching app's first fetch, at a random phase within its interval, as if the last
    /// was before the run.
    package func start<H: MechanismHost & ~Copyable>(_ host: inout H) {
        forgetsCompletion = host.scenario.apps.map(\.forgetsCompletion)
        for app in sections.indices where fetches(app, host) {
            let phase = SimDuration(seconds: host.appStream(app).uniform() * sections[app]!.interval.seconds)
            request(app, earliestBegin: .after(phase), &host)
        }
    }

    /// The policy started a fetch: the system plans the next.
    package func taskStarted<H: MechanismHost & ~Copyable>(_ task: Int, _ host: inout H) {
        let app = host.app(of: task)
        request(app, earliestBegin: host.now + sections[app]!.interval, &host)
    }

    func request<H: MechanismHost & ~Copyable>(_ app: Int, earliestBegin: SimInstant, _ host: inout H) {
        let section = sections[app]!, stream = host.appStream(app)
        let work = SimDuration(seconds: section.cpu.draw(stream))
        let up = section.upBytes.draw(stream).rounded(), down = section.downBytes.draw(stream).rounded()
        let success = stream.bernoulli(section.success)
        let forgets = stream.bernoulli(forgetsCompletion[app])
        _ = host.request(
            app: app, kind: kind, source: 0, work: work, upBytes: up, downBytes: down, powerW: host.cpuPowerW(app),
            earliestBegin: earliestBegin, success: success, forgetsCompletion: forgets)
    }

    /// `background-fetch`.
    package func identifier(app: Int, source: Int) -> String { "background-fetch" }
}
