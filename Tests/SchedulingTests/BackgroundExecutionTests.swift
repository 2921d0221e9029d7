import PhoneWorld
import SimEngine
import SimRandom
import Testing

@testable import Policies
@testable import Scheduling

/// A quiet phone: always on Wi-Fi, no charger unless `charging` is given, a person who does
/// only what `launches` and `calls` say, and every refresh granted the whole budget.
func quiet(
    hours: Int64 = 24, apps: [AppParameters], launches: [AppLaunch] = [], calls: [Call] = [],
    purges: [Purge] = [], charging: [ChargingSession] = []
) -> PhoneSetup {
    var s = setup(days: 1, apps: apps, nights: 0)
    s.duration = .hours(hours)
    s.network = network([(.zero, wifiState)])
    s.chargingTrace = charging
    s.system.refreshGrant = nil
    var people = PeopleTimeline()
    people.launches = launches
    people.calls = calls
    people.purges = purges
    people.sessionStarts = Array(launches.indices)
    s.peopleTrace = people
    return s
}

func at(_ h: Int64, _ m: Int64 = 0, _ sec: Int64 = 0) -> SimInstant { .after(.hours(h) + .minutes(m) + .seconds(sec)) }

/// A use of app `app` from `from` to `to`.
func use(_ app: Int?, _ from: SimInstant, _ to: SimInstant, swiped: Bool = false) -> AppLaunch {
    AppLaunch(app: app, start: from, end: to, swipedAway: swiped)
}

/// A task definition with a fixed CPU time and no transfers.
func task(
    _ id: String, _ kind: AppTask.Kind, submitOn: Set<AppTask.Trigger>, cpu: Double = 2,
    earliest: SimDuration = .minutes(15), interval: SimDuration = .hours(1)
) -> AppTask {
    var t = AppTask(identifier: id, kind: kind, submitOn: submitOn)
    t.cpu = .fixed(cpu)
    t.upBytes = .fixed(0)
    t.downBytes = .fixed(0)
    t.earliestBegin = earliest
    t.interval = interval
    return t
}

func appWith(_ name: String, _ tasks: [AppTask]) -> AppParameters {
    var a = app(name)
    a.tasks = tasks
    return a
}

@Suite("BGTaskScheduler rules, scenario by scenario (docs/sources.md §2)")
struct SchedulerRuleTests {
    @Test func aSecondRefreshSubmitReplacesTheFirst() throws {
        let a = appWith("news", [task("news.refresh", .refresh, submitOn: [.background])])
        let s = quiet(apps: [a], launches: [use(0, at(1), at(1, 1)), use(0, at(1, 5), at(1, 6))])
        let run = try simulate(s, EagerPolicy())
        #expect(run.records.count == 2)
        let first = try #require(run.record(0)), second = try #require(run.record(1))
        #expect(first.outcome == .replaced && first.ended == at(1, 6) && first.started == nil)
        #expect(second.outcome == .completed && second.success)
        #expect(second.started == at(1, 21), "earliestBeginDate 15 min after the second leave")
        #expect(second.ended == at(1, 21, 2))
    }

    @Test func theEleventhProcessingRequestIsRefused() throws {
        let tasks = (1...11).map { task("maint.\($0)", .processing, submitOn: [.start]) }
        let run = try simulate(quiet(hours: 1, apps: [appWith("maint", tasks)]), EagerPolicy())
        let rejected = run.records.filter { $0.outcome == .rejected }
        #expect(rejected.count == 1)
        #expect(rejected.first?.request.identifier == "maint.11")
        #expect(rejected.first?.rejection == .tooManyPendingTaskRequests)
        #expect(rejected.first?.ended == .start)
        #expect(run.records.filter { $0.outcome == .completed }.count == 10)
        #expect(run.summary.rejections[SubmitError.allCases.firstIndex(of: .tooManyPendingTaskRequests)!] == 1)
    }

