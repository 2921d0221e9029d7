import PhoneWorld
import SimEngine

/// BGTaskScheduler's requests, declared as a mechanism's section is: the keys of each entry
/// of an app profile's `tasks` list, which scenario files, `--set`, sweeps, `validate --print`
/// and `bgsim mechanisms` read from here. They are not a registered `Mechanism`: every policy
/// decides them, and the run's core submits (`Submission.swift`), gates (`Decisions.swift`)
/// and runs them. Their kinds are the built-in ones (``kinds``); their draws come
/// from the app's own stream, `app.<name>`.
public enum RegisteredTasks {
    /// `tasks`.
    public static let name = "tasks"
    /// For `bgsim mechanisms`.
    public static let summary = "BGTaskScheduler's refresh and processing requests, which every policy decides (the run's core)"
    /// The app's own stream.
    public static let streams = "app.<name>"
    /// Its kinds: the built-in ones.
    public static var kinds: [String] { TaskKind.builtIn.map(\.name) }

    /// Each entry's keys, in ``parameters``' order.
    public enum Key: Int, CaseIterable, Sendable {
        case id, kind, submitOn, earliestBegin, interval, cpu, upKb, downKb, cpuSharePct, successPct, expirationHandler
        case requiresExternalPower, requiresNetwork
    }

    /// Each entry's keys, with `AppTask`'s defaults, in ``Key``'s order.
    public static let parameters: [PolicyParameterInfo] = {
        let d = AppTask(identifier: "-", kind: .refresh)
        let percent = NumberRange(0...100)
        let keys: [PolicyParameterInfo] = [
            .name("id", help: "the BGTaskScheduler identifier, such as com.example.refresh; an app registers each once"),
            .choice("kind", AppTask.Kind.allCases.map(\.rawValue), help: "refresh (BGAppRefreshTask) or processing (BGProcessingTask)"),
            .choices(
                "submit_on", AppTask.Trigger.allCases.map(\.rawValue),
                help: "when the app submits it; none: a refresh at start, on leaving and from its handler, processing at start and from its handler"),
            .duration("earliest_begin", d.earliestBegin, help: "earliestBeginDate after a submission at a launch, on leaving or from an extension"),
            .duration("interval", d.interval, in: .positive, help: "earliestBeginDate after a resubmission from its handler, and the first one's phase"),
            .seconds("cpu", d.cpu, help: "wall time of the handler's computation after its transfers"),
            .kilobytes("up_kb", d.upBytes, help: "bytes the handler sends first"),
            .kilobytes("down_kb", d.downBytes, help: "bytes it then receives"),
            .number("cpu_share_pct", d.cpuShare * 100, in: percent, unit: "a share of one core in percent", help: "what the CPU monitor sees of it"),
            .number("success_pct", d.successProbability * 100, in: percent, unit: "a chance in percent", help: "chance that the work succeeds"),
            .flag(
                "expiration_handler", d.expirationHandler,
                help: "whether the app sets expirationHandler; without one an overrun ends unsuccessful, with no grace"),
            .flag("requires_external_power", d.requiresExternalPower, help: "processing only: run only on external power"),
            .flag("requires_network", d.requiresNetworkConnectivity, help: "processing only: run only with a network connection"),
        ]
        precondition(keys.count == Key.allCases.count, "one key per case of RegisteredTasks.Key")
        return keys
    }()

    /// The task an entry's values describe (the values of ``parameters``, in order), before
    /// the rules across keys and entries.
    public static func task(_ v: [ParameterValue]) -> AppTask {
        func at(_ k: Key) -> ParameterValue { v[k.rawValue] }
        guard case .text(let id) = at(.id), case .text(let kind) = at(.kind), let kind = AppTask.Kind(rawValue: kind) else {
            preconditionFailure("an entry's id and kind are read as declared")
        }
        var triggers: Set<AppTask.Trigger>?
        if case .names(let names) = at(.submitOn) { triggers = Set(names.compactMap(AppTask.Trigger.init(rawValue:))) }
        var t = AppTask(identifier: id, kind: kind, submitOn: triggers)
        if case .duration(let d) = at(.earliestBegin) { t.earliestBegin = d }
        if case .duration(let d) = at(.interval) { t.interval = d }
        if case .distribution(let d) = at(.cpu) { t.cpu = d }
        if case .distribution(let d) = at(.upKb) { t.upBytes = d }
        if case .distribution(let d) = at(.downKb) { t.downBytes = d }
        if case .number(let x) = at(.cpuSharePct) { t.cpuShare = x / 100 }
        if case .number(let x) = at(.successPct) { t.successProbability = x / 100 }
        if case .flag(let b) = at(.expirationHandler) { t.expirationHandler = b }
        if case .flag(let b) = at(.requiresExternalPower) { t.requiresExternalPower = b }
        if case .flag(let b) = at(.requiresNetwork) { t.requiresNetworkConnectivity = b }
        return t
    }
}
