import PhoneWorld
import SimEngine
import SimRandom
import Testing

@testable import Policies
@testable import Scheduling

@Suite("World model in the simulation: radios, network, people, settings")
struct WorldTests {
    @Test func aTaskFetchOnLTEPaysPromotionTransferAndTheWholeTailItCaused() throws {
        // One app, one fetch of 10 KB a day, nothing else using the radio.
        var s = setup(days: 1, apps: [app("a", every: .days(1), earliest: .zero, work: .seconds(1), power: 0.4, downKB: 10)])
        s.network = network([(.zero, lteState)])
        s.charging.nightlyProbability = 0
        let run = try simulate(s, EagerPolicy())
        let r = try #require(run.records.first { $0.outcome == .completed })
        let active = 0.26 * 1.21 + 0.004 * (1.2 + 0.05197 * 20), tail = 10.1 * 1.06
        #expect(abs(r.radioTailEnergyJ - tail) < 1e-9, "the tail outlasts the task and is still its own")
        #expect(abs(r.radioEnergyJ - (active + tail)) < 1e-9)
        #expect(r.ended - r.started! == .microseconds(264_000) + r.request.work, "fetch, then the CPU work")
        #expect(r.cpuTime == r.ended - r.started!, "the CPU runs while the task waits for its data, too")
        #expect(abs(r.energyJ - (active + tail + 0.4 * r.cpuTime.seconds)) < 1e-9)
        #expect(r.movedDownBytes == 10_000 && r.movedUpBytes == 0)
        let c = try #require(run.totals?.components)
        #expect(abs(c.radioTailJ - tail) < 1e-9)
        #expect(abs(c.totalJ - run.energy.consumedJ) < 1e-9 * run.energy.consumedJ)
    }

    @Test func tasksServedInOneBurstShareItsTailEqually() throws {
        // Two apps' 10 KB LTE fetches wait for the charger at 1:00 (charge-only), start
        // together and queue behind one promotion: the first pays it, each pays its own
        // transfer, and the tail after the burst is split in two.
        let a = app("a", every: .minutes(30), earliest: .zero, work: .seconds(1), power: 0.4, downKB: 10, fixed: true)
        let b = app("b", every: .minutes(30), earliest: .zero, work: .seconds(1), power: 0.4, downKB: 10, fixed: true)
        var s = quiet(hours: 2, apps: [a, b], charging: [ChargingSession(start: at(1), end: at(5))])
        s.network = network([(.zero, lteState)])
        let run = try simulate(s, ChargeOnlyPolicy())
        let first = run.records.filter { $0.started == at(1) }.sorted { $0.request.id < $1.request.id }
        try #require(first.count == 2)
        let transfer = 0.004 * (1.2 + 0.05197 * 20), tail = 10.1 * 1.06
        let promoted = first.max { $0.radioEnergyJ < $1.radioEnergyJ }!, rider = first.min { $0.radioEnergyJ < $1.radioEnergyJ }!
        #expect(abs(promoted.radioEnergyJ - (0.26 * 1.21 + transfer + tail / 2)) < 1e-9)
        #expect(abs(rider.radioEnergyJ - (transfer + tail / 2)) < 1e-9)
        #expect(first.allSatisfy { abs($0.radioTailEnergyJ - tail / 2) < 1e-9 })
        // Both waited from eligibility to 1:00 for the policy (not charging), nothing else.
        for r in first {
            // Exactly: hold times are whole microseconds, however many decisions split them.
            #expect(r.held[.policy] == r.latency!.seconds && r.latency! > .zero)
            #expect(r.policyReasons == ["not_charging"])
        }
    }