    @Test func aSecondRefreshIdentifierIsRefusedToo() throws {
        let a = appWith("two", [task("two.a", .refresh, submitOn: [.start]), task("two.b", .refresh, submitOn: [.start])])
        let run = try simulate(quiet(hours: 2, apps: [a]), EagerPolicy())
        #expect(run.records.map(\.outcome) == [.rejected, .completed])
        #expect(run.records.first?.rejection == .tooManyPendingTaskRequests)
    }

    @Test func anUnlistedIdentifierGetsNotPermitted() throws {
        var a = appWith("x", [task("x.listed", .refresh, submitOn: [.start]), task("x.unlisted", .processing, submitOn: [.start])])
        a.permittedIdentifiers = ["x.listed"]
        let run = try simulate(quiet(hours: 2, apps: [a]), EagerPolicy())
        let unlisted = try #require(run.records.first { $0.request.identifier == "x.unlisted" })
        #expect(unlisted.outcome == .rejected && unlisted.rejection == .notPermitted && unlisted.ended == .start)
        #expect(run.records.first { $0.request.identifier == "x.listed" }?.outcome == .completed)
        // Registering it at launch fails too.
        #expect(
            run.taskEvents.contains {
                if case .registrationFailed(0, "x.unlisted") = $0.1 { true } else { false }
            })
    }

    @Test(arguments: [true, false])
    func backgroundAppRefreshOffGivesZeroRunsAndUnavailable(globally: Bool) throws {
        var a = appWith(
            "x",
            [
                task("x.r", .refresh, submitOn: [.start, .background, .handler]),
                task("x.p", .processing, submitOn: [.start]),
            ])
        var s = quiet(apps: [a], launches: [use(0, at(2), at(2, 1))])
        if globally { s.settings.backgroundAppRefresh = .off } else { a.backgroundRefresh = false; s.apps = [a] }
        let run = try simulate(s, EagerPolicy())
        #expect(run.starts.isEmpty, "nothing runs")
        #expect(run.records.count == 3, "two at the start, one on leaving")
        #expect(run.records.allSatisfy { $0.outcome == .rejected && $0.rejection == .unavailable })
        #expect(run.summary.backgroundLaunches == 0)
    }

    @Test func cancelAllOnOpenCancelsWhatIsPending() throws {
        var a = appWith("x", [task("x.r", .refresh, submitOn: [.background])])
        a.cancelOnOpen = true
        let s = quiet(hours: 2, apps: [a], launches: [use(0, at(0), at(0, 1)), use(0, at(0, 10), at(0, 11))])
        let run = try simulate(s, EagerPolicy())
        #expect(run.records.map(\.outcome) == [.cancelled, .completed])
        #expect(run.record(0)?.ended == at(0, 10))
        #expect(run.record(1)?.started == at(0, 26))
    }

    @Test func theHandlerResubmitsWithItsInterval() throws {
        let a = appWith("x", [task("x.r", .refresh, submitOn: [.background, .handler], earliest: .zero, interval: .hours(3))])
        let run = try simulate(quiet(hours: 10, apps: [a], launches: [use(0, at(0), at(0, 1))]), EagerPolicy())
        #expect(run.starts.map(\.0) == [at(0, 1), at(3, 1), at(6, 1), at(9, 1)])
        #expect(run.summary.count(.neverRun) == 1, "the last resubmission is still pending at the end")
    }
}

@Suite("BGTaskScheduler bookkeeping")
struct BGTaskSchedulerTests {
    func pending(_ id: String, _ kind: TaskKind, _ n: Int) -> BGTaskScheduler.Pending {
        .init(identifier: id, kind: kind, task: TaskID(n), earliestBegin: .start)
    }

