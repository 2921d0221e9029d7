import Foundation
import Testing

/// The bundled fleet scenario through the command line: shards merge to the unsharded files,
/// and the report shows the spread across people.
@Suite("Fleets through the command line")
struct FleetCLITests {
    @Test func aFleetShardsMergesAndReportsItsPeople() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fleet = repo.appendingPathComponent("models/scenarios/fleet.yaml").path
        let options = ["--replications", "6", "--set", "duration=1d", "--set", "policies=[eager, ios]", "--no-tasks", "--quiet"]
        let whole = try bgsim(["run", fleet] + options + ["--out", "whole"], in: dir)
        #expect(whole.status == 0, "\(whole.stderr)")
        for k in 1...2 {
            let shard = try bgsim(["run", fleet] + options + ["--shard", "\(k)/2", "--out", "s\(k)"], in: dir)
            #expect(shard.status == 0, "\(shard.stderr)")
        }
        let merged = try bgsim(["merge", "s1", "s2", "--out", "merged", "--quiet"], in: dir)
        #expect(merged.status == 0, "\(merged.stderr)")
        for name in ["runs.csv", "summary.csv", "comparisons.csv", "manifest.json"] {
            let a = try Data(contentsOf: dir.appendingPathComponent("whole/\(name)"))
            let b = try Data(contentsOf: dir.appendingPathComponent("merged/\(name)"))
            #expect(a == b, "\(name) differs between the unsharded and the merged fleet")
        }
        let runs = try String(contentsOf: dir.appendingPathComponent("whole/runs.csv"), encoding: .utf8)
        #expect(
            runs.hasPrefix(
                "scenario,policy,replication,seed,people.sessions_per_day,people.session_body_mean,people.habit_scale,charging,network,settings.background_app_refresh,"
            ))
        let manifest = try String(contentsOf: dir.appendingPathComponent("whole/manifest.json"), encoding: .utf8)
        #expect(manifest.contains("\"fleet\": [\"people.sessions_per_day\", "))
        let report = try bgsim(["report", "whole", "--quiet"], in: dir)
        #expect(report.status == 0, "\(report.stderr)")
        let html = try String(contentsOf: dir.appendingPathComponent("whole/report.html"), encoding: .utf8)
        #expect(html.contains("<h2>People</h2>") && html.contains("<h3>Against eager, person by person</h3>"))
        #expect(html.contains("worst off") && html.contains("people.sessions_per_day="))
    }

    /// A fleet writes apps.csv and, only when asked (`--tasks`), tasks.csv; `--tasks` and
    /// `--no-tasks` together are refused.
    @Test func aFleetWritesTasksOnlyWhenAsked() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fleet = repo.appendingPathComponent("models/scenarios/fleet.yaml").path
        let options = ["--replications", "2", "--set", "duration=1d", "--set", "policies=[ios]", "--quiet"]
        #expect(try bgsim(["run", fleet] + options + ["--out", "plain"], in: dir).status == 0)
        #expect(files(in: dir.appendingPathComponent("plain")) == ["apps.csv", "comparisons.csv", "manifest.json", "runs.csv", "summary.csv"])
        #expect(try bgsim(["run", fleet] + options + ["--tasks", "--out", "tasks"], in: dir).status == 0)
        #expect(files(in: dir.appendingPathComponent("tasks")).contains("tasks.csv"))
        let manifest = try String(contentsOf: dir.appendingPathComponent("tasks/manifest.json"), encoding: .utf8)
        #expect(manifest.contains("\"--tasks\""), "the reproducing command asks for tasks.csv again")
        let both = try bgsim(["run", fleet] + options + ["--tasks", "--no-tasks", "--out", "both"], in: dir)
        #expect(both.status == 2 && both.stderr.contains("--tasks and --no-tasks"))
    }
}