    /// App a is used 0:30-0:59 and on leaving submits a refresh with a 10 KB fetch, eligible
    /// `delay` later; app b is opened at 0:59 and fetches 10 KB (the foreground's transfer,
    /// promotion 260 ms, transfer 4 ms). Returns a's record and the foreground's radio energy.
    func foregroundAndTask(delay: SimDuration) throws -> (task: TaskRecord, foregroundRadioJ: Double) {
        var a = app(
            "a", every: .hours(24), earliest: .zero, work: .seconds(1), power: 0.4, downKB: 10, fixed: true,
            submitOn: [.background])
        a.tasks[0].earliestBegin = delay
        var b = app("b", every: .hours(24), submitOn: [])
        b.launchDownBytes = 10_000
        var s = quiet(hours: 1, apps: [a, b], launches: [use(0, at(0, 30), at(0, 59)), use(1, at(0, 59), at(0, 59, 30))])
        s.network = network([(.zero, lteState)])
        let run = try simulate(s, EagerPolicy())
        let r = try #require(run.records.first { $0.started != nil })
        #expect(r.started == at(0, 59) + delay)
        let t = try #require(run.totals)
        return (r, t.foregroundJ - t.components.screenJ - t.components.cpuForegroundJ - t.components.callJ)
    }

    @Test func aTaskQueuedBehindAForegroundFetchSplitsTheTailWithIt() throws {
        // Eligible 100 ms after the launch: it queues during the promotion, one burst.
        let (r, fg) = try foregroundAndTask(delay: .milliseconds(100))
        let transfer = 0.004 * (1.2 + 0.05197 * 20), tail = 10.1 * 1.06
        #expect(abs(r.radioEnergyJ - (transfer + tail / 2)) < 1e-9)
        #expect(abs(fg - (0.26 * 1.21 + transfer + tail / 2)) < 1e-9)
    }

    @Test func aTransferInTheTailStartsANewBurstAndTheTailSoFarStaysWithTheOld() throws {
        // Eligible 1 s after the launch: the foreground's tail has run 0.736 s; the task's
        // fetch needs no promotion and the tail after it is the task's alone.
        let (r, fg) = try foregroundAndTask(delay: .seconds(1))
        let transfer = 0.004 * (1.2 + 0.05197 * 20), tail = 10.1 * 1.06
        #expect(abs(r.radioEnergyJ - (transfer + tail)) < 1e-9)
        #expect(abs(fg - (0.26 * 1.21 + transfer + 0.736 * 1.06)) < 1e-9)
    }

    @Test func aFetchFinishingExactlyAtTheBudgetStillExpires() throws {
        // 375 MB at 100 Mbit/s on Wi-Fi (no promotion) takes exactly 30 s: the fetch and the
        // budget end at the same microsecond, and the task must end once, expired.
        var s = setup(days: 1, apps: [app("big", every: .hours(6), earliest: .zero, work: .seconds(1), downKB: 375_000)])
        s.network = network([(.zero, wifiState)])
        s.system.refreshGrant = nil  // the whole budget, every time
        let run = try simulate(s, EagerPolicy())
        let started = run.records.filter { $0.started != nil }
        #expect(started.count >= 3)
        for r in started {
            #expect(r.outcome == .expired)
            #expect(r.ended - r.started! == .seconds(30))
            #expect(abs(r.radioEnergyJ - r.radioTailEnergyJ - 30 * 0.403) < 1e-9)
            #expect(abs(r.radioTailEnergyJ - 0.25 * 0.403) < 1e-9, "Wi-Fi's 250 ms tail, after the budget ended the task")
        }
    }

    @Test func withoutAConnectionAFetchWaitsAndExpiresAtTheBudget() throws {
        // No connection from 00:00 to 12:00, then Wi-Fi: morning tasks expire, afternoon ones complete.
        var s = setup(days: 1, apps: [app("a", every: .hours(1), earliest: .zero, work: .seconds(1), downKB: 50)])
        s.network = network([(.zero, .disconnected), (.hours(12), wifiState)])
        s.system.refreshGrant = nil  // the whole budget, every time
        let run = try simulate(s, EagerPolicy())
        for r in run.records where r.started != nil {
            if r.ended < .after(.hours(12)) {
                #expect(r.outcome == .expired)
                #expect(r.ended - r.started! == .seconds(30))
                #expect(r.radioEnergyJ == 0)
            } else if r.started! >= .after(.hours(12)) {
                #expect(r.outcome == .completed)
            }
        }
        #expect(run.records.contains { $0.outcome == .expired } && run.records.contains { $0.outcome == .completed })
    }

