import Foundation
import Policies
import Scheduling
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
        for name in PolicyRegistry.builtIn.map({ $0.policyName }) {
            #expect(r.stdout.contains("\n\(name): ") || r.stdout.hasPrefix("\(name): "), "\(name) is not listed")
        }
        #expect(r.stdout.contains("  quota_rare.max_jobs: a whole number of jobs from 1 to 1000000, default 48; "))
        let doc = try String(contentsOf: repo.appendingPathComponent("docs/policies.md"), encoding: .utf8)
        let block = doc.components(separatedBy: "### Every parameter")[1].components(separatedBy: "```text\n")[1]
            .components(separatedBy: "```")[0]
        #expect(block == r.stdout, "docs/policies.md's block under 'Every parameter' is not what `bgsim policies` prints: paste its output there")
    }

    /// The README's main command prints the tables its block shows: the block is the binary's
    /// output, not a copy that drifts when a column moves.
    @Test func theReadmesRunBlockIsWhatTheMainCommandPrints() throws {
        let out = try scratch()
        defer { try? FileManager.default.removeItem(at: out) }
        let r = try bgsim(["run", defaultScenario, "--out", out.appendingPathComponent("default").path])
        #expect(r.status == 0, "\(r.stderr)")
        func tables(_ text: String) -> [Substring] {
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            guard let first = lines.firstIndex(where: { $0.hasPrefix("default: ") }) else { return [] }
            return Array(lines[first...].prefix { !$0.hasPrefix("Wrote ") })
        }
        let readme = try String(contentsOf: repo.appendingPathComponent("README.md"), encoding: .utf8)
        let printed = tables(r.stdout + r.stderr)
        #expect(
            !printed.isEmpty && tables(readme) == printed,
            "README.md's block is not what `bgsim run models/scenarios/default.yaml` prints: paste its tables there")
        // The third table's cells are summary.csv's per-app means: runs a day, median gap.
        let summary = try String(contentsOf: out.appendingPathComponent("default/summary.csv"), encoding: .utf8)
        var means: [String: Double] = [:]
        for line in summary.split(separator: "\n").dropFirst() {
            let f = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard f.count > 10, f[2] == "app_runs_per_day" || f[2] == "app_gap_median_s", let mean = Double(f[4]) else { continue }
            means[f[1] + "/" + f[9] + "/" + f[10] + "/" + f[2]] = mean
        }
        let lines = printed.map(String.init)
        guard let head = lines.firstIndex(where: { $0.hasPrefix("scheduled tasks: runs a day") }) else {
            Issue.record("no table of runs a day per app")
            return
        }
        let columns = lines[head + 1].split(separator: " ").dropFirst().map(String.init)
        #expect(columns.first == "news" && columns.contains("legacy-reader"), "\(columns)")
        func seconds(_ text: Substring) -> Double? {
            guard let unit = text.last, let x = Double(text.dropLast()) else { return nil }
            return unit == "h" ? x * 3600 : unit == "m" ? x * 60 : unit == "s" ? x : nil
        }
        var checked = 0
        for row in lines[(head + 2)...] where !row.isEmpty {
            let f = row.split(separator: " ")
            let policy = String(f[0])
            guard let news = means[policy + "/news/com.example.news.refresh/app_runs_per_day"],
                let gap = means[policy + "/news/com.example.news.refresh/app_gap_median_s"]
            else {
                Issue.record("summary.csv has no news rows for \(policy)")
                continue
            }
            #expect(String(format: "%.1f", news) == f[1], "\(policy): news runs a day \(f[1]), summary.csv \(news)")
            #expect(seconds(f[2]).map { abs($0 - gap) <= 0.05 * gap + 1 } == true, "\(policy): news gap \(f[2]), summary.csv \(gap) s")
            checked += 1
        }
        #expect(checked == 6, "a row per policy")
    }

    /// `bgsim mechanisms` lists every declared mechanism's keys from its declaration, exactly
    /// as docs/scenarios.md shows them.
    @Test func mechanismsListsEveryKeyAsTheDocsShow() throws {
        let r = try bgsim(["mechanisms"])
        #expect(r.status == 0 && r.stderr.isEmpty)
        #expect(r.stdout.contains("\ncontinued_processing: ") && r.stdout.contains("    max_running: a number of tasks from 1 to 100, default 1; "))
        let doc = try String(contentsOf: repo.appendingPathComponent("docs/scenarios.md"), encoding: .utf8)
        let block = doc.components(separatedBy: "### Every key of the declared mechanisms")[1].components(separatedBy: "```text\n")[1]
            .components(separatedBy: "```")[0]
        #expect(
            block == r.stdout,
            "docs/scenarios.md's block under 'Every key of the declared mechanisms' is not what `bgsim mechanisms` prints: paste its output there")
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

    /// From a folder with no models/: `bgsim examples` lists the bundled files, `bgsim run
    /// default` and `bgsim sweep refresh-setting` run them by name, and a misspelt name is an
    /// error that names the example meant.
    @Test func bundledExamplesRunByNameFromAnyFolder() throws {
        let study = try scratch()
        defer { try? FileManager.default.removeItem(at: study) }
        let list = try bgsim(["examples"], in: study)
        #expect(list.status == 0, "\(list.stderr)")
        for name in ["default", "fleet", "refresh-setting", "charging-habit"] { #expect(list.stdout.contains("\n  \(name) "), "\(name)") }
        let run = try bgsim(["run", "default", "--set", "duration=6h", "--replications", "1", "--no-tasks", "--quiet"], in: study)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(FileManager.default.fileExists(atPath: study.appendingPathComponent("results/default_duration-6h/manifest.json").path))
        let sweep = try bgsim(["sweep", "refresh-setting", "--set", "duration=2h", "--replications", "1", "--quiet"], in: study)
        #expect(sweep.status == 0, "\(sweep.stderr)")
        #expect(FileManager.default.fileExists(atPath: study.appendingPathComponent("results/refresh-setting/manifest.json").path))
        let typo = try bgsim(["run", "defualt"], in: study)
        #expect(typo.status == 2 && typo.stderr == "error: defualt: no such scenario file; did you mean the bundled scenario 'default' (bgsim run default)?\n")
        let none = try bgsim(["sweep", "nothing.yaml"], in: study)
        #expect(none.status == 2 && none.stderr.contains("bundled sweeps, taken by name: charging-habit, discharge, refresh-setting"), "\(none.stderr)")
    }

    /// A copy of a scenario that kept its original's name does not write over the original's
    /// results in results/<name>; the same file run again does.
    @Test func aCopyThatKeptItsNameDoesNotReplaceTheOriginalsResults() throws {
        let study = try scratch()
        defer { try? FileManager.default.removeItem(at: study) }
        try FileManager.default.copyItem(atPath: defaultScenario, toPath: study.appendingPathComponent("mine.yaml").path)
        let args = ["--set", "duration=1h", "--replications", "1", "--quiet"]
        #expect(try bgsim(["run", "default"] + args, in: study).status == 0)
        let manifest = study.appendingPathComponent("results/default_duration-1h/manifest.json")
        let before = try Data(contentsOf: manifest)
        let copy = try bgsim(["run", "mine.yaml"] + args, in: study)
        #expect(copy.status == 2 && copy.stderr.contains("holds the results of") && copy.stderr.contains("Give mine.yaml its own 'name:'"), "\(copy.stderr)")
        #expect(try Data(contentsOf: manifest) == before, "the original's results are untouched")
        #expect(try bgsim(["run", "default"] + args, in: study).status == 0, "the same file replaces its own results")
        #expect(try bgsim(["run", "mine.yaml", "--out", "results/mine"] + args, in: study).status == 0, "--out chooses on purpose")
    }

    /// `bgsim validate NAME --print` lists every key the reading looked at: the file's values,
    /// and each default in a form that reads back as that default (set in a copy of the file,
    /// the defaults change nothing).
    @Test func validatePrintListsEveryKeyWithItsDefault() throws {
        let r = try bgsim(["validate", "default", "--print"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").dropFirst().map(String.init)
        #expect(lines.count > 500, "\(lines.count) keys")
        #expect(lines.contains { $0.hasPrefix("charging.top_up_from:") && $0.hasSuffix("08:00  # default") })
        #expect(lines.contains { $0.hasPrefix("phone.battery.capacity_wh:") && $0.hasSuffix(" 12.98") })
        // A policy's parameters with their defaults, and each assumption's plausible range.
        #expect(lines.contains { $0.hasPrefix("policies[3].threshold:") && $0.hasSuffix(" 0.4  # default; assumption: plausible 0.3 to 0.5") })
        #expect(lines.contains { $0.hasPrefix("policies[3].idle_window_after:") && $0.hasSuffix(" 30m  # default; assumption: plausible 10m to 2h") })
        #expect(lines.contains { $0.hasPrefix("policies[4].inactive_after:") && $0.hasSuffix(" 30m  # default") })
        let defaults = lines.filter { $0.hasSuffix("  # default") && !$0.contains("(built in") && !$0.hasSuffix(" ~  # default") }
        #expect(defaults.count > 100)
        // The printed defaults, each set with --set, read back as the defaults: the run's
        // numbers are the same as without them.
        let sets = defaults.flatMap { line -> [String] in
            let parts = line.dropLast("  # default".count).split(separator: ":", maxSplits: 1)
            return ["--set", "\(parts[0])=\(parts[1].trimmingCharacters(in: .whitespaces))"]
        }
        let study = try scratch()
        defer { try? FileManager.default.removeItem(at: study) }
        let args = ["--set", "duration=12h", "--replications", "1", "--no-tasks", "--quiet", "--set", "name=x"]
        let plain = try bgsim(["run", "default", "--out", "plain"] + args, in: study)
        let spelled = try bgsim(["run", "default", "--out", "spelled"] + args + sets, in: study)
        #expect(plain.status == 0 && spelled.status == 0, "the printed defaults read back: \(spelled.stderr)")
        let a = try String(contentsOf: study.appendingPathComponent("plain/runs.csv"), encoding: .utf8)
        let b = try String(contentsOf: study.appendingPathComponent("spelled/runs.csv"), encoding: .utf8)
        #expect(!a.isEmpty && a == b, "setting every default to its printed value changed the run")
    }
}
