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
