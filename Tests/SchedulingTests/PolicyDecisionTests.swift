import PhoneWorld
import SimEngine
import Testing

@testable import Scheduling

/// Holds each request for rule `a` until 1:10, then for rule `b` until 1:40 (the decision's
/// default reason), and starts it then with a time limit of `limit`.
struct TwoRules: SchedulingPolicy {
    var limit: SimDuration?
    var name: String { "two-rules" }
    var holdReasons: [String] { ["a"] }
    mutating func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision {
        if state.now >= at(1, 40) {
            return PolicyDecision(start: .all, timeLimits: limit.map { l in eligible.map { PolicyTimeLimit($0.id, l) } } ?? [])
        }
        if state.now >= at(1, 10) { return PolicyDecision(start: .none, reconsiderAt: at(1, 40), reason: "b") }
        return PolicyDecision(start: .none, reconsiderAt: at(1, 10), reason: "unused", holds: eligible.map { PolicyHold($0.id, 0) })
    }
}

@Suite("A policy's decisions: the rule that held each request, time limits")
struct PolicyDecisionTests {
    /// A refresh eligible at 1:00 (the app left at 0:45, 15 minutes earlier) is held 10
    /// minutes by rule `a` and 30 by rule `b`: `b` first, their times summing to the policy's
    /// hold; the decision's own reason, never used, is not named.
    @Test func eachRuleHeldARequestForItsOwnTime() throws {
        let s = world(apps: [fetcher("a0")], launches: [use(0, at(0, 44), at(0, 45))], network: [(.zero, wifiState)])
        let run = try simulate(s, TwoRules())
        let r = try #require(run.records.first { $0.started != nil })
        #expect(r.started == at(1, 40))
        #expect(r.policyHolds.map(\.reason) == ["b", "a"])
        #expect(r.policyHolds.map(\.seconds) == [1800, 600])
        #expect(r.held[.policy] == 2400)
    }

    /// A time limit shorter than the task's own time ends it there: its expiration handler is
    /// called for `time_limit` after 5 s, where the work needs 20.
    @Test func aTimeLimitEndsTheTaskEarly() throws {
        var a = app("slow", every: .hours(12), work: .seconds(20), fixed: true, submitOn: [.background])
        a.tasks[0].earliestBegin = .minutes(15)
        let s = world(apps: [a], launches: [use(0, at(0, 44), at(0, 45))], network: [(.zero, wifiState)])
        let run = try simulate(s, TwoRules(limit: .seconds(5)))
        let r = try #require(run.records.first { $0.started != nil })
        #expect(r.outcome == .expired)
        #expect(
            run.taskEvents.contains {
                if case .expiration(let id, _, let reason) = $0.1 { id == r.request.id && reason == .timeLimit && $0.0 == at(1, 40, 5) } else { false }
            })
        let unlimited = try simulate(s, TwoRules(limit: .seconds(120)))
        #expect(unlimited.records.first { $0.started != nil }?.outcome == .completed, "a limit beyond the work changes nothing")
    }
}
