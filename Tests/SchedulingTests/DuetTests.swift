import Foundation
import PhoneWorld
import SimEngine
import Testing

@testable import Policies
@testable import Scheduling

/// A person who opened app 0 at the given instants (for a minute each); the record begins
/// `since`.
func usage(opened times: [SimInstant], apps: Int = 1, since: SimInstant = .start) -> UsageHistory {
    var u = UsageHistory(apps: apps, since: since)
    for t in times {
        u.screen(true, at: t)
        u.opened(0, at: t)
        u.left(0, at: t + .minutes(1))
        u.screen(false, at: t + .minutes(1))
    }
    return u
}

/// Each request a decision holds, as its number and its rule's token.
func named(_ d: PolicyDecision) -> [String] { d.holds.map { "\($0.id.rawValue) \(DuetPolicy.holdReasons[$0.reason])" } }

/// An app whose one refresh task computes for exactly a second and asks again every 15 minutes.
func quarterHourly(_ name: String) -> AppParameters {
    app(name, every: .minutes(15), work: .seconds(1), fixed: true, submitOn: [.start, .handler])
}

@Suite("ios: the Duet Activity Scheduler model (docs/sources.md §4)")
struct DuetTests {
    func refresh(app: Int = 0, id: Int = 0) -> EligibleTask {
        EligibleTask(id: TaskID(id), app: app, kind: .refresh, submitted: .start, earliestBegin: .start)
    }
    func processing(eligible: SimInstant = .start) -> EligibleTask {
        EligibleTask(id: TaskID(1), app: 0, kind: .processing, submitted: eligible, earliestBegin: eligible)
    }
    /// At 3:01 on day 3, the app used daily at 9:00 for a week before the run.
    func state(_ level: Double, plugged: Bool = false, at time: SimInstant = at(3, 1)) -> DeviceState {
        var s = DeviceState(now: time, charge: level / 100, isCharging: plugged)
        s.networkQuality = 80
        s.usage = usage(opened: (-7..<3).map { at(24 * Int64($0) + 9) }, since: .start - .days(7))
        return s
    }
    func verdict(_ p: DuetPolicy, _ task: EligibleTask, _ s: DeviceState, _ rule: DuetPolicy.Rule, level: Double? = nil) -> DuetPolicy.Verdict? {
        p.verdicts(task, s, level: level ?? 100 * s.charge).first { $0.rule == rule }?.verdict
    }

    /// A kept hold is worked out again when time alone renames its rule: an app whose last
    /// task overran is held by `allowance` within the normal spacing of its last refresh, and
    /// by `misbehaviour` in the stretch beyond it, though nothing the rules read changed.
    @Test func aKeptHoldIsRenamedWhenTheNormalSpacingEnds() {
        var p = DuetPolicy()
        let last = at(72, 30)
        func holds(at time: SimInstant) -> [String] {
            var s = DeviceState(now: time, charge: 0.8, isCharging: false)
            s.networkQuality = 80
            s.usage = usage(opened: (-7..<3).map { at(24 * Int64($0) + 9) }, since: .start - .days(7))
            return named(p.decide(s, eligible: [refresh()]))
        }
        _ = holds(at: last)
        p.launches[0] = DuetPolicy.Launches(last: last, recentRefreshes: [last], overran: true, version: p.launches[0].version + 1)
        // Opened once a day: 2 refreshes a day, spaced by half a day over 2 (6 h), stretched
        // threefold (18 h). Both instants are before 9:00, in prediction bins without launches,
        // so the application score and the allowance are the same at both.
        #expect(holds(at: last + .hours(5)) == ["0 allowance"])
        #expect(holds(at: last + .hours(7)) == ["0 misbehaviour"])
        // Two refreshes within the day spend the allowance; once the older leaves the day (4 h
        // after the later one) they spend only the threefold window's.
        p.launches[0] = DuetPolicy.Launches(
            last: last, recentRefreshes: [last - .hours(20), last], overran: true, version: p.launches[0].version + 1)
        #expect(holds(at: last + .hours(1)) == ["0 allowance"])
        #expect(holds(at: last + .hours(5)) == ["0 misbehaviour"])
    }

