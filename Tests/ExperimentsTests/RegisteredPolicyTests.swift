import Foundation
import SimEngine
import Testing

@testable import Experiments
@testable import Policies
@testable import ResultFiles
@testable import ScenarioFiles
@testable import Scheduling

/// A user's policy as the registry sees it: every kind of parameter, each with a range.
struct ThresholdPolicy: RegisteredPolicy {
    var share = 0.25
    var batch = 2
    var hold = true
    var wait: SimDuration = .minutes(10)
    static let policyName = "test-threshold"
    static let summary = "starts work once a share of requests wait (a test policy)"
    static let parameters: [PolicyParameter<Self>] = [
        .number("share", \.share, in: 0...1, unit: "a share", help: "share of the requests"),
        .integer("batch", \.batch, in: 1...50, help: "requests in a batch"),
        .flag("hold", \.hold, help: "whether to hold at all"),
        .duration("wait", \.wait, in: .zero ... .hours(6), help: "longest wait"),
    ]
    init() {}
    func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision {
        !hold || eligible.count >= batch ? .startAll : PolicyDecision(start: .none, reason: "batching")
    }
}

/// A clairvoyant one: results must mark it as a bound by what it declares, not by its name.
struct PeekingPolicy: RegisteredPolicy {
    static let policyName = "test-peeking"
    static let summary = "a bound that sees the future (a test policy)"
    static var isClairvoyant: Bool { true }
    private(set) var sawTheFuture = false
    init() {}
    mutating func foresee(_ future: FutureWorld) { sawTheFuture = true }
    func decide(_ state: DeviceState, eligible: [EligibleTask]) -> PolicyDecision { .startAll }
}

@Suite("Registered policies in scenarios")
struct RegisteredPolicyTests {
    init() { PolicyRegistry.register([ThresholdPolicy.self, PeekingPolicy.self]) }

    func scenario(_ policies: String, _ overrides: [String] = []) throws -> Scenario {
        try Scenario.parse(
            yaml: minimalWith("policies: [eager]", "policies: \(policies)"), file: "s.yaml",
            overrides: overrides.map { Override(parsing: $0)! })
    }

    @Test func declaredParametersAreReadCheckedAndSet() throws {
        let s = try scenario("[eager, {name: test-threshold, label: t, share: 0.5, batch: 3, hold: false, wait: 20m}]")
        let spec = try #require(s.policies.last)
        #expect(spec.label == "t" && spec.rule.name == "test-threshold" && !spec.isBound)
        let r = spec.rule
        #expect(r.values == ["share": .number(0.5), "batch": .integer(3), "hold": .flag(false), "wait": .duration(.minutes(20))])
        let made = ThresholdPolicy.make(r.values)
        #expect(made.share == 0.5 && made.batch == 3 && !made.hold && made.wait == .minutes(20))
        // Left out, a parameter keeps its default; `--set` reaches it like a built-in's.
        let set = try scenario("[eager, test-threshold]", ["policies[1].batch=7"])
        let d = set.policies[1].rule
        #expect(d.values == ["batch": .integer(7)] && ThresholdPolicy.make(d.values).share == 0.25)
    }

    @Test(arguments: [
        ("{name: test-threshold, share: 2}", "s.yaml:8:42: policies[0].share: expected a share from 0 to 1, got 2"),
        ("{name: test-threshold, batch: 0}", "s.yaml:8:42: policies[0].batch: expected a whole number from 1 to 50, got '0'"),
        ("{name: test-threshold, wait: 7h}", "s.yaml:8:41: policies[0].wait: expected a duration from 0s to 6h, got '7h'"),
        ("{name: test-threshold, hold: maybe}", "s.yaml:8:41: policies[0].hold: expected true or false, got 'maybe'"),
        (
            "{name: test-threshold, shar: 0.5}",
            "s.yaml:8: policies[0].shar: unknown key 'shar'; did you mean 'share'? Known keys: name, label, share, batch, hold, wait"
        ),
    ])
    func badValuesNameTheKeyPathAndTheRange(entry: String, message: String) {
        #expect(parseError(minimalWith("policies: [eager]", "policies: [\(entry)]"))?.description == message)
    }

