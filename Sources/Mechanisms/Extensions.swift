import PhoneWorld
import PolicyAPI
import SimEngine

/// App extensions (a widget, a notification service) that submit BGTaskScheduler requests
/// (`submit_on: extension`; docs/sources.md §2): they run as a Poisson process, drawn as the
/// run goes, and each run submits the app's tasks registered for it, which then run in the
/// main app, launched for them like any other request's.
package final class Extensions: Mechanism {
    /// `extensions`.
    package static let name = "extensions"
    /// For `bgsim mechanisms`.
    package static let summary = "App extensions: each run submits the app's tasks registered with submit_on: extension"
    /// The app profile's keys.
    package static let parameters = keys.described(Keys())
    struct Keys { var runsPerDay = 1.0 }
    static let keys: [Setting<Keys>] = [
        .number(
            "runs_per_day", \.runsPerDay, in: 0...1440, unit: .perDay("a rate"),
            help: "how often the app's extensions run (a Poisson process), each submitting its tasks registered on extension")
    ]
    /// `app.<name>.extension`: when they run.
    package static let streams = [extensionStream.name]
    private static let extensionStream = DeclaredStream<Extensions>("extension")
    /// None: its requests are the app's refresh and processing tasks.
    package static let kinds: [TaskKind.Traits] = []
    /// The run's calls it implements.
    package static let hooks: MechanismHooks = [.start]

    let perDay: [Double]

    /// The run's mechanism, from each app's section.
    package init(apps: [MechanismValues?], system: MechanismValues) {
        perDay = apps.map { $0?.decode(Self.keys, over: Keys()).runsPerDay ?? 0 }
    }

    /// Each app's first run, if it has tasks for its extensions to submit.
    package func start<H: MechanismHost & ~Copyable>(_ host: inout H) {
        for app in perDay.indices where perDay[app] > 0 && host.scenario.apps[app].tasks.contains(where: { $0.submitOn.contains(.extension) }) {
            scheduleRun(app, &host)
        }
    }

    /// The app's extensions' next run, before the horizon; payload: the app.
    func scheduleRun<H: MechanismHost & ~Copyable>(_ app: Int, _ host: inout H) {
        guard let stream = host.stream(app, Self.extensionStream) else { return }
        let next = host.now + SimDuration(seconds: stream.exponential(mean: 86_400 / perDay[app]))
        if next < host.horizon { host.schedule(app, at: next, as: .world) }
    }

    /// An extension of the app runs and submits the tasks it schedules.
    package func event<H: MechanismHost & ~Copyable>(_ app: Int, _ host: inout H) {
        scheduleRun(app, &host)
        guard host.phoneIsOn, !host.isDraining else { return }
        host.submitTasks(app, on: .extension)
    }

    /// It has no tasks of its own.
    package func identifier(app: Int, source: Int) -> String { "extension" }
}
