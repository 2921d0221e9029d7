import Experiments
import Foundation
import ResultFiles
import ScenarioFiles
import Scheduling
import SimEngine

/// The forecast's page, in Markdown and in HTML (inline SVG, no script), and the short answer
/// `bgsim forecast` prints: per task identifier, how often it runs across people, when and
/// where, at what cost, what held it, how that changes, who gets nothing, and one typical week.
package struct ForecastPage {
    let forecast: Forecast
    let rows: [Forecast.Row]
    let index: [String: Forecast.Row]
    /// The rows of each policy, variant and identifier: an app of many tasks made a scan of
    /// every row for each of them quadratic.
    let byTask: [String: [Forecast.Row]]

    /// The page of `forecast`, whose `forecast.csv` rows are `rows`.
    package init(_ forecast: Forecast, rows: [Forecast.Row]) {
        self.forecast = forecast
        self.rows = rows
        var index: [String: Forecast.Row] = [:], byTask: [String: [Forecast.Row]] = [:]
        for r in rows {
            index[Self.key(r.policy, r.variant, r.identifier, r.metric)] = r
            byTask[Self.key(r.policy, r.variant, r.identifier, ""), default: []].append(r)
        }
        self.index = index
        self.byTask = byTask
    }

    static func key(_ policy: String, _ variant: String, _ id: String, _ metric: String) -> String {
        [policy, variant, id, metric].joined(separator: "\u{1f}")
    }

    func row(_ policy: String, _ id: String, _ metric: String, variant: String = "base") -> Forecast.Row? {
        index[Self.key(policy, variant, id, metric)]
    }

    var policies: [String] { forecast.setup.scenario.policies.map(\.name) }
    var appName: String { forecast.setup.appParameters.name }
    var people: Int { forecast.variants.first?.people.count ?? 0 }
    var days: Double { forecast.variants.first?.people.first?.days ?? 0 }
    var isFleet: Bool { !forecast.traitNames.isEmpty }

    static func n(_ x: Double) -> String {
        if x == 0 { return "0" }
        let a = abs(x)
        let digits = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 1 : a >= 0.1 ? 2 : 3
        return String(format: "%.\(digits)f", x)
    }

    /// The causes that held an identifier, by their share of its held time (means over people).
    func heldShares(_ policy: String, _ id: String, variant: String = "base") -> [(cause: String, pct: Double)] {
        let held = (byTask[Self.key(policy, variant, id, "")] ?? []).filter { $0.metric.hasPrefix("held_h_per_day:") }
        let total = held.reduce(0) { $0 + $1.mean }
        guard total > 0 else { return [] }
        return held.map { (String($0.metric.dropFirst("held_h_per_day:".count)), 100 * $0.mean / total) }.filter { $0.pct >= 0.5 }
            .sorted { $0.pct > $1.pct }
    }

    /// The short answer, a few lines per identifier and policy.
    package var answer: String {
        var out = "\(appName): \(isFleet ? "\(people) people" : "one person, \(people) runs") of \(Self.n(days)) days each"
        out += ", under \(policies.joined(separator: " and "))\n"
        for policy in policies {
            for (id, kind) in forecast.identifiers {
                guard let runs = row(policy, id, "runs_per_day") else { continue }
                out += "  \(policy) \(Self.title(id, kind)): runs \(Self.n(runs.median)) a day (median; p10 \(Self.n(runs.p10)), p90 \(Self.n(runs.p90)))"
                out += "; \(Self.n(runs.zeroPct))% of \(isFleet ? "people" : "the runs") get none\n"
                var where_: [String] = []
                if let c = row(policy, id, "runs_charging_pct") { where_.append("on the charger \(Self.n(c.mean))%") }
                if let w = row(policy, id, "runs_wifi_pct") { where_.append("on Wi-Fi \(Self.n(w.mean))%") }
                if let e = row(policy, id, "energy_per_day_j"), let b = row(policy, id, "battery_pct_per_day") {
                    // What the battery gave; what was drawn on the charger beside it.
                    let c = row(policy, id, "charger_energy_per_day_j").map { "; \(Self.n($0.median)) J of it on the charger" } ?? ""
                    where_.append("\(Self.n(e.median)) J a day (\(Self.n(b.median))% of the battery\(c))")
                }
                if let s = row(policy, id, "staleness_mean_min") { where_.append("content \(Self.n(s.median)) min old at launch") }
                if !where_.isEmpty { out += "    " + where_.joined(separator: "; ") + "\n" }
                let shares = heldShares(policy, id).prefix(3)
                if !shares.isEmpty {
                    out += "    held by: " + shares.map { "\($0.cause) \(Self.n($0.pct))%" }.joined(separator: ", ") + " of its waiting time\n"
                }
                // Requests refused at submission never wait: say so, or a task that never runs
                // has no answer to "why not" here (forecast.md's table names the error).
                if let refused = row(policy, id, "rejected_per_day"), refused.mean > 0 {
                    out += "    refused at submit: \(Self.n(refused.mean)) a day (the page's table says why)\n"
                }
                if let line = rangeLine(policy, id) { out += "    " + line + "\n" }
                // The developer's own what-ifs (`--change`), each against the fleet as it is.
                let mine = forecast.setup.changes.compactMap { c -> String? in
                    guard let d = row(policy, id, "runs_per_day", variant: c.name)?.difference else { return nil }
                    return "\(c.name) \(d.mean >= 0 ? "+" : "")\(Self.n(d.mean)) [\(Self.n(d.lower)), \(Self.n(d.upper))]"
                }
                if !mine.isEmpty { out += "    your changes, runs a day against now (95% interval): " + mine.joined(separator: "; ") + "\n" }
            }
        }
        return out
    }

    // MARK: - Sections, each as (heading, Markdown, HTML)

    struct Table {
        var header: [String]
        var rows: [[String]]
        var markdown: String {
            var s = "| " + header.map(Quoting.markdown).joined(separator: " | ") + " |\n"
            s += "|" + header.map { _ in " --- |" }.joined() + "\n"
            for r in rows { s += "| " + r.map(Quoting.markdown).joined(separator: " | ") + " |\n" }
            return s
        }
        var html: String {
            var s = "<table><thead><tr>" + header.map { "<th>\(Quoting.html($0))</th>" }.joined() + "</tr></thead><tbody>\n"
            for r in rows { s += "<tr>" + r.map { "<td>\(Quoting.html($0))</td>" }.joined() + "</tr>\n" }
            return s + "</tbody></table>\n"
        }
    }

    func spread(_ r: Forecast.Row?) -> String {
        guard let r else { return "" }
        return "\(Self.n(r.median)) (\(Self.n(r.p10))–\(Self.n(r.p90)))"
    }

    /// The main table: one row per policy and identifier.
    /// A row's task as the developer knows it: a BGTaskScheduler request by its kind and
    /// identifier; work the system starts through another door by what that door is, since
    /// its identifier is the system's name for it, not one the app chose.
    static func title(_ id: String, _ kind: TaskKind) -> String {
        let doors: [String: String] = [
            "fetch": "legacy background fetch (setMinimumBackgroundFetchInterval)",
            "silent_push": "silent pushes (content-available notifications)",
            "background_transfer": "background URLSession transfers",
            "region": "region monitoring wake-ups",
            "finite_length": "finite-length work (beginBackgroundTask)",
            "redo": "work redone after its result was lost (state preservation)",
            "audio": "audio background mode sessions", "location": "location background mode sessions",
            "voip": "VoIP background mode sessions", "bluetooth": "Bluetooth background mode sessions",
        ]
        guard let door = doors[kind.rawValue] else { return "\(kind.rawValue) \(id)" }
        return door + (id.hasSuffix(".discretionary") ? ", discretionary" : "") + " [\(id)]"
    }

    var mainTable: Table {
        var t = Table(
            header: [
                "policy", "task", "runs a day, median (p10–p90)", "people with none", "completed a day", "expired a day",
                "J a run", "J a day", "of it on the charger, J", "battery % a day", "wait, min", "content age at launch, min", "on charger %", "on Wi-Fi %",
                "gap between runs, h",
            ], rows: [])
        for policy in policies {
            for (id, kind) in forecast.identifiers {
                guard let runs = row(policy, id, "runs_per_day") else { continue }
                t.rows.append([
                    policy, Self.title(id, kind), spread(runs), "\(Self.n(runs.zeroPct))%", spread(row(policy, id, "completed_per_day")),
                    spread(row(policy, id, "expired_per_day")), spread(row(policy, id, "energy_per_run_j")),
                    spread(row(policy, id, "energy_per_day_j")), spread(row(policy, id, "charger_energy_per_day_j")),
                    spread(row(policy, id, "battery_pct_per_day")),
                    spread(row(policy, id, "wait_mean_min")), spread(row(policy, id, "staleness_mean_min")),
                    row(policy, id, "runs_charging_pct").map { Self.n($0.mean) } ?? "",
                    row(policy, id, "runs_wifi_pct").map { Self.n($0.mean) } ?? "", spread(row(policy, id, "gap_median_h")),
                ])
            }
        }
        return t
    }

    var expirationTable: Table {
        var t = Table(header: ["policy", "task"] + ExpirationReason.allCases.map(\.rawValue) + ["killed", "rejected"], rows: [])
        for policy in policies {
            for (id, _) in forecast.identifiers where row(policy, id, "runs_per_day") != nil {
                let cells = ExpirationReason.allCases.map { e in row(policy, id, "expirations_\(e.rawValue)_per_day").map { Self.n($0.mean) } ?? "" }
                t.rows.append(
                    [policy, id] + cells + [row(policy, id, "killed_per_day"), row(policy, id, "rejected_per_day")].map { $0.map { Self.n($0.mean) } ?? "" })
            }
        }
        return t
    }

    var heldTable: Table {
        var t = Table(header: ["policy", "task", "what held it (share of its waiting time)"], rows: [])
        for policy in policies {
            for (id, _) in forecast.identifiers where row(policy, id, "runs_per_day") != nil {
                t.rows.append([policy, id, heldShares(policy, id).map { "\($0.cause) \(Self.n($0.pct))%" }.joined(separator: ", ")])
            }
        }
        return t
    }

    /// The sentence naming the sweep's changes this app cannot take, or "".
    var skipped: String {
        forecast.skipped.isEmpty ? "" : "Not run: " + forecast.skipped.map { "\($0.name) (\($0.why))" }.joined(separator: "; ") + "."
    }

    var sweepTable: Table {
        var t = Table(header: ["policy", "task", "change", "what it means", "runs a day (mean)", "difference from now, 95% CI"], rows: [])
        for policy in policies {
            for (id, _) in forecast.identifiers {
                for v in forecast.variants where v.policy == policy && v.name != "base" {
                    guard let r = row(policy, id, "runs_per_day", variant: v.name) else { continue }
                    let d = r.difference.map { "\($0.mean >= 0 ? "+" : "")\(Self.n($0.mean)) [\(Self.n($0.lower)), \(Self.n($0.upper))]" } ?? ""
                    t.rows.append([policy, id, v.name, v.description, Self.n(r.mean), d])
                }
            }
        }
        return t
    }

    static let everyoneRuns = "Nobody: every person's phone ran every task at least once."

    /// Who gets nothing: per policy and identifier, how many, the drawn values over-represented
    /// among them, and what held their requests.
    var nobodyTable: Table {
        var t = Table(header: ["policy", "task", "people with no run", "more common among them (share among them vs. all)", "what held them"], rows: [])
        for v in forecast.variants where v.name == "base" {
            for (id, _) in forecast.identifiers {
                let none = v.people.filter { ($0.tasks[id]?.started ?? 0) == 0 }
                guard !none.isEmpty, v.people.contains(where: { $0.tasks[id] != nil }) else { continue }
                var traits: [(String, Double, Double)] = []
                // A trait of one or two people is noise: said from five on.
                for (k, name) in forecast.traitNames.enumerated() where none.count >= 5 {
                    var values: [String: Int] = [:]
                    for p in v.people { values[p.traits[k], default: 0] += 1 }
                    // Listed values only (a drawn number takes as many values as people).
                    guard values.count <= 8 else { continue }
                    for (value, count) in values {
                        let among = Double(none.count { $0.traits[k] == value }) / Double(none.count)
                        let all = Double(count) / Double(v.people.count)
                        if among >= all + 0.1 { traits.append(("\(name)=\(value)", 100 * among, 100 * all)) }
                    }
                }
                var causes: [String: Double] = [:]
                for p in none { for c in p.tasks[id].map(Forecast.causes) ?? [] { causes[c.cause, default: 0] += c.seconds } }
                let total = causes.values.reduce(0, +)
                var held = causes.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(3).map { "\($0.key) \(Self.n(100 * $0.value / max(total, 1)))%" }
                // Requests refused at submission were never held: say why they were refused.
                for (k, e) in SubmitError.allCases.enumerated() {
                    let count = none.reduce(0) { $0 + ($1.tasks[id]?.rejections[k] ?? 0) }
                    if count > 0 { held.append("submit refused, \(e.rawValue): \(count) requests") }
                }
                t.rows.append([
                    v.policy, id, "\(none.count) of \(v.people.count)",
                    traits.sorted { ($0.1 - $0.2, $1.0) > ($1.1 - $1.2, $0.0) }.prefix(4).map { "\($0.0) (\(Self.n($0.1))% vs \(Self.n($0.2))%)" }.joined(
                        separator: ", "),
                    held.joined(separator: ", "),
                ])
            }
        }
        return t
    }

    /// What the numbers rest on, and the sections of docs/sources.md that say why.
    static let assumptions: [(String, [Int])] = [
        ("How iOS decides: the ios policy's rules, its allowance of refreshes per launch, the launch predictor (values that are assumptions: §12)", [4, 12]),
        ("What iPhones are seen to do, refreshes a day against opens a day (also docs/validation.md)", [4]),
        ("BGTaskScheduler's budgets: 30 s for a refresh, minutes for processing", [2]),
        ("The people: sessions a day, session lengths, habits, opens a day as an input", [8, 12]),
        ("The fleet's charging habits, networks and Background App Refresh settings", [5, 8, 12]),
        ("Energy: radio promotions, tails and CPU power", [6]),
        ("The android policy: Doze, standby buckets, quotas", [9]),
    ]

    /// docs/sources.md beside the bundled models (a clone's, or the copy `make install`
    /// puts beside them), and its numbered sections' headings: the page links to them.
    static let sources: (path: String, sections: [Int: String])? = {
        guard let models = BundledModels.folder else { return nil }
        let path = URL(fileURLWithPath: models).deletingLastPathComponent().appendingPathComponent("docs/sources.md").standardizedFileURL.path
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        var sections: [Int: String] = [:]
        // By bytes: split by characters, the file was 18 M instructions, 3% of a 10-person
        // forecast (callgrind).
        for line in text.utf8.split(separator: UInt8(ascii: "\n")) where line.starts(with: "## ".utf8) {
            let title = Substring(line.dropFirst(3))
            guard let dot = title.firstIndex(of: "."), let n = Int(title[..<dot]) else { continue }
            sections[n] = String(title)
        }
        return (path, sections)
    }()

    /// A heading's anchor as GitHub and most Markdown viewers make it.
    static func anchor(_ heading: String) -> String {
        String(heading.lowercased().compactMap { c -> Character? in c == " " ? "-" : (c.isLetter || c.isNumber || c == "-" || c == "_") ? c : nil })
    }

    /// Section `n` of docs/sources.md: its title, and a link to it where the file is found.
    static func section(_ n: Int) -> (title: String, href: String?) {
        guard let sources, let heading = sources.sections[n] else { return ("docs/sources.md §\(n)", nil) }
        return ("§" + heading, URL(fileURLWithPath: sources.path).absoluteString + "#" + anchor(heading))
    }

    var assumptionsMarkdown: String {
        var s = "| what the numbers rest on | where docs/sources.md says why |\n| --- | --- |\n"
        for (what, sections) in Self.assumptions {
            let links = sections.map { n in
                let (title, href) = Self.section(n)
                return href.map { "[\(Quoting.markdown(title))](<\($0)>)" } ?? Quoting.markdown(title)
            }
            s += "| \(Quoting.markdown(what)) | \(links.joined(separator: "; ")) |\n"
        }
        return s
    }

    var assumptionsHTML: String {
        var s = "<table><thead><tr><th>what the numbers rest on</th><th>where docs/sources.md says why</th></tr></thead><tbody>\n"
        for (what, sections) in Self.assumptions {
            let links = sections.map { n in
                let (title, href) = Self.section(n)
                return href.map { "<a href=\"\(Quoting.html($0))\">\(Quoting.html(title))</a>" } ?? Quoting.html(title)
            }
            s += "<tr><td>\(Quoting.html(what))</td><td>\(links.joined(separator: "<br>"))</td></tr>\n"
        }
        return s + "</tbody></table>\n"
    }

    // MARK: - Charts (HTML)

    /// Runs a day by hour, one bar chart per policy and identifier.
    func hourChart(_ policy: String, _ id: String) -> String {
        let values = (0..<24).map { h in row(policy, id, "runs_per_day_at:\(h < 10 ? "0" : "")\(h)")?.mean ?? 0 }
        let top = max(values.max() ?? 0, 1e-9)
        let w = 24 * 22 + 60, h = 160
        var s = "<svg class=\"chart\" width=\"\(w)\" height=\"\(h)\" role=\"img\"><title>\(Quoting.html("\(id) under \(policy): runs a day by hour"))</title>"
        for (k, v) in values.enumerated() {
            let bh = 110 * v / top
            let x = 50 + k * 22
            s +=
                "<rect x=\"\(x)\" y=\"\(SVG.c(120 - bh))\" width=\"18\" height=\"\(SVG.c(bh))\" fill=\"#4e79a7\"><title>\(k):00 \(Self.n(v)) a day</title></rect>"
            if k % 3 == 0 { s += "<text x=\"\(x + 9)\" y=\"138\" text-anchor=\"middle\" font-size=\"11\">\(k)h</text>" }
        }
        s +=
            "<text x=\"45\" y=\"14\" text-anchor=\"end\" font-size=\"11\">\(Self.n(top))</text><text x=\"45\" y=\"120\" text-anchor=\"end\" font-size=\"11\">0</text>"
        s += "<text x=\"50\" y=\"155\" font-size=\"11\">runs a day in each hour (mean over people)</text></svg>"
        return s
    }

    // MARK: - The page

    var intro: String {
        let setup = forecast.setup
        var s = "The app profile \(setup.appFile) placed on "
        s += isFleet ? "the \(people) people of \(setup.baseFile)" : "\(people) simulated runs of one person"
        s += ", \(Self.n(days)) days each, under \(policies.joined(separator: " and ")). Each number is across people: the median and, in brackets, "
        s += "the 10th to 90th percentiles. The sweep's changes run on the first \(forecast.variants.first { $0.name != "base" }?.people.count ?? 0) people, "
        s += "each compared with the same person as they are (a paired difference)."
        return s
    }

    /// `forecast.md`.
    package var markdown: String {
        var s = "# Forecast: \(Quoting.markdown(appName))\n\n" + Quoting.markdown(intro) + "\n\n"
        s += Quoting.markdownBlock(answer, info: "text") + "\n"
        s += "## How often and at what cost\n\n" + mainTable.markdown + "\n"
        if !forecast.ranges.isEmpty {
            s += "## Over the assumptions\n\n" + Quoting.markdown(rangeIntro) + "\n\n" + rangeTable.markdown + "\n"
        }
        s += "## Expirations and why (per day, mean over people)\n\n" + expirationTable.markdown + "\n"
        s += "## When it runs (runs a day in each hour, mean over people)\n\n"
        var hours = Table(header: ["policy", "task"] + (0..<24).map { "\($0)h" }, rows: [])
        for policy in policies {
            for (id, _) in forecast.identifiers where row(policy, id, "runs_per_day") != nil {
                hours.rows.append([policy, id] + (0..<24).map { h in Self.n(row(policy, id, "runs_per_day_at:\(h < 10 ? "0" : "")\(h)")?.mean ?? 0) })
            }
        }
        s += hours.markdown + "\n"
        s += "## What held it\n\nEach gate the system enforces and each rule of the policy that held a request, by its share of the time requests waited.\n\n"
        s += heldTable.markdown + "\n"
        if forecast.variants.contains(where: { $0.name != "base" }) {
            s += "## How it changes\n\n" + sweepTable.markdown + "\n"
            if !skipped.isEmpty { s += Quoting.markdown(skipped) + "\n\n" }
        }
        if isFleet {
            let nobody = nobodyTable
            s += "## Who gets nothing\n\n" + (nobody.rows.isEmpty ? Self.everyoneRuns + "\n\n" : nobody.markdown + "\n")
        }
        for (policy, replication, records, _) in forecast.typical {
            s += "## A week on a typical phone (\(Quoting.markdown(policy)), person \(replication))\n\n"
            s += "The person whose runs a day of the first task are nearest the median. Start times of each run, and what the requests waited for.\n\n"
            s += weekText(records: records).markdown + "\n"
        }
        s += "## What these numbers rest on\n\n" + assumptionsMarkdown
        return s
    }

    /// `forecast.html`.
    package var html: String {
        var s = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
            <title>Forecast: \(Quoting.html(appName))</title>
            <style>body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse;font-size:13px;margin:1em 0}
            td,th{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}th{background:#f4f4f4}pre{background:#f8f8f8;padding:1em;white-space:pre-wrap}
            .key{margin-right:1em;font-size:12px}.swatch{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle}
            .wide{overflow-x:auto}</style></head><body>

            """
        s += "<h1>Forecast: \(Quoting.html(appName))</h1>\n<p>\(Quoting.html(intro))</p>\n<pre>\(Quoting.html(answer))</pre>\n"
        s += "<h2>How often and at what cost</h2>\n<div class=\"wide\">" + mainTable.html + "</div>\n"
        if !forecast.ranges.isEmpty {
            s += "<h2>Over the assumptions</h2>\n<p>\(Quoting.html(rangeIntro))</p>\n" + rangeTable.html
            for policy in policies {
                for (id, _) in forecast.identifiers {
                    let chart = rangeChart(policy, id)
                    if !chart.isEmpty { s += "<h3>\(Quoting.html(id)) under \(Quoting.html(policy))</h3>\n" + chart + "\n" }
                }
            }
        }
        s += "<h2>Expirations and why (per day, mean over people)</h2>\n" + expirationTable.html
        s += "<h2>When it runs</h2>\n"
        for policy in policies {
            for (id, _) in forecast.identifiers where row(policy, id, "runs_per_day") != nil {
                s += "<h3>\(Quoting.html(id)) under \(Quoting.html(policy))</h3>\n" + hourChart(policy, id) + "\n"
            }
        }
        s +=
            "<h2>What held it</h2>\n<p>Each gate the system enforces and each rule of the policy that held a request, by its share of the time requests waited.</p>\n"
        s += heldTable.html
        if forecast.variants.contains(where: { $0.name != "base" }) {
            s += "<h2>How it changes</h2>\n" + sweepTable.html
            if !skipped.isEmpty { s += "<p>" + Quoting.html(skipped) + "</p>\n" }
        }
        if isFleet {
            let nobody = nobodyTable
            s += "<h2>Who gets nothing</h2>\n" + (nobody.rows.isEmpty ? "<p>\(Self.everyoneRuns)</p>\n" : nobody.html)
        }
        for (policy, replication, records, holds) in forecast.typical {
            s += "<h2>A week on a typical phone (\(Quoting.html(policy)), person \(replication))</h2>\n"
            s += "<p>Each bar is a request waiting, each stretch coloured by the gate or the policy's rule that held it then; each black mark a run.</p>\n"
            let (svg, legend) = weekChart(policy, replication: replication, records: records, holds: holds)
            s += "<div class=\"wide\">" + svg + "</div>\n<p>" + legend.joined(separator: " ") + "</p>\n"
        }
        s += "<h2>What these numbers rest on</h2>\n" + assumptionsHTML + "</body></html>\n"
        return s
    }
}