    @Test func backgroundAppRefreshOffRunsNothingAndAnAppSwitchOffRunsNothingOfThatApp() throws {
        var s = setup(days: 2, apps: [app("a", every: .minutes(30)), app("b", every: .minutes(30))])
        s.settings.backgroundAppRefresh = .off
        #expect(try simulate(s, EagerPolicy()).records.allSatisfy { $0.started == nil })
        s.settings.backgroundAppRefresh = .wifiAndCellular
        s.apps[1].backgroundRefresh = false
        let run = try simulate(s, EagerPolicy())
        #expect(run.records.filter { $0.request.app == 1 }.allSatisfy { $0.started == nil })
        #expect(run.records.filter { $0.request.app == 0 && $0.started != nil }.count > 50)
    }

    @Test func wifiOnlyStartsWorkOnlyOnWifi() throws {
        var s = setup(days: 2, apps: [app("a", every: .minutes(20), earliest: .zero)])
        s.network = network([(.zero, lteState), (.hours(20), wifiState), (.hours(21), lteState)])
        s.settings.backgroundAppRefresh = .wifi
        let run = try simulate(s, EagerPolicy())
        let starts = run.records.compactMap(\.started)
        #expect(starts.count >= 6)
        for t in starts { #expect((t.microseconds / 3_600_000_000) % 24 == 20, "started at \(t), off Wi-Fi") }
        // The wait is put down to the Wi-Fi-only setting, to the second: the first request
        // became eligible on LTE and started when Wi-Fi came at 20:00.
        let first = try #require(run.records.filter { $0.started != nil }.min { $0.started! < $1.started! })
        #expect(first.started == .after(.hours(20)))
        #expect(first.held[.wifiOnly] == first.latency!.seconds && first.held[.wifiOnly] > 0)
        #expect(first.held.totalS == first.held[.wifiOnly])
    }

    @Test func lowPowerModeOnStopsAllRefresh() throws {
        var s = setup(days: 2, apps: [app("a", every: .minutes(30))])
        s.settings.lowPowerMode = .on
        let run = try simulate(s, EagerPolicy())
        #expect(run.records.allSatisfy { $0.started == nil })
        // Requests that waited are held by Low Power Mode and by nothing else.
        let waited = run.records.filter { $0.held.totalS > 0 }
        #expect(!waited.isEmpty)
        #expect(waited.allSatisfy { $0.held[.lowPowerMode] == $0.held.totalS })
    }

    @Test func lowPowerModeIsOfferedAtTwentyAndTenPercentAndTurnsOffAtEightyWhileCharging() throws {
        // A 1 Wh phone at 25% draining 0.5 W: 5% (0.05 Wh) takes 6 minutes.
        var s = setup(days: 1, apps: [])
        s.battery.capacityWh = 1
        s.battery.initialCharge = 0.25
        s.battery.idleDrainPerHour = 0.5
        s.charging.plugIn = .hours(2)
        s.charging.unplug = .hours(7)
        s.charger.optimized = false
        s.people.lowPowerAcceptShare = 0  // declines both prompts
        var run = try simulate(s, EagerPolicy())
        let prompts = run.world.filter { if case .lowPowerPrompt = $0.1 { true } else { false } }
        // Empty at 30 min, boots on the 02:00 charger, full by the 07:00 unplug, 20% again at 08:36.
        #expect(
            prompts.map(\.0) == [.after(.minutes(6)), .after(.minutes(18)), .after(.minutes(516)), .after(.minutes(528))],
            "at exactly 20% and 10%, and again after the next charge")
        s.people.lowPowerAcceptShare = 1
        run = try simulate(s, EagerPolicy())
        let modes = run.world.compactMap { if case .lowPowerMode(let on) = $0.1 { ($0.0, on) } else { nil } }
        #expect(modes.map(\.1) == [true, false, true], "accepted at 20%, so no prompt at 10%; off while charging")
        #expect(modes[0].0 == .after(.minutes(6)) && modes[2].0 == .after(.minutes(516)))
        let chargeAtOff = run.charges.last { $0.0 == modes[1].0 }!.1
        #expect(abs(chargeAtOff - 0.8) < 1e-6, "off at 80% while charging")
        // Low Power Mode time counts while the phone is on: until the shutdown at 30 min, from
        // the boot to 80%, and from 08:36 to the second shutdown at 09:00.
        let boot = try #require(run.boots.first)
        #expect(run.shutdowns == [.after(.minutes(30)), .after(.hours(9))])
        #expect(run.totals!.lowPower == .minutes(24) + (modes[1].0 - boot) + .minutes(24))
    }