    @Test func submitReplaceCancelAndPendingList() {
        var s = BGTaskScheduler(permitted: ["r", "p1", "p2"])
        #expect(s.submit(pending("r", .refresh, 0), available: true) == .success(nil))
        #expect(s.submit(pending("r", .refresh, 1), available: true) == .success(TaskID(0)), "same identifier replaces")
        #expect(s.submit(pending("p1", .processing, 2), available: true) == .success(nil))
        #expect(s.submit(pending("p2", .processing, 3), available: true) == .success(nil))
        #expect(s.pending.map(\.task) == [TaskID(1), TaskID(2), TaskID(3)])
        #expect(s.cancel(identifier: "p1") == TaskID(2))
        #expect(s.cancel(identifier: "p1") == nil)
        #expect(s.cancelAll() == [TaskID(1), TaskID(3)])
        #expect(s.pending.isEmpty)
        #expect(s.submit(pending("zz", .refresh, 4), available: true) == .failure(.notPermitted))
        #expect(s.submit(pending("r", .refresh, 5), available: false) == .failure(.unavailable))
    }

    @Test func limitsCountOtherIdentifiersOfTheSameKind() {
        var s = BGTaskScheduler(permitted: (0..<12).map { "p\($0)" } + ["r"])
        for i in 0..<10 { #expect(s.submit(pending("p\(i)", .processing, i), available: true) == .success(nil)) }
        #expect(s.submit(pending("p10", .processing, 10), available: true) == .failure(.tooManyPendingTaskRequests))
        #expect(s.submit(pending("p3", .processing, 11), available: true) == .success(TaskID(3)), "a replacement fits")
        #expect(s.submit(pending("r", .refresh, 12), available: true) == .success(nil), "refresh has its own limit")
        s.remove(TaskID(0))
        #expect(s.submit(pending("p10", .processing, 13), available: true) == .success(nil), "a started one frees a place")
    }

    @Test func registrationNeedsPermissionAndHappensOncePerProcess() {
        var s = BGTaskScheduler(permitted: ["a"])
        #expect(s.register("a") == .registered)
        #expect(s.register("a") == .duplicate, "iOS kills an app that registers twice")
        #expect(s.register("b") == .notPermitted)
        s.processEnded()
        #expect(s.register("a") == .registered)
    }
}

@Suite("Execution: budgets, expiration, processing rules (docs/sources.md §2)")
struct ExecutionRuleTests {
    func longRefresh(response: SimDuration, forgets: Double = 0) -> AppParameters {
        var a = appWith("x", [task("x.r", .refresh, submitOn: [.background], cpu: 40, earliest: .zero)])
        a.expirationResponse = response
        a.forgetsCompletion = forgets
        return a
    }

    @Test func aRefreshNeeding40SecondsExpiresAt30AndItsEnergyIsCounted() throws {
        let run = try simulate(quiet(hours: 1, apps: [longRefresh(response: .zero)], launches: [use(0, at(0), at(0, 1))]), EagerPolicy())
        let r = try #require(run.record(0))
        #expect(r.outcome == .expired)
        #expect(r.started == at(0, 1) && r.ended == at(0, 1, 30))
        #expect(abs(r.energyJ - 30) < 1e-9, "1 W for 30 s: \(r.energyJ)")
        #expect(abs(run.summary.wastedEnergyJ - 30) < 1e-9)
        #expect(run.taskEvents.contains { if case .expiration(TaskID(0), _, .timeUp) = $0.1 { true } else { false } })
        #expect(run.transitions(of: 0).last.map { ($0.0, $0.3) } ?? (.start, .open) == (at(0, 1, 30), .workDone), "then suspended")
    }

    @Test func aSlowExpirationHandlerStillEndsTheTaskWithinTheGrace() throws {
        let run = try simulate(
            quiet(
                hours: 1, apps: [longRefresh(response: .milliseconds(500))],
                launches: [use(0, at(0), at(0, 1))]), EagerPolicy())
        let r = try #require(run.record(0))
        #expect(r.outcome == .expired && r.ended == at(0, 1, 30) + .milliseconds(500))
        #expect(abs(r.energyJ - 30.5) < 1e-9)
    }