    @Test func anUnknownPolicyListsTheRegisteredOnesToo() throws {
        let error = try #require(parseError(minimalWith("policies: [eager]", "policies: [test-treshold]")))
        #expect(
            error.description.contains(
                "unknown policy 'test-treshold'; did you mean 'test-threshold'? Known policies: "
                    + PolicyRegistry.builtIn.map { $0.policyName }.joined(separator: ", ") + ", "))
        #expect(error.description.contains("test-threshold"))
    }

    /// A bound is whatever declares `isClairvoyant`, and it is shown the future through the box.
    @Test func aClairvoyantRegisteredPolicyIsABoundAndSeesTheFuture() throws {
        let s = try scenario("[eager, test-peeking]")
        #expect(s.policies[1].isBound && !s.policies[0].isBound)
        let r = s.policies[1].rule
        var sim = PhoneSimulation(
            setup: s.setup, policy: r.makePolicy(), sink: StandardSink(metrics: RunMetrics()),
            streams: try WorldStreams(setup: s.setup, masterSeed: 1, replication: 0))
        _ = sim.run()
        #expect((sim.policy.base as? PeekingPolicy)?.sawTheFuture == true)
    }

    /// A sweep may vary a policy's parameter (each point runs its own value), never which
    /// policies run or what they are called.
    @Test func aSweepVariesPolicyParametersButNotPolicies() throws {
        let base = try SweepTests.write(minimalWith("policies: [eager]", "policies: [eager, {name: test-threshold, hold: false}]"))
        defer { try? FileManager.default.removeItem(atPath: base) }
        func sweep(_ axis: String) throws -> String {
            try SweepTests.write("scenario: \(base)\ndesign: grid\naxes:\n  - \(axis)\n")
        }
        let good = try sweep("{path: 'policies[1].batch', values: [1, 9]}")
        defer { try? FileManager.default.removeItem(atPath: good) }
        let plan = try StudyPlan(sweep: Sweep.load(file: good))
        let batches = plan.points.map { p -> PolicyParameterValue? in
            p.scenario.policies[1].rule.values["batch"]
        }
        #expect(batches == [.integer(1), .integer(9)])
        for axis in ["{path: 'policies[1].name', values: [eager]}", "{path: 'policies[1].label', values: [x]}", "{path: 'policies[1]', values: [eager]}"] {
            let bad = try sweep(axis)
            defer { try? FileManager.default.removeItem(atPath: bad) }
            #expect(throws: ScenarioError.self, "\(axis) was accepted") { try StudyPlan(sweep: Sweep.load(file: bad)) }
        }
    }

    /// A list item is reached by its label or name as well as by its index:
    /// `policies[quick].batch`, `policies.quick.batch` and `policies[1].batch` are one value.
    @Test func policiesAndAppsAreReachedByLabelOrName() throws {
        let entries = "[eager, {name: test-threshold, label: quick, hold: false}]"
        for path in ["policies[quick].batch", "policies.quick.batch", "policies[1].batch"] {
            let s = try scenario(entries, ["\(path)=4"])
            let r = s.policies[1].rule
            #expect(r.values["batch"] == .integer(4), "\(path)")
        }
        #expect(ConfigKeyPath(parsing: "policies[quick].batch")?.description == "policies.quick.batch")
        let apps = try Scenario.parse(yaml: minimal, file: "s.yaml", overrides: [Override(parsing: "apps[news].cpu_w=0.3")!])
        #expect(apps.setup.apps[0].cpuPowerW == 0.3)
        #expect(
            parseError(minimalWith("policies: [eager]", "policies: \(entries)"), overrides: ["policies[slow].batch=4"])?.description
                == "s.yaml: --set policies[slow].batch=4: policies: no item of the list is labelled or named 'slow'; items: eager, quick")
    }

    /// Through the box, a registered policy with eager's rule gives eager's results exactly.
    @Test func aRegisteredPolicyRunsLikeTheBuiltInOneWithTheSameRule() throws {
        let s = try scenario("[eager, {name: test-threshold, hold: false}]")
        let eager = try Experiment.run(s, policy: s.policies[0], replication: 0)
        let mine = try Experiment.run(s, policy: s.policies[1], replication: 0)
        #expect(eager.backgroundEnergyJ == mine.backgroundEnergyJ && eager.latencies.exactValues == mine.latencies.exactValues)
    }
}
