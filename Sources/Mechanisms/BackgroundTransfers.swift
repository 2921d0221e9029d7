import PhoneWorld
import PolicyAPI
import SimEngine
import SimRandom

/// Background URLSession transfers (docs/sources.md §1-3): as the person leaves the app it may
/// hand the system an upload or download, which the system carries out without the app (a
/// purge does not stop it; a swipe cancels it; discretionary ones wait for Wi-Fi and external
/// power), then wakes the app in the background to handle the result, for the kind's budget
/// (`system.wake_budget`). The system gives up on a transfer after URLSession's
/// `timeoutIntervalForResource`, 7 days by default (Apple, URLSessionConfiguration).
package final class BackgroundTransfers: Mechanism {
    /// `background_transfer`.
    package static let name = "background_transfer"
    /// For `bgsim mechanisms`.
    package static let summary = "Background URLSession transfers: handed to the system on leaving, then handed back to the app"
    /// The app profile's keys.
    package static let parameters = keys.described(Section())
    static let keys: [Setting<Section>] = [
        .number("probability_pct", \.probability, in: 0...100, unit: .percent("a chance"), help: "chance that a leave hands the system a transfer"),
        .distribution("up_kb", \.upBytes, .kilobytes, help: "bytes to upload"),
        .distribution("down_kb", \.downBytes, .kilobytes, help: "bytes to download"),
        .flag("discretionary", \.discretionary, help: "isDiscretionary: the system waits for Wi-Fi and external power"),
        .distribution("cpu", \.cpu, .seconds, help: "CPU time of the app's handling once the system hands the result back"),
    ]
    /// `app.<name>.transfer`: each leave's draws.
    package static let streams = [transfer.name]
    private static let transfer = DeclaredStream<BackgroundTransfers>("transfer")
    /// `background_transfer`: carried by the system, then `system.wake_budget` in the app.
    package static let kinds = [TaskKind.Traits("background_transfer", [.producesResult, .systemCarried], budget: { $0.wakeBudget })]
    /// The run's calls it implements.
    package static let hooks: MechanismHooks = [.appLeft, .gatesChanged, .appSwipedAway]
    /// URLSession's default `timeoutIntervalForResource`.
    static let resourceTimeout = SimDuration.days(7)

    struct Section {
        var probability = 50.0 / 100, upBytes = Distribution.fixed(0), downBytes = Distribution.fixed(1_000_000), discretionary = false
        var cpu = Distribution.fixed(1)
    }

    let sections: [Section?]
    let kind = MechanismRegistry.kind(BackgroundTransfers.self)
    /// Transfers handed over that the system has not started, in hand-over order; those it
    /// carries, in start order.
    var pending: [Int] = [], carried: [Int] = []

    /// The run's mechanism, from each app's section.
    package init(apps: [MechanismValues?], system: MechanismValues) {
        sections = apps.map { $0?.decode(Self.keys, over: Section()) }
    }

    /// The app may hand the system a transfer: drawn at every leave, swiped or not, whether or
    /// not one is handed over, so later leaves draw the same.
    package func appLeft<H: MechanismHost & ~Copyable>(_ app: Int, swiped: Bool, _ host: inout H) {
        guard let section = sections[app], let stream = host.stream(app, Self.transfer) else { return }
        let hands = stream.bernoulli(section.probability)
        let up = section.upBytes.draw(stream).rounded(), down = section.downBytes.draw(stream).rounded()
        let cpu = SimDuration(seconds: section.cpu.draw(stream))
        guard hands, !swiped else { return }
        let task = host.submit(app: app, kind: kind, source: 0, work: cpu, upBytes: up, downBytes: down, powerW: host.cpuPowerW(app))
        host.setRequirements(task, externalPower: section.discretionary, network: true)
        pending.append(task)
        startPending(&host)
    }

    /// The charger, the network or the phone changed: what waits may start.
    package func gatesChanged<H: MechanismHost & ~Copyable>(_ host: inout H) {
        if !pending.isEmpty { startPending(&host) }
    }

    /// Starts the waiting transfers the system now allows: all while the phone is on, the
    /// discretionary ones only on Wi-Fi and external power. A started one without a connection
    /// waits on the radio's queue for one.
    func startPending<H: MechanismHost & ~Copyable>(_ host: inout H) {
        guard host.phoneIsOn, !host.isDraining else { return }
        let waiting = pending
        pending.removeAll()
        for task in waiting {
            if sections[host.app(of: task)]!.discretionary && !(host.isCharging && host.connection == .wifi) {
                pending.append(task)
                continue
            }
            carried.append(task)
            host.carry(task, timeout: Self.resourceTimeout)
        }
    }

    /// A swipe cancels the app's transfers, those the system carries, then those waiting.
    package func appSwipedAway<H: MechanismHost & ~Copyable>(_ app: Int, _ host: inout H) {
        for task in carried where host.app(of: task) == app && host.isCarried(task) { host.end(task, .cancelled, rejection: nil) }
        for task in pending where host.app(of: task) == app { host.end(task, .cancelled, rejection: nil) }
    }

    /// The task ended: it waits and is carried no more.
    package func taskEnded<H: MechanismHost & ~Copyable>(_ task: Int, _ outcome: TaskOutcome, _ host: inout H) {
        if let k = pending.firstIndex(of: task) { pending.remove(at: k) }
        if let k = carried.firstIndex(of: task) { carried.remove(at: k) }
    }

    /// `background-transfer`, or `background-transfer.discretionary`.
    package func identifier(app: Int, source: Int) -> String {
        sections[app]?.discretionary == true ? "background-transfer.discretionary" : "background-transfer"
    }
}