    @Test(arguments: [(SimDuration.seconds(3), 0.0), (.zero, 1.0)])
    func aTaskNotEndedByItsExpirationGetsTheAppKilled(response: SimDuration, forgets: Double) throws {
        let run = try simulate(
            quiet(
                hours: 1, apps: [longRefresh(response: response, forgets: forgets)],
                launches: [use(0, at(0), at(0, 1))]), EagerPolicy())
        let r = try #require(run.record(0))
        #expect(r.outcome == .killed)
        #expect(r.ended == at(0, 1, 32), "killed when the 2 s grace after the expiration handler runs out")
        let last = try #require(run.transitions(of: 0).last)
        #expect(last.0 == at(0, 1, 32) && last.2 == .notRunning && last.3 == .terminated)
        #expect(run.summary.terminations == 1)
    }

    @Test func forgettingSetTaskCompletedIdlesUntilTheBudgetThenKills() throws {
        var a = appWith("x", [task("x.r", .refresh, submitOn: [.background], cpu: 5, earliest: .zero)])
        a.forgetsCompletion = 1
        let run = try simulate(quiet(hours: 1, apps: [a], launches: [use(0, at(0), at(0, 1))]), EagerPolicy())
        let r = try #require(run.record(0))
        #expect(r.outcome == .killed && r.ended == at(0, 1, 32))
        #expect(abs(r.energyJ - 5) < 1e-9, "the CPU ran for its 5 s of work only")
        #expect(run.taskEvents.contains { $0.0 == at(0, 1, 5) && { if case .workDoneNotCompleted = $0 { true } else { false } }($0.1) })
    }

    @Test func aProcessingTaskThatRequiresPowerNeverStartsUnpluggedAndEndsAtUnplug() throws {
        var t = task("x.p", .processing, submitOn: [.start], cpu: 10 * 3600, interval: .minutes(1))
        t.requiresExternalPower = true
        // The unplug at 30 h is inside the horizon (one the horizon cuts is no unplug).
        var s = quiet(hours: 31, apps: [appWith("x", [t])], charging: [ChargingSession(start: at(23), end: at(23 + 7))])
        s.system.processingBudget = .hours(20)
        let run = try simulate(s, EagerPolicy())
        let r = try #require(run.record(0))
        #expect(r.started == at(23), "pending since the first minute, started at plug-in")
        #expect(r.outcome == .expired && r.ended == at(30))
        #expect(run.taskEvents.contains { if case .expiration(TaskID(0), _, .powerLost) = $0.1 { $0.0 == at(30) } else { false } })
    }

    @Test func aProcessingTaskEndsWhenThePersonPicksUpThePhoneButARefreshDoesNot() throws {
        let p = task("x.p", .processing, submitOn: [.background], cpu: 3600, earliest: .zero)
        let r = task("y.r", .refresh, submitOn: [.background], cpu: 20, earliest: .zero)
        var s = quiet(
            hours: 2, apps: [appWith("x", [p]), appWith("y", [r])],
            launches: [use(0, at(0), at(0, 1)), use(1, at(0, 9, 50), at(0, 10)), use(nil, at(0, 10, 5), at(0, 20))])
        s.system.processingBudget = .hours(1)
        let run = try simulate(s, EagerPolicy())
        let processing = try #require(run.records.first { $0.request.kind == .processing })
        #expect(processing.started == at(0, 1))
        #expect(processing.outcome == .expired && processing.ended == at(0, 9, 50), "ended when the phone was picked up")
        #expect(run.taskEvents.contains { if case .expiration(_, _, .deviceInUse) = $0.1 { $0.0 == at(0, 9, 50) } else { false } })
        let refresh = try #require(run.records.first { $0.request.kind == .refresh })
        #expect(
            refresh.started == at(0, 10) && refresh.outcome == .completed && refresh.ended == at(0, 10, 20),
            "a refresh runs on while the person uses another app")
    }