    /// An outcome says what it read of the application score and of the phone, so that a new
    /// prediction bin, or a new network quality, leaves the outcomes that did not read it: of
    /// the score, nothing when the allowance is spent, its side of the burst score when only
    /// the spacing holds, and its value when the application rule is reached with nothing held
    /// before it; of the phone, only whether the battery refuses when a rule of the app's own
    /// holds it or a rule refuses it outright.
    @Test func anOutcomeSaysWhatItRead() {
        let rules = DuetPolicy().rules
        let s = state(80, at: at(30))
        let use = DuetPolicy.AppUse(perDay: 2, neverUsed: false)
        func decide(_ refreshes: [SimInstant], score: Double) -> DuetPolicy.Outcome {
            rules.decide(
                refresh(), s, level: 80, appScore: score, use: use,
                launches: DuetPolicy.Launches(last: refreshes.last, recentRefreshes: refreshes))
        }
        let spent = decide([at(20), at(29)], score: 0.1)
        #expect(spent.rule == .allowance && !spent.readsScore && !spent.readsBurst)
        let spaced = decide([at(29)], score: 0.1)
        #expect(spaced.rule == .allowance && !spaced.readsScore && spaced.readsBurst)
        let burst = decide([at(29)], score: 0.6)
        #expect(burst.start && burst.readsScore && burst.readsBurst, "a likely launch lets the burst through the spacing")
        let unheld = decide([], score: 0.1)
        #expect(unheld.rule == .predictedUse && unheld.readsScore && !unheld.readsBurst)
        #expect(!spent.readsPhone && !spaced.readsPhone && burst.readsPhone && unheld.readsPhone)
        var offline = s
        offline.network = .none
        let noNetwork = rules.decide(refresh(), offline, level: 80, appScore: 0.9, use: use, launches: DuetPolicy.Launches())
        #expect(noNetwork.rule == .network && noNetwork.readsPhone)
        let low = rules.decide(refresh(), state(5, at: at(30)), level: 5, appScore: 0.9, use: use, launches: DuetPolicy.Launches())
        #expect(low.rule == .lowBattery && !low.readsPhone)
    }

    /// Legacy background fetch is decided as a refresh is, by the application rule and the
    /// app's allowance: a fetch nothing predicts waits, named by the rule that held it.
    @Test func legacyFetchIsDecidedAsARefreshIs() {
        let p = DuetPolicy()
        let fetch = EligibleTask(id: TaskID(2), app: 0, kind: MechanismRegistry.kind(LegacyFetch.self), submitted: .start, earliestBegin: .start)
        let s = state(80)
        #expect(p.verdicts(fetch, s, level: 80) == p.verdicts(refresh(), s, level: 80))
        #expect(verdict(p, fetch, s, .predictedUse) == .score((1 - 0.9975 * 0.9975).squareRoot(), weight: 50))
        var q = p
        let d = q.decide(s, eligible: [fetch])
        #expect(d.start == .none, "no use of the app predicted at 3:00: the fetch waits")
        #expect(named(d) == ["2 predicted_use"])
    }

