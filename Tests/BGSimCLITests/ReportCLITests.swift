import Foundation
import Testing

@Suite("bgsim report")
struct ReportCLITests {
    @Test func reportWritesHTMLAndMarkdownAtomicallyAndNamesThem() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try bgsim(["run", defaultScenario, "--replications", "2", "--set", "duration=1d", "--out", "r", "--quiet"], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        let r = try bgsim(["report", "r", "--format", "md"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "Wrote r/report.html\nWrote r/report.md\n")
        let html = try String(contentsOf: dir.appendingPathComponent("r/report.html"), encoding: .utf8)
        #expect(html.hasPrefix("<!DOCTYPE html>") && html.hasSuffix("</html>\n"))
        let md = try String(contentsOf: dir.appendingPathComponent("r/report.md"), encoding: .utf8)
        #expect(md.hasPrefix("# default_duration-1d: policy comparison\n") && md.contains("| policy | completed % |"))
        #expect(!files(in: dir.appendingPathComponent("r")).contains { $0.hasPrefix(".") }, "no temporary is left")
        // Same results, same report: nothing in it depends on the clock or the machine.
        let again = try bgsim(["report", "r", "--out", "again.html", "--quiet"], in: dir)
        #expect(again.status == 0 && again.stdout.isEmpty)
        #expect(try Data(contentsOf: dir.appendingPathComponent("again.html")) == Data(contentsOf: dir.appendingPathComponent("r/report.html")))
        // Another day and replication of the timeline is another page.
        #expect(try bgsim(["report", "r", "--out", "other.html", "--replication", "1", "--quiet"], in: dir).status == 0)
        #expect(try Data(contentsOf: dir.appendingPathComponent("other.html")) != Data(contentsOf: dir.appendingPathComponent("r/report.html")))
        let tooFar = try bgsim(["report", "r", "--replication", "2"], in: dir)
        #expect(tooFar.status == 2 && tooFar.stderr.contains("--replication 2: the study in r has replications 0 to 1"), "\(tooFar.stderr)")
        let point = try bgsim(["report", "r", "--point", "1"], in: dir)
        #expect(point.status == 2 && point.stderr.contains("--point 1: a run has one point, 0; --point is for sweeps"), "\(point.stderr)")
    }

    /// A report checks what it reads: files changed since bgsim wrote them (against the
    /// manifest's SHA-256s) unless `--no-verify`, and always that runs.csv has rows, numbers
    /// in its metric columns and only the manifest's policies. Each is one line, exit 2, and
    /// no report.
    @Test func aReportRefusesFilesThatAreNotWhatBgsimWrote() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try bgsim(
            ["run", defaultScenario, "--replications", "2", "--set", "duration=2h", "--set", "policies=[eager, ios]", "--out", "r", "--quiet"], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        let runs = dir.appendingPathComponent("r/runs.csv")
        let original = try String(contentsOf: runs, encoding: .utf8)
        let lines = original.split(separator: "\n").map(String.init)
        let header = lines[0].split(separator: ",").map(String.init)
        func edited(_ column: String, row: Int, to value: String) -> String {
            var fields = lines[row].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            fields[header.firstIndex(of: column)!] = value
            var copy = lines
            copy[row] = fields.joined(separator: ",")
            return copy.joined(separator: "\n") + "\n"
        }
        let cases: [(String, [String], String)] = [
            (lines[0] + "\n", [], "r/runs.csv does not match its SHA-256 in the manifest: changed since bgsim wrote it (give --no-verify"),
            (lines[0] + "\n", ["--no-verify"], "r/runs.csv: no rows (expected one per policy and replication)"),
            (
                edited("background_energy_j", row: 1, to: "hello"), ["--no-verify"],
                "r/runs.csv: row 2: column 'background_energy_j': expected a number, got 'hello'"
            ),
            (edited("policy", row: 2, to: "mine"), ["--no-verify"], "r/runs.csv: row 3: policy 'mine' is not one of the manifest's (eager, ios)"),
            (edited("replication", row: 1, to: "7"), ["--no-verify"], "r/runs.csv: row 2: replication '7': expected 0 to 1"),
        ]
        for (text, options, message) in cases {
            try text.write(to: runs, atomically: true, encoding: .utf8)
            let r = try bgsim(["report", "r", "--quiet"] + options, in: dir)
            #expect(r.status == 2 && r.stderr.hasPrefix("error: ") && r.stderr.contains(message), "\(options): \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1)
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("r/report.html").path))
        }
        // A file left out (tasks.csv, as a bundled dataset's) is done without; runs.csv is not.
        try original.write(to: runs, atomically: true, encoding: .utf8)
        try FileManager.default.removeItem(at: dir.appendingPathComponent("r/tasks.csv"))
        let withoutTasks = try bgsim(["report", "r", "--quiet"], in: dir)
        #expect(withoutTasks.status == 0, "\(withoutTasks.stderr)")
        try FileManager.default.removeItem(at: dir.appendingPathComponent("r/report.html"))
        try FileManager.default.removeItem(at: runs)
        let withoutRuns = try bgsim(["report", "r", "--quiet"], in: dir)
        #expect(withoutRuns.status == 2 && withoutRuns.stderr.contains("r/runs.csv: listed in the manifest but missing"), "\(withoutRuns.stderr)")
        // A value changed on purpose, still a number, reports with --no-verify only.
        try edited("background_energy_j", row: 1, to: "12.5").write(to: runs, atomically: true, encoding: .utf8)
        #expect(try bgsim(["report", "r", "--quiet"], in: dir).status == 2)
        #expect(try bgsim(["report", "r", "--quiet", "--no-verify"], in: dir).status == 0)
    }

    /// A sweep's `point` out of its range, or a manifest that claims a long horizon, is an error
    /// or a bounded re-simulation: never a crash, a huge allocation or hours of simulating.
    @Test func aReportOfADamagedSweepStaysInItsBounds() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sweep = repo.appendingPathComponent("models/sweeps/refresh-setting.yaml").path
        let made = try bgsim(["sweep", sweep, "--replications", "1", "--set", "duration=1d", "--no-tasks", "--out", "s", "--quiet"], in: dir)
        #expect(made.status == 0, "\(made.stderr)")
        let runs = dir.appendingPathComponent("s/runs.csv")
        let original = try String(contentsOf: runs, encoding: .utf8)
        var lines = original.split(separator: "\n").map(String.init)
        let point = lines[0].split(separator: ",").firstIndex(of: "point")!
        for value in ["9223372036854775807", "100000000000", "9", "-1", "x"] {
            var fields = lines[1].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            fields[point] = value
            var copy = lines
            copy[1] = fields.joined(separator: ",")
            try (copy.joined(separator: "\n") + "\n").write(to: runs, atomically: true, encoding: .utf8)
            let r = try bgsim(["report", "s", "--quiet", "--no-verify"], in: dir)
            #expect(r.status == 2 && r.stderr.contains("s/runs.csv: row 2: point '\(value)': expected 0 to 8"), "\(value): \(r.stderr)")
        }
        try original.write(to: runs, atomically: true, encoding: .utf8)
        // A run whose manifest says a century: the typical day is chosen from the first two
        // weeks, and each lane simulates at most a week past the day shown.
        let run = try bgsim(["run", defaultScenario, "--replications", "1", "--set", "duration=3d", "--no-tasks", "--out", "r", "--quiet"], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        let manifest = dir.appendingPathComponent("r/manifest.json")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        try text.replacingOccurrences(of: "\"duration\":\"3d\"", with: "\"duration\":\"36500d\"").write(to: manifest, atomically: true, encoding: .utf8)
        lines = []
        let r = try bgsim(["report", "r", "--quiet", "--no-verify"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let html = try String(contentsOf: dir.appendingPathComponent("r/report.html"), encoding: .utf8)
        #expect(html.contains("of days 0 to 36499"), "the page says which day of the century it shows")
        #expect(html.contains("the days 1 to 14"), "the typical day is chosen among the first two weeks")
    }

    @Test(arguments: [
        (["report"], "Missing expected argument '<results>'"),
        (["report", "nowhere"], "nowhere: no such results folder"),
        (["report", ".", "--format", "pdf"], "--format 'pdf': expected html or md"),
        (["report", ".", "--day=-1"], "--day must be at least 0"),
        (["report", ".", "--point=-1"], "--point must be at least 0"),
    ])
    func badReportInputExitsTwo(arguments: [String], message: String) throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try bgsim(arguments, in: dir)
        #expect(r.status == 2)
        #expect(r.stderr.contains(message), "\(r.stderr)")
    }

    @Test func aFolderWithoutAManifestIsNamed() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try bgsim(["report", dir.path])
        #expect(r.status == 2)
        #expect(r.stderr.contains("\(dir.path)/manifest.json: missing (expected the manifest a finished run or sweep writes)"), "\(r.stderr)")
    }
}