    @Test func processingDoesNotStartWhileThePhoneIsInUse() throws {
        let p = task("x.p", .processing, submitOn: [.background], cpu: 5, earliest: .zero)
        let s = quiet(hours: 2, apps: [appWith("x", [p])], launches: [use(0, at(0), at(0, 1)), use(nil, at(0, 1), at(0, 30))])
        let run = try simulate(s, EagerPolicy())
        #expect(run.record(0)?.started == at(0, 30))
    }

    @Test func theCPUMonitorKillsHeavyProcessingOnBatteryOnly() throws {
        var heavy = task("x.p", .processing, submitOn: [.background], cpu: 300, earliest: .zero)
        heavy.cpuShare = 0.95
        var s = quiet(hours: 1, apps: [appWith("x", [heavy])], launches: [use(0, at(0), at(0, 1))])
        let run = try simulate(s, EagerPolicy())
        #expect(run.record(0)?.outcome == .killed && run.record(0)?.ended == at(0, 2))
        s.chargingTrace = [ChargingSession(start: .start, end: at(1))]
        #expect(try simulate(s, EagerPolicy()).record(0)?.outcome == .completed, "not on the charger")
        s.chargingTrace = []
        s.system.cpuMonitor = nil
        #expect(try simulate(s, EagerPolicy()).record(0)?.outcome == .completed, "not with the monitor off")
    }
}

@Suite("Finite-length background time (docs/sources.md §3)")
struct BackgroundTimeTests {
    func uploader(cpu: Double, forgets: Double = 0) -> AppParameters {
        var a = app("up")
        a.tasks = []
        a.mechanismLists[FiniteLengthWork.name] = [finiteWork(cpu: .fixed(cpu))]
        a.forgetsEndBackground = forgets
        return a
    }

    @Test func aBeginWithoutEndIsFollowedByTerminationAfterTheGrant() throws {
        let run = try simulate(quiet(hours: 1, apps: [uploader(cpu: 5, forgets: 1)], launches: [use(0, at(0), at(0, 1))]), EagerPolicy())
        let r = try #require(run.record(0))
        #expect(r.request.kind == .finiteLength)
        #expect(r.started == at(0, 1) && r.outcome == .killed && r.ended == at(0, 1, 32), "30 s grant, then 2 s grace")
        #expect(
            run.taskEvents.contains { if case .started(_, let remaining) = $0.1 { remaining == .seconds(30) } else { false } },
            "backgroundTimeRemaining is the full grant at the start")
        #expect(run.transitions(of: 0).last?.3 == .terminated)
    }

    @Test func anEndedBackgroundTaskCompletesAndTheAppIsSuspended() throws {
        let run = try simulate(quiet(hours: 1, apps: [uploader(cpu: 5)], launches: [use(0, at(0), at(0, 1))]), EagerPolicy())
        #expect(run.record(0)?.outcome == .completed && run.record(0)?.ended == at(0, 1, 5))
        let t = run.transitions(of: 0)
        #expect(t.map(\.2) == [.inactive, .active, .inactive, .background, .suspended])
        #expect(t.last?.0 == at(0, 1, 5))
    }

    @Test(arguments: [(BackgroundTimeGrant.ios13, TaskOutcome.expired), (.ios7, .completed), (.ios6, .completed)])
    func theGrantFollowsTheIOSVersion(grant: BackgroundTimeGrant, outcome: TaskOutcome) throws {
        var a = uploader(cpu: 100)
        a.expirationResponse = .zero
        var s = quiet(hours: 1, apps: [a], launches: [use(0, at(0), at(0, 1))])
        s.system.backgroundTime = grant.duration
        let run = try simulate(s, EagerPolicy())
        #expect(run.record(0)?.outcome == outcome)
        #expect(run.taskEvents.contains { if case .started(_, let remaining) = $0.1 { remaining == grant.duration } else { false } })
    }

    @Test func severalAtOnceEachEndOnTheirOwn() throws {
        var a = uploader(cpu: 3)
        a.mechanismLists[FiniteLengthWork.name]?.append(finiteWork(cpu: .fixed(50)))
        a.expirationResponse = .zero
        let run = try simulate(quiet(hours: 1, apps: [a], launches: [use(0, at(0), at(0, 1))]), EagerPolicy())
        #expect(run.records.map(\.outcome) == [.completed, .expired])
        #expect(run.records.map(\.ended) == [at(0, 1, 3), at(0, 1, 30)])
        #expect(run.transitions(of: 0).last.map { ($0.0, $0.2) } ?? (.start, .active) == (at(0, 1, 30), .suspended))
    }

    @Test func reopeningTheAppLiftsTheDeadline() throws {
        let run = try simulate(
            quiet(
                hours: 1, apps: [uploader(cpu: 60)],
                launches: [use(0, at(0), at(0, 1)), use(0, at(0, 1, 10), at(0, 5))]), EagerPolicy())
        #expect(run.record(0)?.outcome == .completed && run.record(0)?.ended == at(0, 2), "ran on in the foreground")
    }

    @Test func anUploadInFlightWhenThePersonLeaves() throws {
        var a = uploader(cpu: 0.5)
        a.mechanismLists[FiniteLengthWork.name] = [finiteWork(cpu: .fixed(0.5), upBytes: .fixed(2_000_000))]
        let run = try simulate(quiet(hours: 1, apps: [a], launches: [use(0, at(0), at(0, 1))]), EagerPolicy())
        let r = try #require(run.record(0))
        // 16 Mbit at Wi-Fi's 20 Mbit/s up: 0.8 s, then 0.5 s of CPU.
        #expect(r.outcome == .completed && r.ended == at(0, 1) + .milliseconds(1300))
        #expect(r.radioEnergyJ > 0)
    }
}

