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

    /// Months of a log convert to times bgsim reads (plain seconds, never `2.6e+06`), and a
    /// log the script cannot use is one line naming the file (and the line), exit 1, no
    /// traceback: missing, not text, or with a row cut short.
    @Test func longLogsConvertAndBadLogsAreOneLine() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = repo.appendingPathComponent("models/traces/convert-lsapp.py").path
        let head = "user_id\tsession_id\ttimestamp\tapp_name\tevent_type\n"
        try
            (head + "1\t1\t2018-01-15 08:00:00\tGmail\tOpened\n1\t1\t2018-01-15 08:01:00\tGmail\tClosed\n"
            + "1\t2\t2018-03-15 08:00:00\tGmail\tOpened\n1\t2\t2018-03-15 08:01:30\tGmail\tClosed\n")
            .write(to: dir.appendingPathComponent("long.tsv"), atomically: true, encoding: .utf8)
        let long = try shell(["python3", script, dir.appendingPathComponent("long.tsv").path, "--user", "1", "--map", "Gmail=mail"])
        #expect(long.status == 0, "\(long.stderr)")
        #expect(long.stdout == "time,event,app,duration,exit\n28800,launch,mail,60,home\n5126400,launch,mail,90,home\n", "\(long.stdout)")
        try long.stdout.write(to: dir.appendingPathComponent("people.csv"), atomically: true, encoding: .utf8)
        try """
        name: long
        duration: 60d
        models: \(repo.appendingPathComponent("models").path)
        charging: nightly
        network: home-office
        people: {profile: median, trace: people.csv}
        apps: [mail]
        policies: [eager]
        phone: iphone-15
        """.write(to: dir.appendingPathComponent("s.yaml"), atomically: true, encoding: .utf8)
        let read = try bgsim(["validate", "s.yaml"], in: dir)
        #expect(read.status == 0, "bgsim reads the converted times: \(read.stderr)")

        try (head + "1\t1\t2018-01-15 08:00:00\tGmail\tOpened\n1\t1\t2018-01-15 08:01:00\tGmail\n")
            .write(to: dir.appendingPathComponent("short.tsv"), atomically: true, encoding: .utf8)
        try Data([0x7F, 0x45, 0x4C, 0x46, 0xFF, 0xFE, 0x00, 0x01]).write(to: dir.appendingPathComponent("binary.tsv"))
        for (file, message) in [
            ("short.tsv", "short.tsv:3: expected 5 tab-separated fields, got 4"),
            ("missing.tsv", "missing.tsv: cannot read it (No such file or directory)"),
            ("binary.tsv", "binary.tsv: not UTF-8 text: expected LSApp's tab-separated log"),
        ] {
            let r = try shell(["python3", script, dir.appendingPathComponent(file).path, "--user", "1"])
            #expect(r.status == 1 && r.stderr.hasPrefix("convert-lsapp.py: ") && r.stderr.contains(message), "\(file): \(r.stderr)")
            #expect(!r.stderr.contains("Traceback") && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        }
    }
}
