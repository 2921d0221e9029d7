import Foundation
import PhoneWorld
import SimEngine
import SimRandom
import Testing

@testable import Policies
@testable import Scheduling

@Suite("Phone simulation: iOS rules and invariants")
struct PhoneSimulationTests {
    @Test func refreshWorkBeyondThirtySecondsExpiresAtTheBudget() throws {
        // Mean work 10 min: nearly every task exceeds the 30 s refresh budget (docs/sources.md §2).
        var s = setup(days: 1, apps: [app("podcasts", work: .minutes(10), power: 2)])
        s.system.refreshGrant = nil  // the whole budget, every time (grants that vary: AuditBugTests)
        let run = try simulate(s, EagerPolicy())
        let expired = run.records.filter { $0.outcome == .expired }
        #expect(expired.count >= 20)
        for r in expired {
            #expect(r.ended - r.started! == .seconds(30))
            #expect(abs(r.energyJ - 60) < 1e-9, "2 W for 30 s")
        }
        for r in run.records where r.outcome == .completed { #expect(r.request.work <= .seconds(30)) }
        #expect(run.summary.wastedEnergyJ == expired.map(\.energyJ).reduce(0, +))
    }

    @Test func anEmptyBatteryShutsThePhoneDownKillsItsWorkAndBootsOnTheCharger() throws {
        var s = setup(days: 3, apps: [app("heavy", every: .minutes(10), earliest: .zero, work: .seconds(20), power: 5)])
        s.battery.capacityWh = 0.5
        s.battery.initialCharge = 1
        s.battery.bootCharge = 0.05
        let run = try simulate(s, EagerPolicy())
        #expect(!run.shutdowns.isEmpty)
        #expect(!run.boots.isEmpty)
        // Boots happen only while charging, once the battery reached the boot level.
        let charging = try sessions(s)
        for boot in run.boots {
            #expect(charging.contains { $0.start <= boot && boot <= $0.end })
            let level = run.charges.last { $0.0 == boot }!.1
            #expect(abs(level - 0.05) < 1e-6)
        }
        // While off, nothing starts.
        for (down, up) in zip(run.shutdowns, run.boots + [.distantFuture]) {
            #expect(!run.records.contains { r in r.started.map { down <= $0 && $0 < up } ?? false })
        }
        #expect(run.summary.count(.killed) >= 1)
        #expect(run.summary.minCharge == 0)
        #expect(run.summary.timeOff > .zero)
    }

    @Test func aKiBaMPhoneShutsDownWithChargeLeftAndBootsOnTheCharger() throws {
        // 40 W of work empties the available well long before the bound well.
        var s = setup(days: 2, apps: [app("heavy", every: .minutes(5), earliest: .zero, work: .seconds(25), power: 40)])
        s.battery.model = .kibam
        s.battery.capacityWh = 1
        s.battery.initialCharge = 1
        let run = try simulate(s, EagerPolicy())
        let down = try #require(run.shutdowns.first)
        let chargeAtShutdown = run.charges.last { $0.0 == down }!.1
        #expect(chargeAtShutdown > 0.05, "shut down with \(chargeAtShutdown) of the charge stranded in the bound well")
        #expect(!run.boots.isEmpty)
        let charging = try sessions(s)
        for boot in run.boots { #expect(charging.contains { $0.start <= boot && boot <= $0.end }) }
        #expect(abs(run.energy.imbalanceJ) <= 1e-9 * run.energy.consumedJ)
    }

    /// Property: over random worlds (battery, charging, apps with refresh, processing and
    /// finite-length work, the person, the network with dead spots, settings), every task ends
    /// in exactly one final state, no task runs while one of its gates is closed (checked by
    /// replaying the run's own log, see `auditGates`), time is monotone, the charge stays in
    /// [0, 1], and the energy books balance, by flow and by component.
    @Test(arguments: 1...30)
    func invariantsHoldInRandomWorlds(seed: UInt64) throws {
        let rng = try RandomStream(seed: seed)
        let apps = (0..<Int(1 + rng.next() % 5)).map { i in
            var a = app(
                "app\(i)", every: .minutes(Int64(5 + rng.next() % 120)), earliest: .minutes(Int64(rng.next() % 60)),
                work: .seconds(Int64(1 + rng.next() % 40)), power: Double(rng.next() % 3000) / 1000,
                downKB: [0, 10, 1000, 50_000][Int(rng.next() % 4)],
                submitOn: [[.start, .handler], [.start, .background, .handler], [.background]][Int(rng.next() % 3)])
            if rng.bernoulli(0.5) {
                var p = AppTask(identifier: "app\(i).maintenance", kind: .processing)
                p.interval = .hours(Int64(1 + rng.next() % 24))
                p.cpu = .exponential(mean: Double(rng.next() % 600))
                p.upBytes = .exponential(mean: Double(rng.next() % 5_000_000))
                p.requiresExternalPower = rng.bernoulli(0.5)
                p.requiresNetworkConnectivity = rng.bernoulli(0.5)
                p.cpuShare = rng.uniform()
                a.tasks.append(p)
            }
            if rng.bernoulli(0.5) {
                let probability = rng.uniform()
                let cpu = Distribution.exponential(mean: Double(rng.next() % 60))
                a.mechanismLists[FiniteLengthWork.name] = [
                    finiteWork(probability: probability, cpu: cpu, upBytes: .exponential(mean: Double(rng.next() % 1_000_000)))
                ]
            }
            a.forgetsCompletion = [0, 0.1, 1][Int(rng.next() % 3)]
            a.forgetsEndBackground = [0, 0.1, 1][Int(rng.next() % 3)]
            a.expirationResponse = .milliseconds(Int64(rng.next() % 3000))
            a.cancelOnOpen = rng.bernoulli(0.3)
            a.backgroundRefresh = rng.bernoulli(0.9)
            if rng.bernoulli(0.1) { a.permittedIdentifiers = [] }
            return a
        }
        var s = setup(days: 4, apps: apps, nights: Double(rng.next() % 100) / 100, jitter: .hours(1))
        s.battery.capacityWh = [0.3, 2, 13][Int(rng.next() % 3)]
        s.battery.model = rng.bernoulli(0.5) ? .kibam : .linear
        s.battery.initialCharge = Double(rng.next() % 100) / 100
        s.system.processingBudget = .minutes(Int64(1 + rng.next() % 30))
        s.system.backgroundTime = BackgroundTimeGrant.allCases[Int(rng.next() % 3)].duration
        // The person, the network and the settings vary too.
        if rng.bernoulli(0.7) {
            s.people = PeopleParameters()
            s.people.sessionsPerDay = Double(rng.next() % 150)
            s.people.purgePerLaunch = 0.3
            s.people.callsPerDay = Double(rng.next() % 10)
            s.people.swipeAwayShare = rng.uniform()
            s.people.lowPowerAcceptShare = 0.5
        }
        for i in s.apps.indices { s.apps[i].launchDownBytes = Double(rng.next() % 2_000_000) }
        s.network = network([
            (.zero, wifiState), (.hours(Int64(6 + rng.next() % 4)), lteState),
            (.hours(12), .disconnected), (.hours(13), lteState), (.hours(18), wifiState),
        ])
        s.network.deadSpotsPerHour = Double(rng.next() % 5)
        s.network.jitter = .minutes(Int64(rng.next() % 30))
        s.settings.backgroundAppRefresh = Settings.BackgroundAppRefresh.allCases[Int(rng.next() % 3)]
        s.settings.lowPowerMode = rng.bernoulli(0.8) ? .auto : .off
        // Every built-in policy, from the registry: one added is put through the random worlds too.
        let policies: [any SchedulingPolicy] = PolicyRegistry.builtIn.map { $0.init() }
        #expect(policies.count >= 6)
        for policy in policies {
            let run = try simulate(s, policy, seed: seed)
            let t = run.totals!
            #expect(t.scheduledFromBatteryJ <= t.backgroundFromBatteryJ + 1e-9)
            #expect(t.backgroundFromBatteryJ <= run.summary.backgroundEnergyJ + 1e-6, "battery's part of background energy")
            #expect(t.taskPromotions <= t.promotions)
            let ids = run.records.map(\.request.id.rawValue)
            #expect(ids.sorted() == Array(0..<ids.count), "each task recorded exactly once")
            #expect(run.summary.submitted == ids.count)
            for r in run.records {
                if let started = r.started {
                    #expect(started >= r.request.earliestBegin)
                    #expect(started <= r.ended)
                    #expect([.completed, .expired, .killed].contains(r.outcome))
                } else {
                    #expect([.replaced, .cancelled, .rejected, .neverRun].contains(r.outcome))
                }
                #expect((r.outcome == .rejected) == (r.rejection != nil))
                #expect(
                    r.ended - (r.started ?? r.ended) <= max(.hours(1), s.system.processingBudget + .seconds(5))
                        || r.request.kind == .finiteLength, "no task outlives its budget and grace")
            }
            let violations = auditGates(run, s)
            #expect(violations.isEmpty, "\(violations.prefix(5))")
            #expect(zip(run.charges, run.charges.dropFirst()).allSatisfy { $0.0 <= $1.0 }, "time went backwards")
            #expect(zip(run.log, run.log.dropFirst()).allSatisfy { $0.0 <= $1.0 }, "time went backwards in the log")
            let e = run.energy
            #expect(abs(e.imbalanceJ) <= 1e-9 * max(1, e.consumedJ))
            let parts = try #require(run.totals?.components)
            // Exact but for the last microsecond before each shutdown, which the battery cuts
            // short (the empty instant is rounded up to the microsecond): at most a few µJ.
            let slack = 1e-9 * max(1, e.consumedJ) + 1e-5 * Double(run.shutdowns.count)
            #expect(abs(parts.totalJ - e.consumedJ) <= slack, "components sum to the consumption")
            #expect(run.charges.allSatisfy { (0...1).contains($0.1) }, "\(run.charges.filter { !(0...1).contains($0.1) }.prefix(3))")
            #expect(run.summary.backgroundEnergyJ <= e.consumedJ + 1e-6)
            let cpu = run.records.reduce(0.0) { $0 + $1.cpuEnergyJ }
            #expect(abs(cpu - parts.cpuBackgroundJ) <= 1e-6 * max(1, cpu), "tasks' CPU energy is the background CPU component")
            // Energy reconciles: the tasks' energies (promotion, transfer and tail shares
            // included) are the background energy booked as it was spent, and background,
            // foreground and baseline make up the phone's consumption.
            let perTask = run.records.reduce(0.0) { $0 + $1.energyJ }
            #expect(abs(perTask - t.backgroundJ) <= 1e-6 * max(1, perTask), "per-task energies sum to the background energy")
            #expect(abs(t.backgroundJ + t.foregroundJ + parts.baselineJ - e.consumedJ) <= slack, "background + foreground + baseline")
            #expect(run.records.allSatisfy { $0.radioTailEnergyJ <= $0.radioEnergyJ + 1e-12 && $0.radioEnergyJ <= $0.energyJ + 1e-12 })
            // Every moment between eligibility and start is put down to a gate or the policy,
            // to the microsecond (hold times are whole microseconds, however many decision
            // points split a hold).
            for r in run.records {
                guard let latency = r.latency else { continue }
                #expect(r.held.totalS == latency.seconds, "\(r.request.id): held \(r.held.totalS) s, latency \(latency)")
            }
            #expect(run.summary.refreshesSeen <= run.summary.refreshesSucceeded)
            #expect(run.summary.freshLaunches <= run.summary.staleness.count)
            let first = run.charges.first!.1, last = run.charges.last!.1
            let capacity = s.battery.capacityJ
            #expect(abs((last - first) * capacity - (e.intoBatteryJ - e.fromBatteryJ)) <= 1e-6 * capacity)
        }
    }

    @Test func commonRandomNumbersGiveEveryPolicyTheSameWorld() throws {
        var s = setup(days: 3, apps: [app("a"), app("b", every: .minutes(45))], nights: 0.7, jitter: .hours(1))
        s.people = PeopleParameters()
        let eager = try simulate(s, EagerPolicy(), seed: 3)
        let lazy = try simulate(s, ChargeOnlyPolicy(), seed: 3)
        // The person, the charger and the network do the same whatever the policy ...
        let exogenous = { (run: RecordingSink) in
            run.world.compactMap { e -> String? in
                switch e.1 {
                case .launch, .leave, .callStarted, .callEnded, .plugIn, .unplug, .network: "\(e.0.microseconds) \(e.1)"
                default: nil
                }
            }
        }
        #expect(!exogenous(eager).isEmpty && exogenous(eager) == exogenous(lazy))
        // ... and the requests pending at the start carry the same work.
        let initial = { (run: RecordingSink) in
            run.records.filter { $0.request.submitted == .start }.map { "\($0.request.app):\($0.request.work.microseconds)" }.sorted()
        }
        #expect(initial(eager).count == 2 && initial(eager) == initial(lazy))
    }

    @Test func aPolicyCannotStartWhatItWasNotShown() async {
        await #expect(processExitsWith: .failure) {
            struct Rogue: SchedulingPolicy {
                var name: String { "rogue" }
                func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision {
                    PolicyDecision(start: .some([TaskID(999)]))
                }
            }
            _ = try simulate(setup(days: 1, apps: [app("a")]), Rogue())
        }
    }

