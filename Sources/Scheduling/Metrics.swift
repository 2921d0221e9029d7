import PhoneWorld
import SimEngine
import SimRandom

/// Where a radio is in its cycle: idle, promoting to its connected state, moving data, or in
/// its tail (connected, waiting for more data before it drops to idle).
package enum RadioActivity: String, Sendable, CaseIterable {
    case idle, promoting, active, tail
}

/// Receives what happens in one simulated run.
///
/// The run loop calls these as things happen; a sink keeps what it needs. `RunMetrics`
/// keeps summaries; other sinks (a task log, a timeline) can keep more.
package protocol MetricsSink {
    /// A request ended, in whatever final state.
    mutating func taskEnded(_ record: TaskRecord)
    /// The battery reached `charge` at `time` (called at every change of slope, so the
    /// extremes of the piecewise-linear charge curve are all seen).
    mutating func chargeObserved(_ charge: Double, at time: SimInstant)
    /// The battery emptied and the phone shut down.
    mutating func phoneShutDown(at time: SimInstant)
    /// The phone booted after being off for `offFor`.
    mutating func phoneBooted(at time: SimInstant, offFor: SimDuration)
    /// Something happened in the world outside the tasks (the person, the network, the
    /// charger, a setting).
    mutating func worldEvent(_ event: WorldEvent, at time: SimInstant)
    /// An app changed state.
    mutating func lifecycle(_ transition: LifecycleTransition, at time: SimInstant)
    /// Something happened to a task before it ended.
    mutating func taskEvent(_ event: TaskEvent, at time: SimInstant)
    /// The run ended with these totals.
    mutating func runEnded(_ totals: RunTotals)
    /// Whether `taskEvent` needs a task's steps before its end (`submitted`, `started`,
    /// `transfer`, `workDoneNotCompleted`, `expiration`, `registrationFailed`). When not,
    /// the simulation does not build them: each carries a copy of the request, and a run
    /// without an event log or timeline has thousands per simulated day.
    var observesTaskSteps: Bool { get }
    /// From `time` on, a request past its earliest begin is held by `cause`: a gate's token
    /// (`wifi_only`, ...) or the policy's rule (`allowance`, ...); `nil`: no longer held (it
    /// starts, or waits for the policy's next decision). Only when `observesHolds`.
    mutating func taskHeld(_ id: TaskID, by cause: String?, at time: SimInstant)
    /// Whether `taskHeld` is wanted: a timeline of each request's waits (a forecast's week).
    var observesHolds: Bool { get }
    /// Whether `chargeObserved` must come at every change of slope of the charge curve (a
    /// sampled timeline, a drawn curve) rather than only where its extremes can be (a lowest
    /// and a last charge). When not, the simulation may close its energy books less often: off
    /// the charger a linear battery's charge only falls between events.
    var observesChargeCurve: Bool { get }
    /// At the end of the run, each radio's changes of state (idle, promoting, active, tail)
    /// with their times, from idle at the start; told only when `observesRadioStates`.
    mutating func radioStates(_ link: NetworkKind, _ states: [(at: SimInstant, activity: RadioActivity)])
    /// Whether the radios log their states for `radioStates`.
    var observesRadioStates: Bool { get }
}

extension MetricsSink {
    /// Ignores ended tasks.
    package mutating func taskEnded(_ record: TaskRecord) {}
    /// Ignores the charge level.
    package mutating func chargeObserved(_ charge: Double, at time: SimInstant) {}
    /// Ignores shutdowns.
    package mutating func phoneShutDown(at time: SimInstant) {}
    /// Ignores boots.
    package mutating func phoneBooted(at time: SimInstant, offFor: SimDuration) {}
    /// Ignores changes in the world.
    package mutating func worldEvent(_ event: WorldEvent, at time: SimInstant) {}
    /// Ignores life-cycle transitions.
    package mutating func lifecycle(_ transition: LifecycleTransition, at time: SimInstant) {}
    /// Ignores task steps.
    package mutating func taskEvent(_ event: TaskEvent, at time: SimInstant) {}
    /// Ignores the run's totals.
    package mutating func runEnded(_ totals: RunTotals) {}
    /// Ignores holds.
    package mutating func taskHeld(_ id: TaskID, by cause: String?, at time: SimInstant) {}
    /// False: holds are told only to a sink that asks.
    package var observesHolds: Bool { false }
    /// True: a sink that does not say otherwise is told every task step.
    package var observesTaskSteps: Bool { true }
    /// True: a sink that does not say otherwise sees every change of slope of the charge.
    package var observesChargeCurve: Bool { true }
    /// Ignores the radios' states.
    package mutating func radioStates(_ link: NetworkKind, _ states: [(at: SimInstant, activity: RadioActivity)]) {}
    /// False: the radios log their states only for a sink that asks.
    package var observesRadioStates: Bool { false }
}

