import PhoneWorld
import PolicyAPI
import SimEngine
import SimRandom

/// State preservation (docs/sources.md §1): an app that does not archive what its background
/// work produced keeps it in memory only, loses it when its process ends (a purge, a kill, a
/// swipe, a shutdown; not `applicationWillTerminate` of an app that exits on suspend, which
/// saves), and redoes the work when it is next launched, as finite-length work. The person
/// opening the app sees what it holds, and the app saves it on the way out (assumption).
/// An app without the section archives every result at no cost.
package final class StatePreservation: Mechanism {
    /// `state_preservation`.
    package static let name = "state_preservation"
    /// For `bgsim mechanisms`.
    package static let summary = "State preservation: results an app does not archive are lost with its process and redone at its next launch"
    /// The app profile's keys.
    package static let parameters = keys.described(Keys())
    struct Keys { var archive = 100.0 / 100, cpu = SimDuration.zero }
    static let keys: [Setting<Keys>] = [
        .number(
            "archive_pct", \.archive, in: 0...100, unit: .percent("a chance"),
            help: "chance that the app archives a result of its background work as the work ends"),
        .duration("archive_cpu", \.cpu, help: "CPU time of archiving a result, added to the work that produces it"),
    ]
    /// `app.<name>.archive`: per result, whether it is archived (drawn only for a chance
    /// strictly between 0 and 100%).
    package static let streams = [archive.name]
    private static let archive = DeclaredStream<StatePreservation>("archive")
    /// `redo`: lost work redone at a launch, with the finite-length grant in the background;
    /// numbered by the lost task (`redo.<task>`), tallied as `redo.*`.
    package static let kinds = [TaskKind.Traits("redo", [.usesGrant, .producesResult, .numbered], budget: { $0.backgroundTime })]
    /// The run's calls it implements.
    package static let hooks: MechanismHooks = [.appEnteredForeground, .processEnded, .processStarted]

    /// A completed result the app holds in memory only: its task, and what redoing it costs.
    struct Result {
        var task: Int, work: SimDuration, upBytes: Double, downBytes: Double, energyJ: Double
    }

    let archive: [Double?], archiveCPU: [SimDuration]
    let kind = MechanismRegistry.kind(StatePreservation.self)
    /// Per app: results not archived yet; results lost with the process, to redo.
    var unsaved: [[Result]], lost: [[Result]]
    /// Tasks under way whose result the app will not archive.
    var unarchived: Set<Int> = []

    /// The run's mechanism, from each app's section.
    package init(apps: [MechanismValues?], system: MechanismValues) {
        let keys = apps.map { $0?.decode(Self.keys, over: Keys()) }
        archive = keys.map { $0?.archive }
        archiveCPU = keys.map { $0?.cpu ?? .zero }
        unsaved = Array(repeating: [], count: apps.count)
        lost = Array(repeating: [], count: apps.count)
    }

    /// The apps with the section: their tasks are observed.
    package func observesTasks(of app: Int) -> Bool { archive[app] != nil }

    /// A task that produces a result begins: whether the app archives it, at what cost.
    package func anyTaskBegins<H: MechanismHost & ~Copyable>(_ task: Int, _ host: inout H) {
        let app = host.app(of: task)
        guard let p = archive[app], host.kind(of: task).producesResult else { return }
        let archives = p > 0 && p < 1 ? host.stream(app, Self.archive)!.bernoulli(p) : p > 0
        if archives {
            unarchived.remove(task)
            host.addWork(task, archiveCPU[app])
        } else {
            unarchived.insert(task)
        }
    }

    /// A task ended; one that completed its work leaves its result archived (and with it
    /// everything the app held) or in memory only.
    package func anyTaskEnded<H: MechanismHost & ~Copyable>(_ task: Int, resultReady: Bool, _ host: inout H) {
        let app = host.app(of: task)
        guard resultReady, host.kind(of: task).producesResult else {
            unarchived.remove(task)
            return
        }
        if unarchived.remove(task) == nil {
            if !unsaved[app].isEmpty { unsaved[app].removeAll() }
        } else {
            let (up, down) = host.bytes(of: task)
            unsaved[app].append(Result(task: task, work: host.work(of: task), upBytes: up, downBytes: down, energyJ: host.energyJ(of: task)))
        }
    }

    /// The person sees what the app holds; it saves its state on the way out.
    package func appEnteredForeground<H: MechanismHost & ~Copyable>(_ app: Int, _ host: inout H) {
        if !unsaved[app].isEmpty { unsaved[app].removeAll() }
    }

    /// The process ended: what it held unarchived is lost, unless it saved in
    /// `applicationWillTerminate` (an app that exits on suspend always gets it).
    package func processEnded<H: MechanismHost & ~Copyable>(_ app: Int, cause: LifecycleCause, _ host: inout H) {
        guard !unsaved[app].isEmpty, cause != .exitsOnSuspend else { return }
        for r in unsaved[app] { host.reportLost(r.task, app: app, energyJ: r.energyJ) }
        lost[app] += unsaved[app]
        unsaved[app].removeAll()
    }

    /// At a launch, the app redoes the work it lost, as finite-length work: unlimited in the
    /// foreground, the background grant otherwise.
    package func processStarted<H: MechanismHost & ~Copyable>(_ app: Int, _ host: inout H) {
        guard !lost[app].isEmpty, !host.isDraining else { return }
        let redo = lost[app]
        lost[app].removeAll()
        for r in redo {
            let task = host.submit(
                app: app, kind: kind, source: r.task, work: r.work, upBytes: r.upBytes, downBytes: r.downBytes, powerW: host.cpuPowerW(app))
            host.run(task)
        }
    }

    /// `redo.<task>`, the lost task's id.
    package func identifier(app: Int, source: Int) -> String { "redo.\(source)" }
}