    @Test func theScreenAndForegroundCPUCostWhatTheSessionsLast() throws {
        var s = setup(days: 3, apps: [app("a")])
        s.people = PeopleParameters()
        s.people.callsPerDay = 2
        let run = try simulate(s, EagerPolicy())
        let t = try #require(run.totals)
        #expect(t.screenOn > .hours(1))
        #expect(abs(t.components.screenJ - 0.58 * t.screenOn.seconds) < 1e-6 * t.components.screenJ)
        #expect(abs(t.components.cpuForegroundJ - 0.6 * t.screenOn.seconds) < 1e-6 * t.components.cpuForegroundJ)
        #expect(t.components.callJ > 0)
        #expect(t.sessions > 100 && t.launches >= t.sessions)
    }

    @Test func commonRandomNumbersGiveEveryPolicyTheSameWorld() throws {
        var s = setup(days: 3, apps: [app("a"), app("b", every: .minutes(45), downKB: 100)], nights: 0.7, jitter: .hours(1))
        s.people = PeopleParameters()
        s.network = network([(.zero, wifiState), (.hours(8), lteState), (.hours(18), wifiState)])
        s.network.deadSpotsPerHour = 2
        s.network.jitter = .minutes(20)
        let eager = try simulate(s, EagerPolicy(), seed: 5)
        let lazy = try simulate(s, ChargeOnlyPolicy(), seed: 5)
        let exogenous = { (run: RecordingSink) in
            run.world.filter {
                switch $0.1 {
                case .network, .launch, .leave, .callStarted, .callEnded, .plugIn, .unplug: true
                default: false
                }
            }.map { "\($0.0.microseconds) \($0.1)" }
        }
        #expect(exogenous(eager) == exogenous(lazy))
        #expect(exogenous(eager).count > 300)
    }

    /// A run draws the network a day at a time and forgets what is past: it sees the changes
    /// the whole horizon drawn at once has (thousands, so the window slides).
    @Test func theNetworkDrawnAsTheRunGoesIsTheWholeOne() throws {
        var s = setup(days: 120, apps: [app("a", every: .hours(6))])
        s.network = network([(.zero, wifiState), (.hours(8), lteState), (.hours(18), wifiState)])
        s.network.deadSpotsPerHour = 2
        s.network.jitter = .minutes(20)
        let whole = WorldTimeline(setup: s, streams: try WorldStreams(setup: s, masterSeed: 5, replication: 0)).network
        let run = try simulate(s, EagerPolicy(), seed: 5)
        let seen = run.world.compactMap { if case .network(let n) = $0.1 { NetworkChange(time: $0.0, state: n) } else { nil } }
        #expect(whole.count > 2_500)
        #expect(seen == whole.map { NetworkChange(time: $0.time, state: $0.state) })
    }

