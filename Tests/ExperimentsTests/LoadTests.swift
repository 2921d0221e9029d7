import Foundation
import PhoneWorld
import Scheduling
import SimEngine
import Testing

@testable import Experiments
@testable import ScenarioFiles

/// The bench load (`load:`): discharge tests of the battery models on their own.
@Suite("Bench load")
struct LoadTests {
    static let discharge = repoRoot.appendingPathComponent("models/scenarios/discharge.yaml").path

    /// The bundled discharge scenario with `sets` applied, run once.
    static func run(_ sets: String...) throws -> RunMetrics {
        let s = try Scenario.load(file: discharge, overrides: sets.map { Override(parsing: $0)! })
        return try Experiment.run(s, policy: s.policies[0], replication: 0)
    }

    static func hours(_ m: RunMetrics) throws -> Double { (try #require(m.firstShutdown) - SimInstant.start).seconds / 3600 }

    @Test func stepsAreComputedThroughRepeatedCycles() {
        let p = LoadProfile(steps: [.init(powerW: 2, duration: .minutes(5)), .init(powerW: 0, duration: .minutes(15))], repeats: true)
        #expect(p.step(0)! == (SimInstant.start, 2))
        #expect(p.step(1)! == (SimInstant.after(.minutes(5)), 0))
        #expect(p.step(7)! == (SimInstant.after(.minutes(65)), 0))
        #expect(LoadProfile(steps: p.steps, repeats: false).step(2) == nil)
        #expect(LoadProfile.none.isNone && LoadProfile(steps: [.init(powerW: 0, duration: .hours(1))], repeats: true).isNone)
    }

    /// A linear battery delivers its capacity at any rate: 1C empties it in an hour, 0.2C in five.
    @Test func aLinearBatteryEmptiesInCapacityOverLoad() throws {
        for (rate, expected) in [(1.0, 1.0), (0.2, 5.0), (4.0, 0.25)] {
            let m = try Self.run("phone.battery.model=linear", "load.steps[0].c_rate=\(rate)")
            #expect(abs(try Self.hours(m) - expected) < 1e-6, "at \(rate)C")
            #expect(abs(m.energy.fromBatteryJ - 12.98 * 3600) < 1e-6 && abs(m.components.loadJ - m.energy.consumedJ) < 1e-6)
            #expect(m.shutdowns == 1)
        }
    }

    /// KiBaM's rate-capacity effect: the heavier the load, the less it delivers.
    @Test func kibamDeliversLessUnderHeavierLoads() throws {
        let delivered = try [0.2, 1, 5].map { try Self.run("phone.battery.model=kibam", "load.steps[0].c_rate=\($0)").energy.fromBatteryJ }
        #expect(delivered[0] > delivered[1] && delivered[1] > delivered[2])
        #expect(delivered[0] < 12.98 * 3600)
    }

    /// A stepped, repeated load draws its mean: 2C for a minute in four empties a linear
    /// battery in two hours, as 0.5C does.
    @Test func aRepeatedStepLoadDrawsItsMean() throws {
        let m = try Self.run(
            "phone.battery.model=linear", "load.steps=[{c_rate: 2, for: 1m}, {c_rate: 0, for: 3m}]", "load.repeat=yes")
        let h = try Self.hours(m)
        #expect(abs(h - 2) < 1e-6, "\(h) h, \(m.components.loadJ) J")
    }

    /// No load, no shutdown: the time to empty is absent (an empty cell in runs.csv).
    @Test func withoutLoadNothingEmpties() throws {
        let m = try Self.run("load.steps[0].power_w=0", "load.steps[0].c_rate=null")
        #expect(m.firstShutdown == nil && m.components.loadJ == 0)
    }

    @Test func aTracedLoadIsReplayed() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-load-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        // 12.98 W (1C of 12.98 Wh) for half an hour, then nothing for half an hour, then 1C again:
        // the second half of the capacity is gone at 1.5 h.
        try "time,power_w\n0,12.98\n30m,0\n1h,12.98\n".write(to: dir.appendingPathComponent("load.csv"), atomically: true, encoding: .utf8)
        let yaml = try String(contentsOfFile: Self.discharge, encoding: .utf8)
            .replacingOccurrences(of: "steps: [{c_rate: 1, for: 2d}]", with: "trace: load.csv")
            .replacingOccurrences(of: "model: kibam", with: "model: linear")
        let s = try Scenario.parse(yaml: yaml + "\nmodels: \(repoRoot.path)/models\n", file: dir.appendingPathComponent("s.yaml").path)
        let m = try Experiment.run(s, policy: s.policies[0], replication: 0)
        let h = try Self.hours(m)
        #expect(abs(h - 1.5) < 1e-6, "\(h) h, \(m.components.loadJ) J")
    }

    @Test(arguments: [
        ("load.steps=[{power_w: 1, c_rate: 1, for: 1h}]", "expected exactly one of power_w and c_rate"),
        ("load.steps=[{power_w: 1, for: 500ms}]", "expected a duration from 1s to 36500d"),
        ("load.steps=[{power_w: 2000, for: 1h}]", "expected a power in watts from 0 to 1000"),
        ("load.steps=[]", "expected one or more steps"),
        ("load={repeat: yes}", "expected steps (a list of {power_w or c_rate, for}) or trace (a file)"),
    ])
    func badLoadsAreRefused(set: String, message: String) throws {
        do {
            _ = try Scenario.load(file: Self.discharge, overrides: [Override(parsing: set)!])
            Issue.record("accepted \(set)")
        } catch {
            #expect(error.description.contains(message), "\(error.description)")
            #expect(error.description.contains("load"), "names the key path: \(error.description)")
        }
    }
}
