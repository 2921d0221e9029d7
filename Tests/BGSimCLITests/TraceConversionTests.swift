import Foundation
import Testing

/// A public usage log in, as models/traces/README.md says: converted by the script beside the
/// example traces, then replayed by bgsim.
@Suite("Usage logs converted to people traces")
struct TraceConversionTests {
    /// The synthetic sample in LSApp's layout converts to a trace of 32 launches of user 1,
    /// and a scenario replaying it runs those launches: mapped apps as the scenario's, the
    /// others as other apps.
    @Test func theLSAppSampleConvertsAndReplays() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let trace = dir.appendingPathComponent("people.csv").path
        let converted = try shell([
            "python3", repo.appendingPathComponent("models/traces/convert-lsapp.py").path,
            repo.appendingPathComponent("models/traces/lsapp-sample.tsv").path, "--user", "1",
            "--map", "Google Chrome=news", "--map", "Gmail=mail", "--map", "Weather=weather", "-o", trace,
        ])
        #expect(converted.status == 0, "\(converted.stderr)")
        #expect(converted.stderr.contains("32 launches of user 1 from day 0 = 2018-01-15"), "\(converted.stderr)")
        let rows = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
        #expect(rows.first == "time,event,app,duration,exit" && rows.count == 33)
        let launchesOf = { (app: String) in rows.filter { $0.split(separator: ",")[2] == app }.count }
        #expect(launchesOf("news") >= 5 && launchesOf("Spotify") >= 1)

        try """
        name: replay-lsapp
        duration: 8d
        replications: 1
        models: \(repo.appendingPathComponent("models").path)
        charging: nightly
        network: home-office
        people: {profile: median, trace: people.csv}
        apps: [news, mail, weather]
        policies: [eager]
        phone: iphone-15
        """.write(to: dir.appendingPathComponent("s.yaml"), atomically: true, encoding: .utf8)
        let run = try bgsim(["run", "s.yaml", "--no-tasks", "--quiet", "--out", "out"], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        let csv = try String(contentsOf: dir.appendingPathComponent("out/runs.csv"), encoding: .utf8).split(separator: "\n")
        let header = csv[0].split(separator: ","), values = csv[1].split(separator: ",", omittingEmptySubsequences: false)
        #expect(values[header.firstIndex(of: "app_launches")!] == "32")
    }
}