@Suite("Gates every policy obeys (docs/sources.md §1, §4-5)")
struct GateTests {
    @Test func aSwipedAwayAppGetsNoBackgroundLaunchesUntilReopened() throws {
        let a = appWith("x", [task("x.r", .refresh, submitOn: [.background], earliest: .zero)])
        let s = quiet(hours: 5, apps: [a], launches: [use(0, at(0), at(0, 1), swiped: true), use(0, at(3), at(3, 1))])
        let run = try simulate(s, EagerPolicy())
        // Swiped away as it was left, it submitted nothing then (ended in the switcher, before
        // didEnterBackground); it runs only what it submits after the person reopens it.
        #expect(run.records.map(\.outcome) == [.completed])
        #expect(run.starts.map(\.0) == [at(3, 1)])
        #expect(run.transitions(of: 0).contains { $0.0 == at(0, 1) && $0.2 == .notRunning && $0.3 == .swipe })
    }

    @Test func lowPowerModeStopsRefresh() throws {
        let a = appWith("x", [task("x.r", .refresh, submitOn: [.start])])
        var s = quiet(hours: 3, apps: [a])
        s.settings.lowPowerMode = .on
        let run = try simulate(s, EagerPolicy())
        #expect(run.starts.isEmpty && run.records.map(\.outcome) == [.neverRun])
        s.settings.lowPowerMode = .off
        #expect(try simulate(s, EagerPolicy()).records.map(\.outcome) == [.completed])
    }

    @Test func wifiOnlyKeepsBackgroundTasksOffCellular() throws {
        var a = appWith("x", [task("x.r", .refresh, submitOn: [.start, .handler], interval: .minutes(30))])
        a.tasks[0].downBytes = .fixed(10_000)
        var s = quiet(hours: 24, apps: [a])
        s.network = network([(.zero, lteState), (.hours(12), wifiState), (.hours(18), lteState)])
        s.settings.backgroundAppRefresh = .wifi
        let run = try simulate(s, EagerPolicy())
        #expect(run.starts.first?.0 == at(12), "waited for Wi-Fi")
        #expect(run.starts.allSatisfy { $0.0 >= at(12) && $0.0 < at(18) })
        let networks = run.taskEvents.compactMap { if case .transfer(_, _, let kind) = $0.1 { kind } else { nil } }
        #expect(!networks.isEmpty && networks.allSatisfy { $0 == .wifi })
    }

