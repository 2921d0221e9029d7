import Foundation
import Testing

/// `bgsim forecast` from the command line: the example app profile gives a short answer and a
/// page; one person on slow Wi-Fi is told which rule held the refresh; a bad profile is one
/// line naming its file.
@Suite("Forecasts through the command line")
struct ForecastCLITests {
    static let app = repo.appendingPathComponent("Examples/forecast/news-app.yaml").path

    static func csv(_ url: URL) throws -> [[String: String]] {
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map {
            $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
        return lines.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(lines[0], $0)) }
    }

    /// A declared mechanism's requests are forecast like any task, under their wildcard; a
    /// request the system refuses at submission (a GPU the phones lack) is said to be refused,
    /// since it never waits.
    @Test func aContinuedProcessingAppIsToldItsExportsAreRefused() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let app = repo.appendingPathComponent("models/apps/video-editor.yaml").path
        let r = try bgsim(
            ["forecast", app, "--people", "6", "--sweep-people", "2", "--set", "duration=2d", "--no-ranges", "--out", "f", "--jobs", "2"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("ios continued_processing com.example.video.export.*: runs 0 a day"), "\(r.stdout)")
        #expect(r.stdout.contains("    refused at submit: "), "\(r.stdout)")
        let page = try String(contentsOf: dir.appendingPathComponent("f/forecast.md"), encoding: .utf8)
        #expect(page.contains("submit refused, notPermitted"), "the page names the error")
    }

    @Test func theExampleAppGetsAnAnswerAndAPage() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let small = ["--range-people", "1", "--range-trajectories", "2", "--range-samples", "2"]
        let r = try bgsim(
            ["forecast", Self.app, "--people", "24", "--sweep-people", "8", "--set", "duration=3d"] + small + ["--out", "f", "--jobs", "2"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("mynews: 24 people of 3.0 days each, under ios\n"), "\(r.stdout)")
        for id in ["com.example.mynews.refresh", "com.example.mynews.reindex"] {
            #expect(r.stdout.contains("ios \(id.hasSuffix("refresh") ? "refresh" : "processing") \(id): runs "), "\(r.stdout)")
        }
        #expect(r.stdout.contains("held by: "))
        #expect(files(in: dir.appendingPathComponent("f")) == ["forecast.csv", "forecast.html", "forecast.md", "manifest.json", "people.csv"])
        // The manifest: what made the folder, the command without --out and --jobs, each file's digest.
        let manifest = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("f/manifest.json"))) as? [String: Any])
        #expect(manifest["kind"] as? String == "forecast" && manifest["app"] as? String == "mynews" && manifest["people"] as? Int == 24)
        #expect(
            manifest["command_line"] as? [String]
                == ["bgsim", "forecast", Self.app, "--people", "24", "--sweep-people", "8", "--set", "duration=3d"] + small)
        let listed = try #require(manifest["files"] as? [[String: Any]])
        #expect(listed.map { $0["name"] as? String } == ["forecast.csv", "people.csv", "forecast.md", "forecast.html"])
        for entry in listed {
            let name = try #require(entry["name"] as? String)
            let sum = try shell(["sha256sum", "f/\(name)"], in: dir).stdout.prefix(64)
            #expect(entry["sha256"] as? String == String(sum), "\(name)")
        }
        let report = try bgsim(["report", "f"], in: dir)
        #expect(report.status == 2 && report.stderr.contains("kind 'forecast'"), "\(report.stderr)")
        let rows = try Self.csv(dir.appendingPathComponent("f/forecast.csv"))
        let base = rows.filter { $0["variant"] == "base" && $0["metric"] == "runs_per_day" }
        #expect(base.map { $0["identifier"]! } == ["com.example.mynews.refresh", "com.example.mynews.reindex"])
        #expect(base.allSatisfy { $0["people"] == "24" })
        // Every change of the sweep has a paired difference for the refresh.
        let changes = rows.filter {
            !["base", "ranges"].contains($0["variant"]) && $0["metric"] == "runs_per_day" && $0["identifier"] == "com.example.mynews.refresh"
        }
        #expect(changes.count == 10 && changes.allSatisfy { $0["people"] == "8" && !($0["difference_mean"] ?? "").isEmpty })
        // people.csv: a row per person and identifier, the person's drawn values, runs a day as forecast.csv's mean.
        let people = try Self.csv(dir.appendingPathComponent("f/people.csv"))
        #expect(people.count == 48 && people.allSatisfy { $0["charging"] != nil && $0["network"] != nil })
        let refresh = people.filter { $0["identifier"] == "com.example.mynews.refresh" }.map { Double($0["runs_per_day"]!)! }
        let mean = try #require(base.first.flatMap { Double($0["mean"]!) })
        #expect(abs(refresh.reduce(0, +) / 24 - mean) < 1e-9)
        // The answers over the assumptions' ranges: 2 × 20 Morris points and 2 × 5 Sobol' points,
        // each on the same first person; per identifier three metrics, their shares adding to 100%.
        #expect(r.stdout.contains("across the assumptions' ranges: "), "\(r.stdout)")
        #expect(r.stdout.contains("(p10-p90 of 50 points; "), "\(r.stdout)")
        for id in ["com.example.mynews.refresh", "com.example.mynews.reindex"] {
            let ranges = rows.filter { $0["variant"] == "ranges" && $0["identifier"] == id }
            let answers = ranges.filter { !$0["metric"]!.contains(":share:") }
            #expect(answers.map { $0["metric"]! } == ["runs_per_day", "energy_per_day_j", "none_pct"], "\(id)")
            for a in answers {
                let (p10, median, p90) = (Double(a["p10"]!)!, Double(a["median"]!)!, Double(a["p90"]!)!)
                #expect(a["people"] == "1" && p10 <= median && median <= p90, "\(a)")
                let shares = ranges.filter { $0["metric"]!.hasPrefix(a["metric"]! + ":share:") }.map { Double($0["mean"]!)! }
                #expect(shares.isEmpty || abs(shares.reduce(0, +) - 100) < 1e-6, "\(id) \(a["metric"]!): shares \(shares)")
                #expect(shares.count <= 3)
            }
        }
        // At the defaults the range's answer is the base's first person's, reused.
        let first = people.filter { $0["identifier"] == "com.example.mynews.refresh" }.prefix(1).map { Double($0["runs_per_day"]!)! }
        let atDefaults = try #require(
            rows.first { $0["variant"] == "ranges" && $0["identifier"] == "com.example.mynews.refresh" && $0["metric"] == "runs_per_day" })
        #expect(abs(Double(atDefaults["mean"]!)! - first.reduce(0, +)) < 1e-9)
        let html = try String(contentsOf: dir.appendingPathComponent("f/forecast.html"), encoding: .utf8)
        #expect(!html.contains("<script") && html.contains("<svg") && html.contains("A week on a typical phone"))
        #expect(html.contains("<h2>Over the assumptions</h2>"))
        let md = try String(contentsOf: dir.appendingPathComponent("f/forecast.md"), encoding: .utf8)
        for section in [
            "## How often and at what cost", "## Over the assumptions", "## What held it", "## How it changes", "## Who gets nothing",
            "## What these numbers rest on",
        ] {
            #expect(md.contains(section), "forecast.md lacks \(section)")
        }
        // Each assumption links to its section of docs/sources.md, whose heading it names.
        let sources = try String(contentsOf: repo.appendingPathComponent("docs/sources.md"), encoding: .utf8)
        for n in [2, 4, 6, 8, 9, 12] {
            let heading = try #require(sources.split(separator: "\n").first { $0.hasPrefix("## \(n). ") })
            #expect(html.contains(">§\(heading.dropFirst(3))</a>"), "forecast.html does not link \(heading)")
        }
        #expect(html.contains("docs/sources.md#4-how-ios-decides-the-duet-activity-scheduler\""))
        // The same forecast on one thread writes the same bytes.
        let one = try bgsim(
            ["forecast", Self.app, "--people", "24", "--sweep-people", "8", "--set", "duration=3d"] + small + ["--out", "g", "--jobs", "1", "--quiet"],
            in: dir)
        #expect(one.status == 0)
        for name in ["forecast.csv", "people.csv", "forecast.md", "forecast.html", "manifest.json"] {
            #expect(
                try Data(contentsOf: dir.appendingPathComponent("f/\(name)")) == Data(contentsOf: dir.appendingPathComponent("g/\(name)")),
                "\(name) depends on --jobs")
        }
    }

    /// One person whose Wi-Fi is too slow for dasd's network rule (0.2 Mbit/s scores 4, under
    /// `min_network_quality` 10): no refresh runs, and the forecast names `network` as what held it.
    @Test func aPersonOnSlowWiFiIsToldTheNetworkRuleHeldTheRefresh() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let slow = "network: wifi, down_mbps: 0.2, up_mbps: 0.1"
        let network =
            "network={wifi_radio: wifi, cellular_radio: lte, weekday: [{at: \"00:00\", \(slow), place: home}, {at: \"09:00\", \(slow), place: work}], "
            + "weekend: [{at: \"00:00\", \(slow), place: home}]}"
        let r = try bgsim(
            ["forecast", Self.app, "--person", "median", "--people", "3", "--sweep-people", "0", "--set", network, "--no-ranges", "--out", "f", "--quiet"],
            in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let people = try Self.csv(dir.appendingPathComponent("f/people.csv"))
        let refresh = people.filter { $0["identifier"] == "com.example.mynews.refresh" }
        #expect(refresh.count == 3 && refresh.allSatisfy { $0["runs_per_day"] == "0.0" && $0["top_cause"] == "network" }, "\(refresh)")
        let md = try String(contentsOf: dir.appendingPathComponent("f/forecast.md"), encoding: .utf8)
        #expect(md.contains("| ios | com.example.mynews.refresh | network "), "\(md)")
    }

    @Test func aBadAppProfileIsOneLineNamingItsFile() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        try "name: bad\ntasks:\n  - {id: com.example.x, kind: refersh}\n".write(to: dir.appendingPathComponent("bad.yaml"), atomically: true, encoding: .utf8)
        let r = try bgsim(["forecast", "bad.yaml", "--out", "f"], in: dir)
        #expect(r.status == 2 && r.stderr.hasPrefix("error: bad.yaml:3") && r.stderr.contains(": tasks[0].kind: "), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1 && !FileManager.default.fileExists(atPath: dir.appendingPathComponent("f").path))
        let missing = try bgsim(["forecast", "none.yaml"], in: dir)
        #expect(missing.status == 2 && missing.stderr.contains("none.yaml"))
        let few = try bgsim(["forecast", Self.app, "--people", "2", "--sweep-people", "3"], in: dir)
        #expect(few.status == 2 && few.stderr.contains("--sweep-people"))
    }

    /// Every profile the docs allow goes through the default sweep: opens a week are changed
    /// in weeks (they were set in days beside them, and refused as both), a change past what a
    /// scenario allows is named as not run, and an app has at most 1,000 tasks.
    @Test func everyProfileTheDocsAllowGoesThroughTheSweep() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let example = try String(contentsOf: URL(fileURLWithPath: Self.app), encoding: .utf8)
        func profile(_ name: String, opens: String) throws {
            let lines = example.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasPrefix("opens_per_day:") ? opens : String($0) }
            try lines.joined(separator: "\n").write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        let options = ["--people", "4", "--sweep-people", "2", "--set", "duration=2d", "--no-ranges", "--quiet"]
        try profile("weekly.yaml", opens: "opens_per_week: 10")
        let weekly = try bgsim(["forecast", "weekly.yaml", "--out", "w"] + options, in: dir)
        #expect(weekly.status == 0, "\(weekly.stderr)")
        let w = try String(contentsOf: dir.appendingPathComponent("w/forecast.md"), encoding: .utf8)
        #expect(w.contains("| opens x2 | the person opens the app 20 times a week (sets app.opens_per_week=20) |"), "\(w)")
        try profile("often.yaml", opens: "opens_per_day: 600")
        let often = try bgsim(["forecast", "often.yaml", "--out", "o"] + options, in: dir)
        #expect(often.status == 0, "\(often.stderr)")
        let o = try String(contentsOf: dir.appendingPathComponent("o/forecast.md"), encoding: .utf8)
        #expect(o.contains("Not run: opens x2 (1200 opens a day is over the 1000 a scenario allows)."), "\(o)")
        #expect(o.contains("| opens x0.5 | the person opens the app 300 times a day (sets app.opens_per_day=300) |"))
        var many = "name: many\ntasks:\n"
        for i in 0...1000 { many += "  - {id: com.example.t\(i), kind: refresh}\n" }
        try many.write(to: dir.appendingPathComponent("many.yaml"), atomically: true, encoding: .utf8)
        let tooMany = try bgsim(["forecast", "many.yaml", "--out", "m"] + options, in: dir)
        #expect(tooMany.status == 2 && tooMany.stderr.contains("tasks: expected at most 1000 tasks in an app, got 1001"), "\(tooMany.stderr)")
    }

    /// The developer's own what-ifs: each `--change` joins the paired sweep with its interval,
    /// several with one name make one change, the answer names them, and `--quiet` keeps the
    /// answer; a processing task that requires power costs the battery nothing, its energy
    /// being the charger's; no two causes of the week strip share a colour.
    @Test func aDevelopersOwnChangesAreForecastWithIntervals() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try bgsim(
            [
                "forecast", Self.app, "--people", "12", "--sweep-people", "6", "--set", "duration=3d", "--no-ranges", "--out", "f", "--quiet",
                "--change", "opens 5:app.opens_per_day=5", "--change", "hourly:app.tasks[0].interval=1h", "--change",
                "hourly:app.tasks[0].earliest_begin=1h", "--change", "wifi only:settings.background_app_refresh=wifi",
            ], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("mynews: 12 people of 3.0 days each, under ios\n") && !r.stdout.contains("Wrote "), "\(r.stdout)")
        #expect(r.stdout.contains("your changes, runs a day against now (95% interval): opens 5 "), "\(r.stdout)")
        let rows = try Self.csv(dir.appendingPathComponent("f/forecast.csv"))
        for change in ["opens 5", "hourly", "wifi only"] {
            let row = try #require(rows.first { $0["variant"] == change && $0["metric"] == "runs_per_day" && $0["identifier"] == "com.example.mynews.refresh" })
            #expect(row["people"] == "6" && Double(row["difference_ci95_low"]!)! <= Double(row["difference_ci95_high"]!)!, "\(change)")
        }
        let page = try String(contentsOf: dir.appendingPathComponent("f/forecast.md"), encoding: .utf8)
        #expect(page.contains("| hourly | your change (sets app.tasks\\[0\\].interval=1h, app.tasks\\[0\\].earliest_begin=1h) |"), "\(page)")
        #expect(page.contains("| wifi only | your change (sets settings.background_app_refresh=wifi for everyone) |"))
        #expect(page.contains("(sets app.opens_per_day=3)"), "a built-in change says what it sets")
        // What the battery gave: a task's energy less what was drawn on the charger.
        func value(_ id: String, _ metric: String) throws -> Double {
            try #require(rows.first { $0["variant"] == "base" && $0["identifier"] == id && $0["metric"] == metric }.flatMap { Double($0["mean"]!) })
        }
        let reindex = "com.example.mynews.reindex"
        #expect(try value(reindex, "charger_energy_per_day_j") >= 0.95 * (try value(reindex, "energy_per_day_j")))
        // Per joule drawn, the battery pays for the refresh (mostly on battery) far more than for the re-index.
        func batteryPerJoule(_ id: String) throws -> Double { try value(id, "battery_pct_per_day") / (try value(id, "energy_per_day_j")) }
        #expect(try batteryPerJoule(reindex) < 0.1 * (try batteryPerJoule("com.example.mynews.refresh")))
        let html = try String(contentsOf: dir.appendingPathComponent("f/forecast.html"), encoding: .utf8)
        let swatches = html.components(separatedBy: "class=\"swatch\" style=\"background:").dropFirst().map { String($0.prefix(7)) }
        #expect(swatches.count >= 3 && Set(swatches).count == swatches.count, "\(swatches)")
        #expect(html.contains(">06:00</text>") && html.contains(">18:00</text>"), "the week strip's hours")
        // A change that names nothing or takes the forecast's own name is refused.
        for bad in ["opens 5", "base:app.opens_per_day=5", ":app.opens_per_day=5"] {
            let e = try bgsim(["forecast", Self.app, "--change", bad, "--out", "g"], in: dir)
            #expect(e.status == 2 && e.stderr.contains("--change"), "\(bad): \(e.stderr)")
        }
    }
}