    @Test func aPolicyCannotAskToBeWokenNow() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            struct Insomniac: SchedulingPolicy {
                var name: String { "insomniac" }
                func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision {
                    PolicyDecision(start: .none, reconsiderAt: state.now)
                }
            }
            _ = try simulate(setup(days: 1, apps: [app("a")]), Insomniac())
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("policy insomniac asked to be woken at"))
    }

    /// A hold names its rule by its number in the policy's `holdReasons`: a number past them is
    /// the policy's error, named as such.
    @Test func aPolicyCannotHoldForAReasonItDoesNotDeclare() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            struct Unnamed: SchedulingPolicy {
                var name: String { "unnamed" }
                var holdReasons: [String] { ["only"] }
                func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision {
                    PolicyDecision(start: .none, holds: eligible.map { PolicyHold($0.id, 1) })
                }
            }
            _ = try simulate(setup(days: 1, apps: [app("a")]), Unnamed())
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("policy unnamed held a request for reason number 1; it declares 1 holdReasons"))
    }

    @Test func aPolicyTimerWakesItWithoutAnyOtherChange() throws {
        /// Starts work only at the top of an hour, asking to be woken then.
        struct OnTheHour: SchedulingPolicy {
            var name: String { "on-the-hour" }
            func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision {
                let hour = SimDuration.hours(1).microseconds
                let us = state.now.microseconds
                if us % hour == 0 { return .startAll }
                return PolicyDecision(start: .none, reconsiderAt: SimInstant(microseconds: (us / hour + 1) * hour))
            }
        }
        let run = try simulate(setup(days: 1, apps: [app("a", every: .minutes(50), earliest: .minutes(7))]), OnTheHour())
        let started = run.records.compactMap(\.started)
        #expect(started.count >= 15)
        #expect(started.allSatisfy { $0.microseconds % SimDuration.hours(1).microseconds == 0 })
    }
}