    @Test func nothingRunsWhileThePhoneIsShutDown() throws {
        let a = appWith("x", [task("x.r", .refresh, submitOn: [.start, .handler], interval: .minutes(10))])
        var s = quiet(hours: 30, apps: [a], charging: [ChargingSession(start: at(5), end: at(8))])
        s.battery.initialCharge = 0
        let run = try simulate(s, EagerPolicy())
        let boot = try #require(run.boots.first)
        #expect(run.shutdowns.first == .start)
        #expect(run.starts.first?.0 == boot, "the pending request starts at the boot")
        #expect(run.starts.allSatisfy { $0.0 >= boot })
    }
}

@Suite("App life cycle (docs/sources.md §1)")
struct LifecycleTests {
    @Test func openLeaveAndTheDelegateCalls() throws {
        let run = try simulate(quiet(hours: 1, apps: [appWith("x", [])], launches: [use(0, at(0, 5), at(0, 6))]), EagerPolicy())
        let t = run.transitions.map(\.1)
        #expect(t.map(\.to) == [.inactive, .active, .inactive, .background, .suspended])
        #expect(
            t.flatMap(\.delegateEvents) == [
                .willFinishLaunching, .didFinishLaunching, .didBecomeActive,
                .willResignActive, .didEnterBackground,
            ])
    }

    @Test func aCallSendsTheAppToTheBackgroundAndBack() throws {
        let s = quiet(
            hours: 1, apps: [appWith("x", [])], launches: [use(0, at(0, 5), at(0, 20))],
            calls: [Call(start: at(0, 10), end: at(0, 12))])
        let run = try simulate(s, EagerPolicy())
        let t = run.transitions(of: 0).filter { $0.3 == .call }
        #expect(t.map(\.0) == [at(0, 10), at(0, 10), at(0, 12), at(0, 12)])
        #expect(t.map(\.2) == [.inactive, .background, .inactive, .active])
        #expect(run.transitions.map(\.1).flatMap(\.delegateEvents).filter { $0 == .willEnterForeground }.count == 1)
    }

    @Test func aPurgeTakesOnlyASuspendedAppAndTheNextRunIsAColdLaunch() throws {
        let a = appWith("x", [task("x.r", .refresh, submitOn: [.background], earliest: .hours(1))])
        let s = quiet(hours: 3, apps: [a], launches: [use(0, at(0), at(0, 1))], purges: [Purge(time: at(0, 30), app: 0)])
        let run = try simulate(s, EagerPolicy())
        #expect(run.transitions(of: 0).contains { $0.0 == at(0, 30) && $0.1 == .suspended && $0.2 == .notRunning && $0.3 == .purge })
        #expect(run.summary.backgroundLaunches == 1, "launched from not running for the refresh at 1:01")
        #expect(run.transitions.map(\.1).first { $0.cause == .backgroundWork }?.delegateEvents == [.willFinishLaunching, .didFinishLaunching])
    }

    @Test func theTransitionTableMatchesTheSources() {
        #expect(AppLifecycle.allows(.notRunning, .background), "launched into the background")
        #expect(!AppLifecycle.allows(.notRunning, .active), "through inactive")
        #expect(!AppLifecycle.allows(.suspended, .active))
        #expect(!AppLifecycle.allows(.active, .background), "through inactive")
        #expect(AppLifecycle.allows(.suspended, .notRunning))
        #expect(AppLifecycle.delegateEvents(from: .suspended, to: .notRunning, cause: .purge).isEmpty, "no willTerminate when suspended")
        #expect(AppLifecycle.delegateEvents(from: .background, to: .notRunning, cause: .swipe) == [.willTerminate])
    }
}
