import PhoneWorld
import SimEngine

/// BGTaskScheduler's requests, declared as a mechanism's section is: the keys of each entry
/// of an app profile's `tasks` list, which scenario files, `--set`, sweeps, `validate --print`
/// and `bgsim mechanisms` read from here. They are not a registered `Mechanism`: every policy
/// decides them, and the run's core submits (`Submission.swift`), gates (`Decisions.swift`)
/// and runs them. Their kinds are the built-in ones (``kinds``); their draws come
/// from the app's own stream, `app.<name>`.
package enum RegisteredTasks {
    /// `tasks`.
    package static let name = "tasks"
    /// For `bgsim mechanisms`.
    package static let summary = "BGTaskScheduler's refresh and processing requests, which every policy decides (the run's core)"
    /// The app's own stream.
    package static let streams = "app.<name>"
    /// Its kinds: the built-in ones.
    package static var kinds: [String] { TaskKind.builtIn.map(\.name) }

    /// Each entry's keys, set on `AppTask` by key path. `kind` comes before the keys whose
    /// defaults depend on it: setting it gives the task its kind's triggers.
    package static let settings: [Setting<AppTask>] = [
        .text("id", \.identifier, help: "the BGTaskScheduler identifier, such as com.example.refresh; an app registers each once").required(),
        .custom(
            "kind", .choice(AppTask.Kind.allCases.map(\.rawValue)), help: "refresh (BGAppRefreshTask) or processing (BGProcessingTask)",
            get: { .text($0.kind.rawValue) },
            set: { t, v in
                if case .text(let k) = v, let kind = AppTask.Kind(rawValue: k) { t = AppTask(identifier: t.identifier, kind: kind) }
            }
        ).required(),
        .custom(
            "submit_on", .choices(AppTask.Trigger.allCases.map(\.rawValue)),
            help: "when the app submits it; none: a refresh at start, on leaving and from its handler, processing at start and from its handler",
            get: { _ in .off },
            set: { t, v in
                if case .names(let names) = v { t.submitOn = Set(names.compactMap(AppTask.Trigger.init(rawValue:))) }
            }),
        .duration("earliest_begin", \.earliestBegin, help: "earliestBeginDate after a submission at a launch, on leaving or from an extension"),
        .duration("interval", \.interval, in: .positive, help: "earliestBeginDate after a resubmission from its handler, and the first one's phase"),
        .distribution("cpu", \.cpu, .seconds, help: "wall time of the handler's computation after its transfers"),
        .distribution("up_kb", \.upBytes, .kilobytes, help: "bytes the handler sends first"),
        .distribution("down_kb", \.downBytes, .kilobytes, help: "bytes it then receives"),
        .number("cpu_share_pct", \.cpuShare, in: 0...100, unit: .percent("a share of one core"), help: "what the CPU monitor sees of it"),
        .number("success_pct", \.successProbability, in: 0...100, unit: .percent("a chance"), help: "chance that the work succeeds"),
        .flag(
            "expiration_handler", \.expirationHandler,
            help: "whether the app sets expirationHandler; without one an overrun ends unsuccessful, with no grace"),
        .flag("requires_external_power", \.requiresExternalPower, help: "processing only: run only on external power"),
        .flag("requires_network", \.requiresNetworkConnectivity, help: "processing only: run only with a network connection"),
    ]

    /// An entry before a scenario sets it: the keys' defaults.
    package static let defaults = AppTask(identifier: "-", kind: .refresh)

    /// Each entry's keys, with `AppTask`'s defaults, for `bgsim mechanisms` and the readers.
    package static let parameters: [PolicyParameterInfo] = settings.map { $0.info(defaults) }
}
