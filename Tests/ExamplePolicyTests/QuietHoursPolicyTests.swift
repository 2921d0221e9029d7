import Experiments
import Foundation
import QuietHoursPolicy
import Scheduling
import SimEngine
import Testing

@testable import Policies

/// Builds the example policy in its own target and runs it through the public API, as a
/// user's own code would.
@Suite("A user-defined policy in its own target")
struct QuietHoursPolicyTests {
    static let scenario = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("models/scenarios/default.yaml").path

    @Test func runsThroughTheExperimentAPIAndKeepsItsRule() throws {
        let s = try Scenario.load(file: Self.scenario)
        let run = try Experiment.run(s, custom: QuietHoursPolicy(), replication: 0, events: true)
        // Work a policy decides on; pushes, crossings, sessions and the like start by the system.
        func scheduled(_ e: LoggedEvent) -> Bool {
            e.event == "started" && ["kind=refresh ", "kind=processing ", "kind=fetch "].contains { e.detail.hasPrefix($0) }
        }
        let starts = run.events!.filter(scheduled)
        #expect(!starts.isEmpty)
        // No scheduled work starts in the quiet hours unless the phone is charging then.
        var charging = false
        var quietStartsOnBattery = 0
        for e in run.events! {
            if e.event == "plug_in" { charging = true }
            if e.event == "unplug" { charging = false }
            if scheduled(e), !charging, QuietHoursPolicy().isQuiet(e.time) {
                quietStartsOnBattery += 1
            }
        }
        #expect(quietStartsOnBattery == 0)
        let eager = try Experiment.run(s, policy: PolicySpec(EagerPolicy.self), replication: 0)
        #expect(run.metrics.latencies.summary().mean > eager.latencies.summary().mean, "waiting costs latency")
    }
}