/// A step in a task's life before its end (which `taskEnded` reports).
package enum TaskEvent: Sendable {
    /// `submit` accepted the request, replacing `replaced` if any.
    case submitted(TaskRequest, replaced: TaskID?)
    /// The task started (its handler was called, or `beginBackgroundTask` returned), with the
    /// time it has: its budget, or for finite-length work `backgroundTimeRemaining` (`nil`
    /// while the app is in the foreground).
    case started(TaskRequest, timeRemaining: SimDuration?)
    /// The task's transfer went onto the radio of `network`.
    case transfer(TaskID, app: Int, NetworkKind)
    /// Its work is done but the app did not say so: it idles until its time runs out.
    case workDoneNotCompleted(TaskID, app: Int)
    /// The system called its expiration handler.
    case expiration(TaskID, app: Int, ExpirationReason)
    /// An identifier failed to register at the app's launch (not permitted).
    case registrationFailed(app: Int, identifier: String)
    /// The app's process ended before it archived this completed task's result: the work
    /// is lost (`energyJ`, its energy when it ended, is wasted) and redone at the next launch.
    case lost(TaskID, app: Int, energyJ: Double)
    /// The task reached its final state, at once. Its energy in this record is what it used
    /// so far: its share of the radio tail after its last transfer is known when that tail
    /// ends, and `taskEnded` brings the complete record then.
    case ended(TaskRecord)
}

/// A change in the world, as a sink sees it.
package enum WorldEvent: Equatable, Sendable {
    case plugIn, unplug
    case network(NetworkState)
    /// The person opened an app (`nil`: one outside the scenario).
    case launch(app: Int?)
    case leave(app: Int?, swipedAway: Bool)
    case callStarted, callEnded
    /// Memory pressure purged a suspended app (`nil`: none was suspended).
    case purge(app: Int?)
    case lowPowerPrompt(accepted: Bool)
    case lowPowerMode(on: Bool)
}

/// Energy by where it went, in joules. The parts sum to the phone's consumption.
package struct ComponentEnergy: Equatable, Sendable {
    /// Standby baseline: everything suspended, radios idle.
    package var baselineJ = 0.0
    /// The screen while an app is in the foreground.
    package var screenJ = 0.0
    /// CPU while the person uses an app.
    package var cpuForegroundJ = 0.0
    /// CPU of background work.
    package var cpuBackgroundJ = 0.0
    /// Calls.
    package var callJ = 0.0
    /// Radio promotions and transfers.
    package var radioActiveJ = 0.0
    /// Radio tails after the last transfer.
    package var radioTailJ = 0.0
    /// The hardware of continuous background modes: audio DSP, GPS, Bluetooth.
    package var modeJ = 0.0
    /// A bench load (`PhoneSetup.load`).
    package var loadJ = 0.0
    /// No energy yet.
    package init() {}
    /// The sum of the parts: the phone's consumption.
    package var totalJ: Double { baselineJ + screenJ + cpuForegroundJ + cpuBackgroundJ + callJ + radioActiveJ + radioTailJ + modeJ + loadJ }
}