    /// A rule's number, written out in a switch, is its place among the rules that hold (the
    /// policy's `holdReasons`), and the rules that start have none; the rules of the app's own
    /// are the five that read nothing of the phone.
    @Test func aRulesNumberIsItsPlaceAmongTheHoldingRules() {
        for rule in DuetPolicy.Rule.allCases {
            #expect(rule.number == (DuetPolicy.Rule.holding.firstIndex(of: rule) ?? -1), "\(rule)")
            if rule.number >= 0 { #expect(DuetPolicy.holdReasons[rule.number] == rule.rawValue) }
        }
        #expect(DuetPolicy.Rule.allCases.filter(\.isTheApps) == [.appUnused, .newApp, .allowance, .misbehaviour, .rateLimit])
    }

    /// Verdicts rank as dasd's numbers: absolutely must not over must over must not over the
    /// weighted mean; a score of zero is a must not.
    @Test func verdictsRankAsDasdsNumbers() {
        let scores: [DuetPolicy.Verdict] = [.score(1, weight: 1), .score(0.5, weight: 8.4), .score(0.1, weight: 50)]
        // Mean of 1 (weight 1), 0.5 (weight 8.4) and 0.1 (weight 50): 10.2 / 59.4 = 0.1717.
        #expect(DuetPolicy.combine(scores, threshold: 0.17))
        #expect(!DuetPolicy.combine(scores, threshold: 0.18))
        #expect(DuetPolicy.combine(scores + [.must], threshold: 0.9), "must overrides the threshold")
        #expect(DuetPolicy.combine(scores + [.mustNot, .must], threshold: 0.9), "must outranks must not")
        #expect(!DuetPolicy.combine(scores + [.must, .absolutelyMustNot], threshold: 0), "absolutely must not outranks must")
        #expect(!DuetPolicy.combine(scores + [.mustNot], threshold: 0))
        #expect(!DuetPolicy.combine([.score(0, weight: 1)], threshold: 0), "a zero score is a must not")
    }

    /// A processing request eligible for a day must proceed if its app was used in the past
    /// week, so that it runs within two days (BGProcessingTaskRequest: "within the next two
    /// days as long as the user has used your app within the past week"); not otherwise, and
    /// never on battery.
    @Test func processingIsDueAfterADayIfTheAppWasUsedThatWeek() {
        let p = DuetPolicy()
        var s = state(80, plugged: true, at: at(25))
        s.usage = UsageHistory(apps: 1)
        #expect(verdict(p, processing(), s, .processingDue) == nil, "never used: not due")
        s.usage = usage(opened: [at(10)])
        #expect(verdict(p, processing(), s, .processingDue) == .must)
        s.now = at(23)
        #expect(verdict(p, processing(), s, .processingDue) == nil, "not yet a day")
        s.now = at(25)
        s.isCharging = false
        #expect(verdict(p, processing(), s, .notCharging) == .absolutelyMustNot, "unplugged: absolutely must not")
        s.now = at(10 + 7 * 24 + 1)
        s.isCharging = true
        #expect(verdict(p, processing(), s, .processingDue) == nil, "last used over a week ago")
    }

    @Test func batteryScoreFollowsTheFormulaWithThePluggedInBonus() {
        let p = DuetPolicy()
        // Refresh is utility work: B = 10, k = 0.4; ((55 - 10) / 90)^0.4 = 0.5^0.4.
        func score(_ v: DuetPolicy.Verdict?) -> Double? { if case .score(let s, weight: 1) = v { s } else { nil } }
        #expect(abs(score(verdict(p, refresh(), state(55), .battery))! - pow(0.5, 0.4)) < 1e-12)
        #expect(abs(score(verdict(p, refresh(), state(55, plugged: true), .battery))! - pow(0.5, 0.4) * 1.2) < 1e-12)
        // Processing is maintenance work: B = 20, k = 0.5; ((60 - 20) / 80)^0.5.
        #expect(abs(score(verdict(p, processing(), state(60, plugged: true), .battery))! - 0.5.squareRoot() * 1.2) < 1e-12)
    }

    /// On battery at or below 20% (WWDC20 10063's critically low battery) no discretionary
    /// work runs; plugged in, the classes' own floors apply (9% for refresh, 19% for
    /// processing); processing unplugged never runs on iPhone.
    @Test func lowBatteryStopsWork() {
        let p = DuetPolicy()
        #expect(verdict(p, refresh(), state(20), .lowBattery) == .absolutelyMustNot, "20% on battery")
        #expect(verdict(p, refresh(), state(21), .battery) != nil, "21% on battery: scored")
        #expect(verdict(p, refresh(), state(15, plugged: true), .battery) != nil, "plugged in, above the utility floor")
        #expect(verdict(p, refresh(), state(9, plugged: true), .lowBattery) == .absolutelyMustNot)
        #expect(verdict(p, processing(), state(19, plugged: true), .lowBattery) == .absolutelyMustNot)
        #expect(verdict(p, processing(), state(80), .notCharging) == .absolutelyMustNot, "processing while unplugged (iPhone)")
    }

    @Test func useStopsProcessing() {
        let p = DuetPolicy()
        var busy = state(80, plugged: true)
        busy.inUse = true
        #expect(verdict(p, processing(), busy, .deviceInUse) == .absolutelyMustNot)
        #expect(verdict(p, refresh(), busy, .deviceInUse) == .canProceed)
        // Processing waits until the phone has been unused for 5 minutes.
        var locked = state(80, plugged: true, at: at(3, 4))
        locked.lastInUse = at(3)
        #expect(verdict(p, processing(), locked, .deviceInUse) == .absolutelyMustNot)
        locked.now = at(3, 5)
        #expect(verdict(p, processing(), locked, .deviceInUse) == .canProceed)
    }

    @Test func applicationScoreComesFromTheLaunchPredictor() {
        var p = DuetPolicy()
        var s = state(80, at: at(3, 1))
        s.usage = usage(opened: [at(-20)], since: .start - .days(1))
        // Nothing learned at 3:00 on day 0: the default probability, weighing as one day
        // against the day of record since day -1, in each of the two bins the next 7.5 min
        // overlap.
        p.predictor.learn(s.usage)
        let prior = 0.0025 / 2
        #expect(verdict(p, refresh(), s, .predictedUse) == .score((1 - (1 - prior) * (1 - prior)).squareRoot(), weight: 50))
        // Opened at 3:05 on days 0 to 2: on day 3 the 3:00 bin has p = (3 + 0.0025) / (4 + 1)
        // (four days of record since day -1), above 0.25, so it counts as 1.
        s.usage = usage(opened: [at(-20)] + (0..<3).map { at(24 * Int64($0) + 3, 5) }, since: .start - .days(1))
        s.now = at(72 + 3, 1)
        p.predictor.learn(s.usage)
        #expect(p.predictor.probability(app: 0, binStart: at(75)) == 3.0025 / 5)
        #expect(verdict(p, refresh(), s, .predictedUse) == .score(1, weight: 50))
        #expect(verdict(p, processing(), s, .predictedUse) == nil, "the application rule is for refresh only")
    }

    /// Network quality lowers the score gradually: an ordinary 5 Mbit/s Wi-Fi (quality 38.8)
    /// is scored, not refused; only a connection below quality 10 (about 0.6 Mbit/s) or none
    /// holds work outright.
    @Test func networkQualityLowersTheScoreGradually() {
        let p = DuetPolicy()
        var s = state(100)
        s.networkQuality = NetworkState(kind: .wifi, downMbps: 5, upMbps: 1).quality
        #expect(abs(s.networkQuality - 38.8) < 0.1)
        #expect(verdict(p, refresh(), s, .network) == .score(s.networkQuality / 100, weight: 8.4))
        s.networkQuality = 9
        #expect(verdict(p, refresh(), s, .network) == .mustNot, "below the minimum quality")
        s.network = .none
        s.networkQuality = 0
        #expect(verdict(p, refresh(), s, .network) == .mustNot)
    }

    /// What an app's use earns (docs/sources.md §4): two refreshes a day per launch a day
    /// over the last week, between one and eight; nothing for an app never opened or not
    /// opened for two days, nor in the day after its first use.
    @Test func anAppsAllowanceFollowsItsUse() {
        let p = DuetPolicy.Parameters()
        func perDay(_ times: [SimInstant], at now: SimInstant, since: SimInstant = .start - .days(14)) -> DuetPolicy.AppUse {
            DuetPolicy.allowance(usage(opened: times, since: since), app: 0, now: now, p)
        }
        #expect(perDay([], at: at(100)).neverUsed)
        let daily = perDay((-7..<7).map { at(24 * Int64($0) + 9) }, at: at(24 * 7 + 8))
        #expect(daily.perDay == 2, "seven launches in the week: one a day, two refreshes")
        let weekly = perDay([at(-200), at(9)], at: at(30))
        #expect(weekly.perDay == 1, "one launch in the week, the floor: one a day")
        let young = perDay([at(-30), at(9)], at: at(18))
        #expect(abs(young.perDay - 2 * 2 / 2) < 1e-9, "two launches in the two days since its first use")
        #expect(perDay([at(9)], at: at(9 + 48, 2)).perDay == 0, "not opened for two days: paused")
        let heavy = perDay((0..<70).map { at(0) + .minutes(144 * Int64($0)) }, at: at(24 * 7))
        #expect(heavy.perDay == 8, "ten a day earn twenty, capped at eight")
        let new = perDay([at(5)], at: at(20), since: .start)
        #expect(new.perDay == 0 && new.learningUntil == at(29), "a new app waits a day after its first use")
    }

    /// An app never opened is never refreshed; one opened daily is refreshed about twice a day
    /// (its allowance, spaced 12 hours), wherever the phone is: the idle window on the charger
    /// chooses when, not whether. Its held refreshes name the rule.
    @Test func refreshFollowsUseOnTheChargerToo() throws {
        let news = quarterHourly("news"), never = quarterHourly("never")
        let launches = (0..<4).map { d in use(0, at(24 * Int64(d) + 9), at(24 * Int64(d) + 9, 2)) }
        let charging = (0..<4).map { d in ChargingSession(start: at(24 * Int64(d) + 22), end: at(24 * Int64(d) + 31)) }
        let s = world(hours: 96, apps: [news, never], launches: launches, network: [(.zero, wifiState)], charging: charging)
        let run = try simulate(s, DuetPolicy())
        let byApp = Dictionary(grouping: run.starts.map { ($0.1.app, $0.0) }, by: \.0).mapValues { $0.map(\.1) }
        #expect(byApp[1] == nil, "never opened, never refreshed: \(byApp[1] ?? [])")
        let news0 = byApp[0] ?? []
        // Opened first at 9:00 on day 0: none until the learning period ends, day 1 at 9:00.
        #expect(news0.allSatisfy { $0 >= at(33) }, "\(news0)")
        #expect(news0.count >= 3 && news0.count <= 6, "about two a day from day 1: \(news0)")
        // Spaced by the allowance: a day over what the app earns (at most three a day here,
        // with two launches in its first day and a half).
        for (a, b) in zip(news0, news0.dropFirst()) { #expect(b - a >= .hours(8), "\(a) \(b)") }
        let never0 = run.records.filter { $0.request.app == 1 }
        #expect(never0.allSatisfy { $0.policyReasons == ["app_unused"] || $0.policyReasons.isEmpty })
        #expect(never0.contains { $0.policyReasons == ["app_unused"] })
    }

    /// The person opens news at 8:00 every day. Its learning period ends at 8:00 on day 1, and
    /// the refresh runs as the person leaves at 8:02 (that bin predicts a launch); from day 2
    /// at 7:52:30, the first bin boundary from which the next 7.5 minutes cover a predicted
    /// launch, and at no other time of day.
    @Test func refreshesClusterJustBeforePredictedLaunches() throws {
        let news = app("news", every: .hours(1), work: .seconds(1), fixed: true, submitOn: [.start, .handler])
        let launches = (0..<5).map { d in use(0, at(24 * Int64(d) + 8), at(24 * Int64(d) + 8, 2)) }
        let charging = (0..<5).map { d in ChargingSession(start: at(24 * Int64(d) + 23), end: at(24 * Int64(d) + 23, 30)) }
        let s = world(hours: 120, apps: [news], launches: launches, network: [(.zero, wifiState)], charging: charging)
        // The predictor alone: the idle window on the charger (its own test) is off.
        var predictorOnly = DuetPolicy.Parameters()
        predictorOnly.idleWindowAfter = nil
        let run = try simulate(s, DuetPolicy(predictorOnly))
        #expect(starts(run) == [at(24 + 8, 2), at(48 + 7, 52, 30), at(72 + 7, 52, 30), at(96 + 7, 52, 30)])
        // The refresh computes for 1 s, so each launch sees content 449 s old.
        #expect(run.summary.staleness.exactValues?.suffix(3) == [449, 449, 449])
        // Eager runs it every hour, for the same freshness at those launches: with a daily
        // habit the predictor pays off.
        let eager = try simulate(s, EagerPolicy())
        #expect(eager.starts.count > 100)
        #expect(run.summary.backgroundEnergyJ < eager.summary.backgroundEnergyJ / 10)
    }

    /// The allowance is a budget spent in bursts when use is likely (docs/sources.md §4: an
    /// iOS 26 app's refreshes 21 minutes apart): with the person opening news at 8:00 and
    /// 8:20 daily, the refreshes before those launches come sooner than the allowance's
    /// spacing; with `burstScore` off every gap keeps that spacing (three hours at four a day).
    @Test func refreshesComeInBurstsWhenUseIsLikely() throws {
        let news = quarterHourly("news")
        let launches = (0..<5).flatMap { d in
            [use(0, at(24 * Int64(d) + 8), at(24 * Int64(d) + 8, 2)), use(0, at(24 * Int64(d) + 8, 20), at(24 * Int64(d) + 8, 22))]
        }
        let s = world(hours: 120, apps: [news], launches: launches, network: [(.zero, wifiState)])
        var p = DuetPolicy.Parameters()
        p.idleWindowAfter = nil
        let burst = starts(try simulate(s, DuetPolicy(p)))
        let gaps = zip(burst, burst.dropFirst()).map { $1 - $0 }
        #expect(gaps.contains { $0 < .hours(1) }, "\(burst)")
        #expect(gaps.allSatisfy { $0 >= p.minLaunchSpacing }, "the rate limit still holds: \(burst)")
        p.burstScore = nil
        let spaced = starts(try simulate(s, DuetPolicy(p)))
        #expect(zip(spaced, spaced.dropFirst()).allSatisfy { $1 - $0 >= .hours(3) }, "\(spaced)")
    }

    /// An allowance under one a day is one refresh every 1 / allowance days, not none: with
    /// half a refresh a day earned, refreshes come two days apart (found by varying
    /// `min_refreshes_per_day` over its plausible range: below 1 a rarely used app got none).
    @Test func anAllowanceUnderOneADayRefreshesEveryFewDays() throws {
        let app = quarterHourly("rare")
        let s = world(hours: 24 * 8, apps: [app], launches: [use(0, at(9), at(9, 2))], network: [(.zero, wifiState)])
        var p = DuetPolicy.Parameters()
        p.minRefreshesPerDay = 0.5
        p.refreshesPerLaunch = 0.1
        p.learningPeriod = .zero
        p.pauseAfter = .days(30)
        p.idleWindowAfter = nil
        p.threshold = 0
        let runs = starts(try simulate(s, DuetPolicy(p)))
        #expect(runs.count >= 3 && runs.count <= 4, "\(runs)")
        #expect(zip(runs, runs.dropFirst()).allSatisfy { $1 - $0 >= .days(2) }, "\(runs)")
        #expect(DuetPolicy.Rules.allowanceSpan(0.5) == 2 && DuetPolicy.Rules.allowanceSpan(3) == 1 && DuetPolicy.Rules.allowanceSpan(0.01) == 7)
    }

    /// On a charger and Wi-Fi with the phone idle for half an hour, the application rule gives
    /// way for each app's first refresh: an app opened in the evening, which nothing predicts
    /// at night, is refreshed at night within its allowance; without the window it waits for a
    /// predicted launch.
    @Test func theIdleWindowOnPowerAndWiFiChoosesWhen() throws {
        let news = app("news", every: .hours(1), work: .seconds(1), fixed: true, submitOn: [.start, .handler])
        let launches = (0..<3).map { d in use(0, at(24 * Int64(d) + 21), at(24 * Int64(d) + 21, 2)) }
        let charging = (0..<3).map { d in ChargingSession(start: at(24 * Int64(d) + 23), end: at(24 * Int64(d) + 31)) }
        let s = world(hours: 72, apps: [news], launches: launches, network: [(.zero, wifiState)], charging: charging)
        var p = DuetPolicy.Parameters()
        p.learningPeriod = .zero
        let run = try simulate(s, DuetPolicy(p))
        // Idle since 21:02 and plugged in at 23:00: in the window from 23:00.
        #expect(starts(run).first == at(23), "\(starts(run)) \(run.records.map { ($0.started, $0.policyHolds) })")
        // Each night's first refresh on the charger, the allowance's spacing after the evening's
        // predicted one permitting; by day only the refresh just before 21:00's launch.
        let night = starts(run).filter { $0.timeOfDay >= .hours(23) || $0.timeOfDay < .hours(7) }
        #expect(night.count >= 2, "\(starts(run))")
        #expect(starts(run).allSatisfy { night.contains($0) || $0.timeOfDay == .hours(20) + .minutes(52) + .seconds(30) })
        p.idleWindowAfter = nil
        #expect(starts(try simulate(s, DuetPolicy(p))).allSatisfy { $0.timeOfDay >= .hours(20) && $0.timeOfDay < .hours(21) })
    }

    /// An app whose refresh handler never calls setTaskCompleted is terminated at every grant
    /// and launched less (Apple: not completing may get the app killed, and launched less): a
    /// third as often as the same app that completes.
    @Test func aMisbehavingAppIsLaunchedLess() throws {
        let good = quarterHourly("good")
        var bad = quarterHourly("bad")
        bad.forgetsCompletion = 1
        var apps = [good, bad]
        var launches: [AppLaunch] = []
        for d in 0..<14 {
            for (k, _) in apps.enumerated() {
                launches.append(use(k, at(24 * Int64(d) + 9, 10 * Int64(k)), at(24 * Int64(d) + 9, 10 * Int64(k) + 1)))
            }
        }
        apps[0].expirationResponse = .zero
        let charging = (0..<14).map { d in ChargingSession(start: at(24 * Int64(d) + 23), end: at(24 * Int64(d) + 31)) }
        let s = world(hours: 24 * 14, apps: apps, launches: launches, network: [(.zero, wifiState)], charging: charging)
        let run = try simulate(s, DuetPolicy())
        let goodStarts = run.starts.filter { $0.1.app == 0 }.count, badStarts = run.starts.filter { $0.1.app == 1 }.count
        #expect(run.records.contains { $0.request.app == 1 && $0.overran })
        #expect(Double(badStarts) <= 0.5 * Double(goodStarts), "good \(goodStarts), bad \(badStarts)")
        #expect(run.records.contains { $0.request.app == 1 && $0.policyReasons.contains("misbehaviour") })
        var forgiving = DuetPolicy.Parameters()
        forgiving.misbehaviourFactor = 1
        let same = try simulate(s, DuetPolicy(forgiving))
        #expect(abs(same.starts.filter { $0.1.app == 1 }.count - same.starts.filter { $0.1.app == 0 }.count) <= 2)
    }

    /// Processing follows use too: after a processing launch an app's next processing request
    /// waits until the app is opened again, unless it becomes due: eligible a day, the app used
    /// that week. An app opened once runs its nightly processing the first night, then every
    /// second night (eligible 12 h after a run, due a day later, run that night) while that use
    /// is in the week; without the due rule, once.
    @Test func processingFollowsUseAndComesDueAfterTwoDays() throws {
        var a = AppParameters(name: "backup")
        a.tasks = [task("backup.index", .processing, submitOn: [.background, .handler], cpu: 10, earliest: .hours(1), interval: .hours(12))]
        a.tasks[0].requiresExternalPower = true
        a.launchDownBytes = 0
        let charging = (0..<10).map { d in ChargingSession(start: at(24 * Int64(d) + 23), end: at(24 * Int64(d) + 31)) }
        let s = world(hours: 240, apps: [a], launches: [use(0, at(12), at(12, 5))], network: [(.zero, wifiState)], charging: charging)
        let run = try simulate(s, DuetPolicy())
        let nights = starts(run).map(\.day)
        #expect(nights.first == 0, "\(starts(run))")
        #expect(starts(run).first == at(23), "eligible at 13:05, on power at 23:00, unused since 12:05")
        #expect(nights.count >= 3 && nights.count <= 4, "due every second night while the use is in the week: \(starts(run))")
        #expect(starts(run).allSatisfy { $0 < at(12) + .days(7) + .days(2) })
        #expect(run.records.contains { $0.policyReasons.contains("app_unused") })
        var off = DuetPolicy.Parameters()
        off.processingDueAfter = nil
        #expect(starts(try simulate(s, DuetPolicy(off))).count == 1, "without the due rule, once")
    }

    /// Processing runs once the phone has lain unused for 5 minutes ("about 5 min after
    /// locking", Apple Developer Forums 119758), where eager runs it as the person leaves.
    @Test func processingWaitsFiveMinutesAfterUse() throws {
        var a = AppParameters(name: "backup")
        a.tasks = [task("backup.index", .processing, submitOn: [.background], cpu: 10, earliest: .zero)]
        a.launchDownBytes = 0
        let s = world(
            hours: 4, apps: [a], launches: [use(0, at(1), at(1, 2))], network: [(.zero, wifiState)],
            charging: [ChargingSession(start: .start, end: at(4))])
        #expect(starts(try simulate(s, EagerPolicy())) == [at(1, 2)])
        let run = try simulate(s, DuetPolicy())
        #expect(starts(run) == [at(1, 7)])
        #expect(run.records.first?.policyReasons == ["device_in_use"])
    }

    /// One app's requests are spaced by the rate limit; an energy budget spent on battery
    /// stops work until it refills.
    @Test func rateLimitAndEnergyBudget() {
        var params = DuetPolicy.Parameters()
        params.threshold = 0
        params.minLaunchSpacing = .minutes(10)
        params.maxRefreshesPerDay = 1000
        params.minRefreshesPerDay = 1000
        params.energyBudgetPerDay = 864  // 10 mJ/s
        var p = DuetPolicy(params)
        var s = state(80, at: at(1))
        #expect(p.decide(s, eligible: [refresh()]) == PolicyDecision(start: .all))
        // The first task ends at 1:01 having used 1000 J on battery: the budget is 136 J short.
        var r = TaskRecord(
            request: TaskRequest(
                id: TaskID(0), app: 0, kind: .refresh, identifier: "x", submitted: .start,
                earliestBegin: .start, work: .seconds(1), powerW: 1),
            started: at(1), ended: at(1, 1), outcome: .completed, energyJ: 1000)
        r.success = true
        p.taskEnded(r)
        s.now = at(1, 5)
        let wait = p.decide(s, eligible: [refresh(id: 2)])
        #expect(wait.start == .none && named(wait) == ["2 rate_limit"])
        #expect(wait.reconsiderAt == at(1, 7, 30), "the next bin boundary comes before the rate limit (1:10)")
        s.now = at(1, 11)
        #expect(named(p.decide(s, eligible: [refresh(id: 2)])) == ["2 energy_budget"])
        // At 10 mJ/s the deficit is repaid 13,600 s after the task ended there: at 4:47:40.
        s.now = at(4, 47)
        #expect(p.decide(s, eligible: [refresh(id: 2)]).start == .none)
        s.now = at(4, 48)
        #expect(p.decide(s, eligible: [refresh(id: 2)]).start == .all)
    }

    /// A held request is scored again every `rescoreEvery` from midnight, or, with none, only
    /// at the time the rule that holds it names.
    @Test func heldRequestsAreRescoredPeriodically() {
        func wake(_ every: SimDuration?) -> SimInstant? {
            var params = DuetPolicy.Parameters()
            params.threshold = 0
            params.minLaunchSpacing = .minutes(10)
            params.maxRefreshesPerDay = 1000
            params.minRefreshesPerDay = 1000
            params.rescoreEvery = every
            var p = DuetPolicy(params)
            var s = state(80, at: at(1))
            #expect(p.decide(s, eligible: [refresh()]) == PolicyDecision(start: .all))
            s.now = at(1, 2)
            let held = p.decide(s, eligible: [refresh(id: 2)])
            #expect(named(held) == ["2 rate_limit"])
            return held.reconsiderAt
        }
        #expect(wake(.seconds(450)) == at(1, 7, 30), "the next 7.5-minute bin, before the rate limit's 1:10")
        #expect(wake(.minutes(4)) == at(1, 4))
        #expect(wake(.minutes(30)) == at(1, 10), "the rate limit's 1:10, before 1:30")
        #expect(wake(nil) == at(1, 10), "the rate limit's time alone")
        #expect(DuetPolicy().parameters.rescoreEvery == .seconds(450))
    }
}

/// Runs `DuetPolicy` and, at every decision, a copy of it with its application scores
/// forgotten: the cached scores must decide exactly as freshly computed ones.
struct CacheCheckedDuet: SchedulingPolicy {
    var policy = DuetPolicy()
    var decisions = 0, refreshesShown = 0, mismatches = 0
    var name: String { policy.name }
    var holdReasons: [String] { policy.holdReasons }
    mutating func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision {
        var fresh = policy
        fresh.appScoresKey = nil
        fresh.cachedOutcome = Array(repeating: .init(), count: policy.cachedOutcome.count)
        fresh.fast = Array(repeating: .init(), count: policy.fast.count)
        let expected = fresh.decide(state, eligible: eligible)
        let got = policy.decide(state, eligible: eligible)
        decisions += 1
        refreshesShown += eligible.filter { $0.kind == .refresh }.count
        if got != expected { mismatches += 1 }
        return got
    }
    mutating func taskEnded(_ record: TaskRecord) { policy.taskEnded(record) }
}

extension DuetTests {
    /// The cached application scores decide as fresh ones in a world where everything a
    /// decision reads moves: refresh and processing requests, the person, Wi-Fi, LTE and no
    /// connection through the day, daytime top-ups, and budgets small enough to run out.
    @Test func cachedApplicationScoresDecideAsFreshOnesInAChangingWorld() throws {
        var s = setup(
            days: 4,
            apps: [
                app("a", every: .minutes(20), downKB: 200), app("b", every: .hours(1), downKB: 50),
                app("c", every: .hours(2), work: .seconds(30), kind: .processing),
            ])
        s.people = PeopleParameters()
        s.charging.topUpsPerDay = 2
        s.network = network([
            (.zero, wifiState), (.hours(8), lteState), (.hours(12), .disconnected),
            (.hours(13), lteState), (.hours(18), wifiState),
        ])
        var policy = CacheCheckedDuet()
        policy.policy.parameters.energyBudgetPerDay = 20
        policy.policy.parameters.dataBudgetPerDay = 2e6
        let streams = try WorldStreams(setup: s, masterSeed: 11, replication: 0)
        var sim = PhoneSimulation(setup: s, policy: policy, sink: RecordingSink(summary: RunMetrics(apps: s.apps)), streams: streams)
        let run = sim.run()
        #expect(sim.policy.decisions > 100)
        #expect(sim.policy.mismatches == 0)
        #expect(sim.policy.refreshesShown > sim.policy.decisions)
        #expect(run.records.contains { $0.started != nil && $0.request.kind == .processing })
        #expect(run.records.contains { $0.started != nil && $0.request.kind == .refresh })
    }

    @Test func cachedApplicationScoresDecideAsFreshOnes() throws {
        // A person who opens the apps, so the launch predictor learns and its bins matter.
        var s = setup(days: 4, apps: [app("a", every: .minutes(20)), app("b", every: .hours(1)), app("c", every: .minutes(45))])
        s.people = PeopleParameters()
        s.network = network([(.zero, wifiState)])
        let streams = try WorldStreams(setup: s, masterSeed: 7, replication: 0)
        var sim = PhoneSimulation(
            setup: s, policy: CacheCheckedDuet(), sink: RecordingSink(summary: RunMetrics(apps: s.apps)),
            streams: streams)
        let run = sim.run()
        #expect(sim.policy.decisions > 100 && sim.policy.refreshesShown > sim.policy.decisions)
        #expect(sim.policy.mismatches == 0)
        #expect(run.records.contains { $0.started != nil })
    }
}
