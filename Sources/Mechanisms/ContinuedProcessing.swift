import PhoneWorld
import PolicyAPI
import SimEngine
import SimRandom

/// iOS 26's `BGContinuedProcessingTask` (docs/sources.md §2): work a person starts with a tap
/// in the foreground, which goes on when they leave the app, with its progress in a Live
/// Activity where they may cancel it (its expiration handler is called). A request starts at once if the system has room;
/// otherwise it waits at the back of the queue (strategy `queue`) or fails with
/// `immediateRunIneligible` (`fail`). A swipe cancels the app's queued requests. Under memory
/// pressure the system ends the running task that shows the least progress, if it is below a
/// threshold. A request may ask for the GPU, which the phone may not offer; identifiers may be
/// wildcards in the permitted list (`com.example.export.*`).
package final class ContinuedProcessing: Mechanism {
    /// `continued_processing`.
    package static let name = "continued_processing"
    /// For `bgsim mechanisms`.
    package static let summary = "iOS 26 BGContinuedProcessingTask: work started by a tap that goes on in the background"
    /// The app profile's keys.
    package static let parameters = keys.described(Keys())
    struct Keys {
        var perOpen = 5.0 / 100, tapAfter = SimDuration.seconds(20), identifier = "com.example.export", queues = true, cpu = SimDuration.minutes(3)
        var cpuSigma = 0.5, upBytes = 0.0, downBytes = 0.0, gpu = false, stall = 0.0 / 100, cancel = 5.0 / 100
    }
    static let keys: [Setting<Keys>] = [
        .number("per_open_pct", \.perOpen, in: 0...100, unit: .percent("a chance"), help: "chance that the person starts one on an open (a tap in the app)"),
        .duration(
            "tap_after", \.tapAfter, in: .zero ... .hours(24), help: "time from the open to the tap; no request if the app has left the foreground by then"),
        .text("identifier", \.identifier, help: "requests are <identifier>.<n>; the permitted list allows them with <identifier>.* or each one"),
        .flag("queue", \.queues, help: "strategy queue (wait for room); false: fail with immediateRunIneligible when the system has no room now"),
        .duration("cpu", \.cpu, in: .positive, help: "median CPU time of a task's work (log-normal)"),
        .number("cpu_sigma", \.cpuSigma, in: 0...3, unit: "a log-normal sigma", help: "spread of the CPU time"),
        .number("up_kb", \.upBytes, in: 0...1e9, unit: .kilobytes(), help: "bytes a task sends before its CPU work"),
        .number("down_kb", \.downBytes, in: 0...1e9, unit: .kilobytes(), help: "bytes a task receives before its CPU work"),
        .flag("gpu", \.gpu, help: "asks for the GPU (requiredResources = .gpu); refused as notPermitted where the phone has none"),
        .number(
            "stall_pct", \.stall, in: 0...100, unit: .percent("a chance"),
            help: "chance that a task reports no progress (first to be ended under memory pressure)"),
        .number(
            "cancel_pct", \.cancel, in: 0...100, unit: .percent("a chance"),
            help: "chance that the person cancels a running task from its Live Activity, at a uniform point of its work: its expiration handler is called"),
    ]
    /// The keys of `system.continued_processing`.
    package static let systemParameters = systemKeys.described(SystemKeys())
    struct SystemKeys { var maxRunning = 1, gpuSupported = false, gpuW = 1.5, pressureProgress = 10.0 / 100 }
    static let systemKeys: [Setting<SystemKeys>] = [
        .integer("max_running", \.maxRunning, in: 1...100, unit: "a number of tasks", help: "tasks the system runs at once; later requests queue or fail"),
        .flag("gpu_supported", \.gpuSupported, help: "BGTaskScheduler.supportedResources includes .gpu"),
        .number("gpu_w", \.gpuW, in: 0...20, unit: .watts(), help: "GPU power while a task that asked for it runs"),
        .number(
            "pressure_progress_pct", \.pressureProgress, in: 0...100, unit: .percent("a progress"),
            help: "under memory pressure, the running task with the least progress is ended if below this"),
    ]
    /// `app.<name>.continued`: per open, the tap, the work, whether it stalls and is cancelled.
    package static let streams = [continued.name]
    private static let continued = DeclaredStream<ContinuedProcessing>("continued")
    /// `continued_processing`: no time limit of its own; numbered requests.
    package static let kinds = [TaskKind.Traits("continued_processing", .numbered, budget: nil)]
    /// The run's calls it implements.
    package static let hooks: MechanismHooks = [.appOpened, .appSwipedAway, .pressure]
    /// iOS 26's `immediateRunIneligible`: strategy `fail` and no room now.
    package static let rejections = [SubmitError.Name("immediateRunIneligible", token: "immediate_run_ineligible")]
    /// `person_cancelled`: from the Live Activity.
    package static let expirationReasons = ["person_cancelled"]

    struct Section {
        var perOpen: Double, tapAfter: SimDuration, identifier: String, queues: Bool
        var cpu: Distribution, upBytes: Double, downBytes: Double, gpu: Bool, stall: Double, cancel: Double
    }
    /// A request drawn at an open, submitted at its tap; then its plan while it waits or runs.
    struct Plan {
        var app: Int, work: SimDuration, stalls: Bool, cancelAt: Double?
    }

    let sections: [Section?]
    let maxRunning: Int, gpuSupported: Bool, gpuW: Double, pressureProgress: Double
    let kind = MechanismRegistry.kind(ContinuedProcessing.self)
    let ineligible = MechanismRegistry.rejection(ContinuedProcessing.self)
    let cancelled = MechanismRegistry.expirationReason(ContinuedProcessing.self)
    /// Taps to come (payload `2k`), and tasks by id while they wait or run.
    var taps: [Int: Plan] = [:], plans: [Int: Plan] = [:]
    var nextTap = 0
    /// Requests per app so far, for their identifiers.
    var submitted: [Int]
    var queue: [Int] = [], running: [Int] = []

    /// The run's mechanism, from each app's section and `system.continued_processing`.
    package init(apps: [MechanismValues?], system: MechanismValues) {
        sections = apps.map { v in
            v.map {
                let k = $0.decode(Self.keys, over: Keys())
                return Section(
                    perOpen: k.perOpen, tapAfter: k.tapAfter, identifier: k.identifier, queues: k.queues,
                    cpu: .lognormal(median: k.cpu.seconds, sigma: k.cpuSigma), upBytes: k.upBytes, downBytes: k.downBytes, gpu: k.gpu,
                    stall: k.stall, cancel: k.cancel)
            }
        }
        submitted = Array(repeating: 0, count: apps.count)
        let s = system.decode(Self.systemKeys, over: SystemKeys())
        maxRunning = s.maxRunning
        gpuSupported = s.gpuSupported
        gpuW = s.gpuW
        pressureProgress = s.pressureProgress
    }

    /// The open's draws, made whether or not the person taps, so later opens draw the same.
    package func appOpened<H: MechanismHost & ~Copyable>(_ app: Int, _ host: inout H) {
        guard let s = sections[app], let stream = host.stream(app, Self.continued) else { return }
        let taps = stream.bernoulli(s.perOpen)
        let work = SimDuration(seconds: s.cpu.draw(stream))
        let stalls = stream.bernoulli(s.stall), cancels = stream.bernoulli(s.cancel), at = stream.uniform(0, 1)
        guard taps, !host.isDraining else { return }
        self.taps[nextTap] = Plan(app: app, work: work, stalls: stalls, cancelAt: cancels ? at : nil)
        host.schedule(2 * nextTap, at: host.now + s.tapAfter)
        nextTap += 1
    }

    /// A tap (even payload) or a cancellation from the Live Activity (odd: the task's id).
    package func event<H: MechanismHost & ~Copyable>(_ payload: Int, _ host: inout H) {
        if payload & 1 == 1 {
            let task = payload >> 1
            if host.isRunning(task) { host.expireTask(task, cancelled) }
            return
        }
        guard let plan = taps.removeValue(forKey: payload >> 1), let s = sections[plan.app] else { return }
        // Submitted only from the foreground, as the result of the person's action.
        guard host.appState(plan.app) == .active, host.phoneIsOn, !host.isDraining else { return }
        let n = submitted[plan.app]
        submitted[plan.app] += 1
        let granted = s.gpu && gpuSupported
        let task = host.submit(
            app: plan.app, kind: kind, source: n, work: plan.work, upBytes: s.upBytes, downBytes: s.downBytes,
            powerW: host.cpuPowerW(plan.app) + (granted ? gpuW : 0))
        if !host.permits(plan.app, identifier(app: plan.app, source: n)) || (s.gpu && !gpuSupported) {
            host.end(task, .rejected, rejection: .notPermitted)
            return
        }
        plans[task] = plan
        if running.count < maxRunning && queue.isEmpty {
            start(task, &host)
        } else if s.queues {
            queue.append(task)
        } else {
            plans[task] = nil
            host.end(task, .rejected, rejection: ineligible)
        }
    }

    func start<H: MechanismHost & ~Copyable>(_ task: Int, _ host: inout H) {
        running.append(task)
        host.run(task)
        if let at = plans[task]?.cancelAt, let work = plans[task]?.work {
            host.schedule(2 * task + 1, at: host.now + SimDuration(seconds: at * work.seconds))
        }
    }

    /// Room again: the queue's first requests start, while the phone is on.
    package func taskEnded<H: MechanismHost & ~Copyable>(_ task: Int, _ outcome: TaskOutcome, _ host: inout H) {
        plans[task] = nil
        running.removeAll { $0 == task }
        queue.removeAll { $0 == task }
        while running.count < maxRunning, host.phoneIsOn, !host.isDraining, !queue.isEmpty {
            start(queue.removeFirst(), &host)
        }
    }

    /// The app's queued requests are cancelled; its running ones ended with its process.
    package func appSwipedAway<H: MechanismHost & ~Copyable>(_ app: Int, _ host: inout H) {
        let cancelled = queue.filter { plans[$0]?.app == app }
        queue.removeAll { plans[$0]?.app == app }
        for task in cancelled { host.end(task, .cancelled, rejection: nil) }
    }

    /// The running task with the least progress reported ends, if below the threshold: a
    /// stalled task reports none.
    package func pressure<H: MechanismHost & ~Copyable>(_ host: inout H) {
        var least: (task: Int, progress: Double)?
        for task in running {
            let p = plans[task]?.stalls == true ? 0 : host.progress(of: task)
            if p < (least?.progress ?? .infinity) { least = (task, p) }
        }
        if let least, least.progress < pressureProgress { host.end(least.task, .killed, rejection: nil) }
    }

    /// `<identifier>.<n>`.
    package func identifier(app: Int, source: Int) -> String { "\(sections[app]?.identifier ?? "continued").\(source)" }
}