/// What a run adds up to, apart from the tasks.
package struct RunTotals: Sendable {
    /// When the run ended (the horizon, or later if tasks ran on).
    package var end: SimInstant
    /// Energy consumed, and drawn from the battery and the charger.
    package var energy: EnergyFlow
    /// Consumption by component.
    package var components: ComponentEnergy
    /// When the phone shut down, if it is off at the end.
    package var offSince: SimInstant?
    /// Time with an app in the foreground (the screen on).
    package var screenOn: SimDuration
    /// Time with Low Power Mode on.
    package var lowPower: SimDuration
    /// Time on each network kind, indexed like `NetworkKind.allCases`.
    package var onNetwork: [SimDuration]
    /// Sessions (pick-ups of the phone).
    package var sessions: Int
    /// App launches.
    package var launches: Int
    /// How predictable the person's launches of the scenario's apps were, from 0 (each app's
    /// launches spread evenly over the 24 hours) to 1 (each app's launches in one hour):
    /// `PeopleTimeline.launchPredictability`.
    package var launchPredictability = Double.nan
    /// Radio promotions from idle.
    package var promotions = 0
    /// Radio promotions a background task's transfer caused.
    package var taskPromotions = 0
    /// The part of background work's energy (CPU and radio charged to tasks) the battery
    /// supplied: in each interval, the task's share of the load times the battery's share of
    /// the supply.
    package var backgroundFromBatteryJ = 0.0
    /// The part of it spent by scheduled work (refresh and processing tasks): what a policy
    /// controls, unlike finite-length work begun when the person leaves an app.
    package var scheduledFromBatteryJ = 0.0
    /// Energy of background work (CPU and the radio charged to tasks, tails included), booked
    /// as it was spent: with the person's use and the baseline it makes up the phone's energy.
    package var backgroundJ = 0.0
    /// Energy of the person's use, booked as it was spent.
    package var foregroundJ = 0.0
}

/// The summary of one run: counts, latencies, energy, battery extremes.
public struct RunMetrics: MetricsSink, Sendable {
    /// Requests by final outcome, indexed like `TaskOutcome.allCases`.
    package private(set) var outcomeCounts = [Int](repeating: 0, count: TaskOutcome.allCases.count)
    /// Start latencies in seconds of every scheduled (refresh, processing, fetch) or
    /// finite-length task that started, in end order.
    package private(set) var latencies = QuantileSketch()
    /// Completion latencies (end - max(submitted, earliest begin)) of completed tasks.
    package private(set) var completionLatencies = QuantileSketch()
    /// Energy of background work, in joules: the sum of the tasks' energies.
    package private(set) var backgroundEnergyJ = 0.0
    /// The same, as the simulation booked it while it was spent (for reconciliation).
    package private(set) var bookedBackgroundJ = 0.0
    /// Energy of the person's use (screen, CPU, calls, the radio for what apps fetch when
    /// opened), booked as it was spent.
    package private(set) var foregroundEnergyJ = 0.0
    /// Energy of work that expired or was killed, and of completed work whose result was lost.
    package private(set) var wastedEnergyJ = 0.0
    /// `backgroundEnergyJ` by task kind, indexed like `TaskKind.allCases`: what each way of
    /// running in the background accounts for.
    package private(set) var energyByKind = [Double](repeating: 0, count: TaskKind.allCases.count)
    /// Completed results lost with their process before the app archived them.
    package private(set) var lostWork = 0
    /// The energy spent on lost results.
    package private(set) var lostWorkEnergyJ = 0.0
    /// Energy consumed, and drawn from the battery and the charger.
    package private(set) var energy = EnergyFlow()
    /// Lowest state of charge seen, 0...1.
    package private(set) var minCharge = 1.0
    /// State of charge at the end.
    package private(set) var finalCharge = 0.0
    /// Times the phone shut down for lack of energy.
    package private(set) var shutdowns = 0
    /// When the phone first shut down for lack of energy, if it did: the battery's life from
    /// the start.
    package private(set) var firstShutdown: SimInstant?
    /// Time the phone was off.
    package private(set) var timeOff = SimDuration.zero
    /// When the run ended.
    package private(set) var endTime = SimInstant.start
    /// Consumption by component.
    package private(set) var components = ComponentEnergy()
    /// Time with an app in the foreground.
    package private(set) var screenOn = SimDuration.zero
    /// Time with Low Power Mode on.
    package private(set) var lowPower = SimDuration.zero
    /// Time on each network kind, indexed like `NetworkKind.allCases`.
    package private(set) var onNetwork = [SimDuration](repeating: .zero, count: NetworkKind.allCases.count)
    /// Sessions (pick-ups of the phone).
    package private(set) var sessions = 0
    /// App launches.
    package private(set) var launches = 0
    /// How predictable the person's launches were (`RunTotals.launchPredictability`).
    package private(set) var launchPredictability = Double.nan
    /// Low Power Mode prompts shown.
    package private(set) var lowPowerPrompts = 0
    /// Memory-pressure purges of a suspended app.
    package private(set) var purges = 0
    /// Completed tasks whose app reported `success: false`.
    package private(set) var unsuccessful = 0
    /// Rejected submissions by error, indexed like `SubmitError.allCases`.
    package private(set) var rejections = [Int](repeating: 0, count: SubmitError.allCases.count)
    /// Tasks that started, by kind, indexed like `TaskKind.allCases`.
    package private(set) var startedByKind = [Int](repeating: 0, count: TaskKind.allCases.count)
    /// Times the system launched an app that was not running into the background.
    package private(set) var backgroundLaunches = 0
    /// Times the system terminated an app for breaking a rule (docs/sources.md §2-3).
    package private(set) var terminations = 0
    /// Radio promotions from idle.
    package private(set) var promotions = 0
    /// Radio promotions a background task's transfer caused.
    package private(set) var taskPromotions = 0
    /// The part of background work's energy the battery supplied (see `RunTotals`).
    package private(set) var backgroundFromBatteryJ = 0.0
    /// The part of it spent by scheduled work (refresh, processing, legacy fetch).
    package private(set) var scheduledFromBatteryJ = 0.0
    /// At each launch, while the phone is on, of an app with a refresh task: seconds since its
    /// content was last fresh, which is the end of its last successful refresh task or, for
    /// an app that fetches when opened, the end of its last foreground use (the run's start
    /// if neither has happened).
    package private(set) var staleness = QuantileSketch()
    /// Launches among those whose staleness was at most `freshWithin`.
    package private(set) var freshLaunches = 0
    /// The staleness up to which a launch counts as served fresh.
    package let freshWithin: SimDuration
    /// Per app: its launches while the phone was on.
    package private(set) var appLaunches: [Int]
    /// Per app with a refresh task: the staleness seen at its launches, summed (`stalenessS`
    /// split by app).
    package private(set) var appStalenessSumS: [Double]
    /// Per app with a refresh task: its launches served fresh.
    package private(set) var appFreshLaunches: [Int]
    /// Successful refresh tasks.
    package private(set) var refreshesSucceeded = 0
    /// Successful refreshes whose content the person saw (a launch of the app while the phone
    /// was on) before newer content replaced it (the next successful refresh, or the app
    /// fetching when opened) or the run ended.
    package private(set) var refreshesSeen = 0
    /// Per app: whether its staleness is measured, whether its foreground use refreshes it,
    /// when its content was last fresh, and whether its last refresh is still unseen.
    let staleTracked: [Bool]
    let freshOnLeave: [Bool]
    var freshAt: [SimInstant]
    var unseenRefresh: [Bool]
    var phoneOn = true

