import Foundation
import Scheduling
import Testing

@testable import Experiments
@testable import ResultFiles
@testable import ScenarioFiles

/// Random sweeps over wide ranges of almost every section (`Tests/Fuzz/wide.yaml`), run by the
/// tests' debug build, whose assertions and preconditions stop at the first inconsistency: the
/// energy books balance, no battery watch outlasts a level it promised to end before, no task
/// is charged energy after its state was dropped, every task ends once. `make fuzz` runs the
/// whole sweep (300 points, 4 days, 2 replications), from any design seed: such sweeps found
/// four faults the scenario tests and the random worlds of `invariantsHoldInRandomWorlds` had
/// not (a KiBaM phone booting late, a weak charger's limit passed during a watch, a session's
/// chunks outliving it, a KiBaM phone staying off on a charger that gave it nothing), each now
/// with a scenario test of its own. This test's 40 short points (4.5 s) are a smoke test of the
/// same ranges, not a net for all such faults: with the weak charger's fault back it stops on
/// the watch's check, but with any of the other three fixes undone it still passes (those
/// needed hundreds of points and days of simulated time).
@Suite("Random sweeps over wide ranges")
struct FuzzTests {
    /// `make fuzz` is not part of `make test`: every sweep it offers must still read, every
    /// point of it, so that a renamed key or a narrowed range shows here, not on its next run.
    @Test func everySweepMakeFuzzOffersIsValid() throws {
        let folder = repoRoot.appendingPathComponent("Tests/Fuzz")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".yaml") && !$0.hasPrefix(".") }.sorted()
        #expect(names == ["apps.yaml", "battery.yaml", "ios.yaml", "wide.yaml"])
        for name in names {
            let sweep = try Sweep.load(file: folder.appendingPathComponent(name).path)
            let plan = try StudyPlan(sweep: sweep, overrides: [], jobs: 2)
            #expect(plan.points.count == 300, "\(name)")
        }
    }

    @Test func everyPointOfAWideRandomSweepRuns() async throws {
        var sweep = try Sweep.load(file: repoRoot.appendingPathComponent("Tests/Fuzz/wide.yaml").path)
        sweep.design.points = 40
        let overrides = [Override(parsing: "duration=2d")!, Override(parsing: "replications=1")!]
        let plan = try StudyPlan(sweep: sweep, overrides: overrides, jobs: 2)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-fuzz-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let outcome = try await Experiment.perform(plan, options: StudyOptions(jobs: 2, record: RecordOptions(tasks: false)), to: dir)
        #expect(outcome.ran == 40 * 6)
        let energy = try #require(RunMetrics.columns.firstIndex { $0.name == "background_energy_j" })
        for point in outcome.runs {
            for run in point { #expect(run.values[energy].isFinite && run.values[energy] >= 0) }
        }
    }
}