    @Test func aNetworkTraceIsReplayedExactly() throws {
        var s = setup(days: 1, apps: [app("a", downKB: 10)])
        s.network = network([(.zero, wifiState)])
        let trace = [
            NetworkChange(time: .start, state: wifiState),
            NetworkChange(time: .after(.microseconds(3_600_000_001)), state: lteState),
            NetworkChange(time: .after(.hours(2)), state: .disconnected),
            NetworkChange(time: .after(.hours(2) + .seconds(1)), state: wifiState),
        ]
        s.networkTrace = trace
        let run = try simulate(s, EagerPolicy())
        let seen = run.world.compactMap { if case .network(let n) = $0.1 { NetworkChange(time: $0.0, state: n) } else { nil } }
        #expect(seen == trace)
    }

    @Test func holdTimesAddUpExactlyHoweverManyPiecesTheyComeIn() {
        // In seconds as doubles, 0.1 + 0.2 is 0.30000000000000004: a hold split at every
        // decision point would drift from its length.
        var h = HoldTimes()
        h.add(.milliseconds(100), to: .policy)
        h.add(.milliseconds(200), to: .policy)
        h.add(.microseconds(1), to: .wifiOnly)
        #expect(h[.policy] == 0.3)
        #expect(h[.wifiOnly] == 1e-6)
        #expect(h.totalS == 0.300001)
        #expect(h[.phoneOff] == 0)
    }
}

@Suite("The person's history before the run")
struct HistoryTests {
    func twoApps(history: SimDuration, newInstall: Bool = false) -> PhoneSetup {
        var s = setup(days: 1, apps: [app("a", downKB: 0), app("b", downKB: 0)])
        s.people = PeopleParameters()
        s.people.history = history
        s.apps[1].newInstall = newInstall
        return s
    }

    /// The system's record begins two weeks before the run, with the median person's use of
    /// both apps drawn from their own stream: the run's world is what it was without it.
    @Test func theRecordBeginsBeforeTheRunAndLeavesTheWorldAlone() throws {
        let s = twoApps(history: .days(14))
        let streams = try WorldStreams(setup: s, masterSeed: 3, replication: 0)
        let world = WorldTimeline(setup: s, streams: streams)
        #expect(world.historySince == .start - .days(14))
        #expect(world.history.count > 50, "\(world.history.count) launches of two apps in two weeks")
        #expect(world.history.allSatisfy { $0.start >= world.historySince && $0.end <= .start && $0.start <= $0.end })
        #expect(zip(world.history, world.history.dropFirst()).allSatisfy { $0.start <= $1.start })
        #expect(Set(world.history.compactMap(\.app)) == [0, 1])
        let none = twoApps(history: .zero)
        let without = WorldTimeline(setup: none, streams: try WorldStreams(setup: none, masterSeed: 3, replication: 0))
        #expect(without.history.isEmpty && without.historySince == .start)
        #expect(without.people.launches == world.people.launches && without.charging == world.charging)
        // The policy sees the record: launches before the run, and screen time since each use.
        let usage = UsageHistory(apps: 2, since: world.historySince, launches: world.history)
        #expect(usage.launchCount == world.history.count)
        #expect(usage.sinceLastUse(0, now: .start)! > .zero)
        let screen = try #require(usage.screenTimeSinceUse(0, now: .start))
        #expect(screen >= .zero && screen <= usage.screenOnTime(at: .start))
    }

    /// An app installed as the run starts has no use before it.
    @Test func aNewInstallHasNoHistory() throws {
        let s = twoApps(history: .days(14), newInstall: true)
        let world = WorldTimeline(setup: s, streams: try WorldStreams(setup: s, masterSeed: 3, replication: 0))
        #expect(!world.history.isEmpty && world.history.allSatisfy { $0.app == 0 })
    }
}