    /// `apps`: the scenario's apps, for staleness (none: no staleness is measured);
    /// `freshWithin`: the staleness up to which a launch counts as served fresh.
    package init(apps: [AppParameters] = [], freshWithin: SimDuration = .hours(1)) {
        staleTracked = apps.map { $0.tasks.contains { $0.kind == .refresh } }
        freshOnLeave = apps.map { $0.launchDownBytes > 0 }
        freshAt = Array(repeating: .start, count: apps.count)
        unseenRefresh = Array(repeating: false, count: apps.count)
        appLaunches = Array(repeating: 0, count: apps.count)
        appStalenessSumS = Array(repeating: 0, count: apps.count)
        appFreshLaunches = Array(repeating: 0, count: apps.count)
        self.freshWithin = freshWithin
    }

    /// False: only `lost` and `ended` count here, and the simulation reports those anyway.
    package var observesTaskSteps: Bool { false }
    /// False: the lowest and the last charge are all it keeps.
    package var observesChargeCurve: Bool { false }

    /// Frees the per-event samples (latencies, staleness) once the summary values are known.
    package mutating func dropSamples() {
        latencies = QuantileSketch()
        completionLatencies = QuantileSketch()
        staleness = QuantileSketch()
    }

    /// Whether every distribution's quantiles are exact (no sample outgrew its exact limit).
    package var quantilesExact: Bool { latencies.isExact && completionLatencies.isExact && staleness.isExact }

    /// Requests that ended in `outcome`.
    package func count(_ outcome: TaskOutcome) -> Int {
        outcomeCounts[outcome.index]
    }
    /// Requests in all, every outcome counted.
    package var submitted: Int { outcomeCounts.reduce(0, +) }

