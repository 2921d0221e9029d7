import Foundation
import Testing

/// `bgsim sensitivity SCENARIO`: a sweep file of the scenario's assumptions, run as a sweep.
@Suite("bgsim sensitivity")
struct SensitivityCLITests {
    static let small = ["--set", "duration=1d", "--replications", "2", "--trajectories", "2", "--policy", "ios", "--no-tasks"]

    /// It writes its sweep file into --out and runs it; the manifest names that file, and
    /// `bgsim sweep` of it writes the same sensitivity.csv; the table gives each verdict.
    @Test func itWritesItsSweepAndRunsItAsASweep() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try bgsim(["sensitivity", "default"] + Self.small + ["--out", "s"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("Sweep 'default-sensitivity': 40 points x 6 policies x 2 replications (480 units run in 90 simulations"), "\(r.stdout)")
        #expect(r.stdout.contains("default-sensitivity: paired differences over 40 points of the assumptions' ranges"))
        #expect(r.stdout.contains("ios - eager          background_energy_j"), "\(r.stdout)")
        let sweep = try String(contentsOf: dir.appendingPathComponent("s/sensitivity.yaml"), encoding: .utf8)
        #expect(sweep.contains("design: morris\ntrajectories: 2\nlevels: 4\ndesign_seed: 1\naxes:\n"))
        #expect(sweep.contains("  - {path: \"policies[3].max_refreshes_per_day\", from: 4.0, to: 12.0}\n"), "\(sweep)")
        #expect(sweep.contains("  - {path: \"policies[3].processing_follows_use\", values: [false, true]}\n"))
        let manifest = try String(contentsOf: dir.appendingPathComponent("s/manifest.json"), encoding: .utf8)
        #expect(manifest.contains("\"command_line\": [\"bgsim\", \"sweep\", \"s/sensitivity.yaml\", "), "\(manifest)")
        let again = try bgsim(["sweep", "s/sensitivity.yaml", "--set", "duration=1d", "--replications", "2", "--no-tasks", "--out", "t", "--quiet"], in: dir)
        #expect(again.status == 0, "\(again.stderr)")
        let a = try Data(contentsOf: dir.appendingPathComponent("s/sensitivity.csv"))
        #expect(a == (try Data(contentsOf: dir.appendingPathComponent("t/sensitivity.csv"))))
        let report = try bgsim(["report", "s", "--format", "md", "--quiet"], in: dir)
        #expect(report.status == 0, "\(report.stderr)")
        let md = try String(contentsOf: dir.appendingPathComponent("s/report.md"), encoding: .utf8)
        #expect(md.contains("### Over the assumptions' ranges") && md.contains("| ios − eager | Background energy (J) |"))
    }

    /// --emit-slurm writes the shards' scripts for the sweep file it wrote.
    @Test func itsSlurmScriptsRunTheSweepFile() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try bgsim(["sensitivity", "default"] + Self.small + ["--out", "s", "--emit-slurm", "slurm", "--shards", "3"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let job = try String(contentsOf: dir.appendingPathComponent("slurm/sweep.sbatch"), encoding: .utf8)
        #expect(job.contains(" sweep ") && job.contains("/s/sensitivity.yaml") && job.contains("--shard \"${SLURM_ARRAY_TASK_ID}/3\""), "\(job)")
    }

    @Test(arguments: [
        (
            ["sensitivity", "default", "--policy", "nope"],
            "error: --policy nope: the scenario has no such policy; it has eager, charge-only, coalesce, ios, android, oracle"
        ),
        (
            ["sensitivity", "default", "--set", "policies=[eager, charge-only]"],
            "error: no assumption to vary: none of eager, charge-only declares a plausible range"
        ),
        (["sensitivity", "default", "--trajectories", "1"], "error: --trajectories 1: expected 2 to 10000"),
        (["sensitivity", "default", "--levels", "5"], "error: --levels 5: expected an even number from 2 to 20"),
    ])
    func badRequestsExitTwo(arguments: [String], firstLine: String) throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try bgsim(arguments + ["--out", "o"], in: dir)
        #expect(r.status == 2)
        #expect(r.stderr.hasPrefix(firstLine), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("o").path), "nothing is written for a bad request")
    }
}
