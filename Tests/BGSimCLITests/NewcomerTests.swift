import Foundation
import Testing

/// The first steps a new user takes, through the binary, as the README writes them.
@Suite("A newcomer's first steps")
struct NewcomerTests {
    /// `cp models/scenarios/default.yaml ~/study/mine.yaml && bgsim run ~/study/mine.yaml`:
    /// the copy finds the bundled profiles, and the results go to results/<name>/ where it runs.
    @Test func aCopiedScenarioRunsFromItsOwnFolder() throws {
        let study = try scratch()
        defer { try? FileManager.default.removeItem(at: study) }
        try FileManager.default.copyItem(atPath: defaultScenario, toPath: study.appendingPathComponent("mine.yaml").path)
        let r = try bgsim(["run", study.appendingPathComponent("mine.yaml").path, "--replications", "2", "--no-tasks", "--quiet"], in: study)
        #expect(r.status == 0, "\(r.stderr)")
        let runs = try String(contentsOf: study.appendingPathComponent("results/default/runs.csv"), encoding: .utf8)
        #expect(runs.split(separator: "\n").count == 1 + 6 * 2, "six policies, two replications")
    }

    /// `bgsim policies` lists every built-in policy with every parameter, from their
    /// declarations, exactly as docs/policies.md shows it (a user's executable adds its own:
    /// Tests/PolicyPackage checks that listing).
    @Test func policiesListsEveryParameterAsTheDocsShow() throws {
        let r = try bgsim(["policies"])
        #expect(r.status == 0 && r.stderr.isEmpty)
        for name in ["eager", "charge-only", "coalesce", "ios", "android", "oracle"] {
            #expect(r.stdout.contains("\n\(name): ") || r.stdout.hasPrefix("\(name): "), "\(name) is not listed")
        }
        #expect(r.stdout.contains("  quota_rare.max_jobs: a whole number of jobs from 1 to 1000000, default 48; "))
        let doc = try String(contentsOf: repo.appendingPathComponent("docs/policies.md"), encoding: .utf8)
        let block = doc.components(separatedBy: "### Every parameter")[1].components(separatedBy: "```text\n")[1]
            .components(separatedBy: "```")[0]
        #expect(block == r.stdout, "docs/policies.md's block under 'Every parameter' is not what `bgsim policies` prints: paste its output there")
    }

    /// `bgsim run models/scenarios/default.yaml --set people=heavy` in the repository leaves
    /// `git status` as it was: the variant goes to results/, which git ignores, not into the
    /// tracked notebooks-data/default.
    @Test func aVariantRunInTheRepositoryLeavesGitStatusAsItWas() throws {
        let before = try shell(["git", "-C", repo.path, "status", "--porcelain"])
        #expect(before.status == 0, "\(before.stderr)")
        let results = repo.appendingPathComponent("results")
        let hadResults = FileManager.default.fileExists(atPath: results.path)
        let out = results.appendingPathComponent("default_people-heavy_duration-1d")
        defer {
            try? FileManager.default.removeItem(at: out)
            if !hadResults { try? FileManager.default.removeItem(at: results) }
        }
        let r = try bgsim(
            ["run", "models/scenarios/default.yaml", "--set", "people=heavy", "--set", "duration=1d", "--replications", "1", "--quiet"],
            in: repo)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("manifest.json").path))
        let after = try shell(["git", "-C", repo.path, "status", "--porcelain"])
        #expect(after.stdout == before.stdout, "git status changed:\n\(after.stdout)")
    }
}