    /// Counts the task's outcome, latencies and energy.
    package mutating func taskEnded(_ record: TaskRecord) {
        outcomeCounts[record.outcome.index] += 1
        let kind = record.request.kind
        if kind.countsLatency {
            if let latency = record.latency { latencies.add(latency.seconds) }
            if let latency = record.completionLatency { completionLatencies.add(latency.seconds) }
        }
        backgroundEnergyJ += record.energyJ
        energyByKind[record.request.kind.index] += record.energyJ
        if record.outcome == .expired || record.outcome == .killed { wastedEnergyJ += record.energyJ }
        if record.outcome == .completed && !record.success { unsuccessful += 1 }
        if let e = record.rejection { rejections[SubmitError.allCases.firstIndex(of: e)!] += 1 }
        if record.started != nil { startedByKind[record.request.kind.index] += 1 }
    }

    /// Freshness follows the instant a refresh ends, not its record, which waits for the
    /// radio tail. Inlined into the simulation, so a finished task's record is read in place:
    /// called out of line, the pattern match copied it (344 bytes) out of the event twice.
    @inline(__always)
    package mutating func taskEvent(_ event: TaskEvent, at time: SimInstant) {
        if case .lost(_, _, let energyJ) = event {
            lostWork += 1
            lostWorkEnergyJ += energyJ
            wastedEnergyJ += energyJ
            return
        }
        guard case .ended(let r) = event, r.success, r.request.kind == .refresh, r.request.app < freshAt.count else { return }
        let app = r.request.app
        refreshesSucceeded += 1
        freshAt[app] = max(freshAt[app], r.ended)
        unseenRefresh[app] = true
    }

    /// Counts background launches and terminations.
    package mutating func lifecycle(_ t: LifecycleTransition, at time: SimInstant) {
        if t.from == .notRunning && t.to == .background { backgroundLaunches += 1 }
        if t.cause == .terminated { terminations += 1 }
    }

    /// Keeps the lowest and the last charge level.
    package mutating func chargeObserved(_ charge: Double, at time: SimInstant) {
        minCharge = min(minCharge, charge)
        finalCharge = charge
    }

    /// Counts a shutdown.
    package mutating func phoneShutDown(at time: SimInstant) {
        shutdowns += 1
        if firstShutdown == nil { firstShutdown = time }
        phoneOn = false
    }

    /// Counts the time off.
    package mutating func phoneBooted(at time: SimInstant, offFor: SimDuration) {
        timeOff += offFor
        phoneOn = true
    }

    /// Counts prompts and purges, and measures staleness at each launch of an app with a refresh task.
    package mutating func worldEvent(_ event: WorldEvent, at time: SimInstant) {
        switch event {
        case .lowPowerPrompt: lowPowerPrompts += 1
        case .purge(let app) where app != nil: purges += 1
        case .launch(let app?) where phoneOn && app < staleTracked.count:
            appLaunches[app] += 1
            guard staleTracked[app] else { break }
            let staleness = time - freshAt[app]
            self.staleness.add(staleness.seconds)
            appStalenessSumS[app] += staleness.seconds
            if staleness <= freshWithin {
                freshLaunches += 1
                appFreshLaunches[app] += 1
            }
            if unseenRefresh[app] {
                refreshesSeen += 1
                unseenRefresh[app] = false
            }
        case .leave(let app?, _) where phoneOn && app < freshOnLeave.count && freshOnLeave[app]:
            freshAt[app] = max(freshAt[app], time)
        default: break
        }
    }

    /// Takes the run's energy and time totals.
    package mutating func runEnded(_ t: RunTotals) {
        energy = t.energy
        endTime = t.end
        if let off = t.offSince { timeOff += t.end - off }
        components = t.components
        screenOn = t.screenOn
        lowPower = t.lowPower
        onNetwork = t.onNetwork
        sessions = t.sessions
        launches = t.launches
        launchPredictability = t.launchPredictability
        promotions = t.promotions
        taskPromotions = t.taskPromotions
        backgroundFromBatteryJ = t.backgroundFromBatteryJ
        scheduledFromBatteryJ = t.scheduledFromBatteryJ
        bookedBackgroundJ = t.backgroundJ
        foregroundEnergyJ = t.foregroundJ
    }
}
