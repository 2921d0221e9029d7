import Foundation
import Testing

/// The process's surroundings: a standard stream closed (`2>&-`) or on a full device.
@Suite("Standard streams")
struct StandardStreamTests {
    /// Runs bgsim with its streams redirected by `redirect` (shell syntax, such as `2>&-`),
    /// and returns the exit status and what reached the other streams.
    static func run(_ arguments: [String], redirect: String, in dir: URL) throws -> (status: Int32, stdout: String, stderr: String) {
        try bgsim(arguments, in: dir, under: ["/bin/sh", "-c", "exec \"$0\" \"$@\" \(redirect)"])
    }

    @Test func aClosedOrFullStreamIsNoCrash() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = ["run", defaultScenario, "--set", "duration=1h", "--replications", "1", "--out"]
        // Standard error closed: the run finishes and writes its files; a bad input exits 2.
        let closed = try Self.run(run + ["a"], redirect: "2>&-", in: dir)
        #expect(closed.status == 0 && closed.stdout.contains("Wrote runs.csv"), "\(closed)")
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("a/manifest.json").path))
        #expect(try Self.run(["run", "nosuch.yaml"], redirect: "2>&-", in: dir).status == 2)
        // Nothing meant for standard error lands in a file the run opened on its number.
        let rows = try String(contentsOf: dir.appendingPathComponent("a/runs.csv"), encoding: .utf8)
        #expect(!rows.contains("progress"))
        // Standard error full: nothing to say it on, and the run is still a success.
        #expect(try Self.run(run + ["b"], redirect: "2>/dev/full", in: dir).status == 0)
        // Standard output full: the table is lost, so the run says so and exits 1.
        let full = try Self.run(run + ["c"], redirect: ">/dev/full", in: dir)
        #expect(full.status == 1 && full.stderr.hasSuffix("error: cannot write standard output: No space left on device\n"), "\(full.stderr)")
        // Standard input closed is nothing bgsim reads.
        #expect(try Self.run(run + ["d", "--quiet"], redirect: "<&-", in: dir).status == 0)
    }
}
