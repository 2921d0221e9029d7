import Experiments
import Foundation
import ResultFiles
import ScenarioFiles
import Scheduling
import SimEngine
import SimRandom

/// What `bgsim report` draws beyond the result files' own content.
package struct ReportOptions: Sendable {
    /// The replication the timeline shows.
    package var replication = 0
    /// The day of that replication the timeline shows, from 0; `nil`: a typical day
    /// (`Report.typicalDay`).
    package var day: Int?
    /// For a sweep, the point whose phone the timeline shows; `nil`: a typical point
    /// (`Report.typicalPoint`).
    package var point: Int?
    /// Options that show `day` of `replication` (of `point` in a sweep), each chosen when `nil`.
    package init(replication: Int = 0, day: Int? = nil, point: Int? = nil) {
        self.replication = replication
        self.day = day
        self.point = point
    }
}

/// The comparison report: one self-contained HTML page (inline SVG and CSS; no script, no
/// request) and a Markdown summary, built from a results folder.
///
/// Every interval is a 95% Student-t interval over replications. For a sweep, a replication's
/// value for a policy is its mean over the points in question (all points for the table, the
/// points at one value of a parameter for a line), so replications stay the independent
/// observations and common random numbers carry over.
package struct Report {
    let results: ResultSet
    let options: ReportOptions
    /// The scenario rebuilt from the manifest (for a sweep, the chosen point's), for the
    /// timeline and to know which policies are bounds; `nil` if it could not be rebuilt.
    let scenario: Scenario?
    /// Why there is no scenario.
    package let scenarioProblem: String?
    /// runs.csv's row numbers by policy, made once: each interval reads one policy's rows
    /// rather than every row, which made a report quadratic in its policies.
    let policyRows: [String: [Int]]
    /// Whether each of the scenario's policies is a bound, not deployable.
    let bounds: [String: Bool]
    /// The sweep's point the timeline and scenario show (0 for a run), and how it was chosen.
    let point: Int
    let pointChosen: Bool

    struct Column: Sendable {
        var metric: String
        var title: String
        var format: @Sendable (Double) -> String
        /// Seconds, drawn on duration ticks.
        var isDuration: Bool { metric.hasSuffix("_s") }
        init(_ metric: String, _ title: String, _ format: @escaping @Sendable (Double) -> String) {
            self.metric = metric
            self.title = title
            self.format = format
        }
    }

    /// The table's columns: metric, heading, format.
    static let columns: [Column] = [
        Column("completed_pct", "completed %", { String(format: "%.1f", $0) }),
        Column("latency_p50_s", "start latency p50", SVG.duration),
        Column("latency_p90_s", "start latency p90", SVG.duration),
        Column("background_energy_j", "background energy J", { String(format: "%.0f", $0) }),
        Column("background_battery_energy_j", "from battery J", { String(format: "%.0f", $0) }),
        Column("wasted_energy_j", "wasted J", { String(format: "%.1f", $0) }),
        Column("staleness_mean_s", "staleness", SVG.duration),
        Column("fresh_launches_pct", "fresh launches %", { String(format: "%.1f", $0) }),
        Column("refreshes_seen_pct", "refreshes seen %", { String(format: "%.1f", $0) }),
        Column("min_charge_pct", "min charge %", { String(format: "%.1f", $0) }),
    ]

    /// The sweep charts' metrics.
    static let sweepMetrics: [Column] = [
        Column("background_energy_j", "background energy (J)", SVG.number),
        Column("latency_mean_s", "mean start latency", SVG.duration),
        Column("staleness_mean_s", "mean staleness", SVG.duration),
        Column("fresh_launches_pct", "fresh launches (%)", SVG.number),
    ]

    /// The report of `results`.
    package init(_ results: ResultSet, options: ReportOptions = ReportOptions()) {
        self.results = results
        self.options = options
        var rows: [String: [Int]] = [:]
        if let p = results.runs.column("policy") {
            for (i, row) in results.runs.rows.enumerated() { rows[row[p], default: []].append(i) }
        }
        policyRows = rows
        pointChosen = options.point == nil && results.kind == "sweep"
        point = options.point ?? (results.kind == "sweep" ? Self.typicalPoint(results) : 0)
        // JSON is YAML: the manifest's resolved scenario reads back as a scenario file.
        do {
            scenario = try results.scenario(atPoint: point)
            scenarioProblem = nil
        } catch {
            scenario = nil
            scenarioProblem = error.description
        }
        bounds = Dictionary((scenario?.policies ?? []).map { ($0.name, $0.isBound) }) { first, _ in first }
    }

    /// For a sweep, "at point 3 (charging=top-up)": the point the timeline and the scenario
    /// section show.
    var pointPhrase: String {
        guard results.kind == "sweep" else { return "" }
        let values = results.pointValues()
        let p = point
        guard p < values.count, values[p].count == results.parameters.count else { return " at point \(p)" }
        return " at point \(p) (" + zip(results.parameters, values[p]).map { "\($0)=\($1)" }.joined(separator: ", ") + ")"
    }

    // MARK: - Numbers

    func isBound(_ policy: String) -> Bool {
        bounds[policy] ?? (policy == "oracle")
    }

    /// Per replication, the mean of `metric` over the rows of `policy` that `keep` accepts,
    /// then the interval over replications.
    func interval(_ metric: String, policy: String, where keep: ([String]) -> Bool = { _ in true }) -> ConfidenceInterval {
        interval(metric, rows: (policyRows[policy] ?? []).filter { keep(results.runs.rows[$0]) })
    }

    /// The same over the rows numbered `rows` of runs.csv.
    func interval(_ metric: String, rows: [Int]) -> ConfidenceInterval {
        let means = replicationMeans(metric, rows: rows)
        return ConfidenceInterval(means.keys.sorted().map { means[$0]! })
    }

    /// Per replication, the mean of `metric` over the rows numbered `rows` that have a value.
    func replicationMeans(_ metric: String, rows: [Int]) -> [Int: Double] {
        guard let m = results.runs.column(metric), let r = results.runs.column("replication") else { return [:] }
        var sums: [Int: (Double, Int)] = [:]
        for i in rows {
            let row = results.runs.rows[i]
            guard let v = Double(row[m]), v.isFinite, let rep = Int(row[r]) else { continue }
            let (s, n) = sums[rep] ?? (0, 0)
            sums[rep] = (s + v, n + 1)
        }
        return sums.mapValues { $0.0 / Double($0.1) }
    }

    /// Each mechanism's share of the background energy per policy (ratio of the means), for
    /// the kinds that used any; empty for result files without the per-kind columns.
    func mechanismTable(_ policies: [String], _ colors: [String]) -> String {
        let kinds = TaskKind.allCases.filter { kind in
            policies.contains { interval("background_energy_\(kind.rawValue)_j", policy: $0).mean > 0 }
        }
        guard !kinds.isEmpty else { return "" }
        var s = "<h3>Background energy by mechanism</h3><p class=\"note\">Share of each policy's mean background energy, in percent.</p>"
        s +=
            "<table class=\"cmp\"><thead><tr><th>policy</th>" + kinds.map { "<th>\(Quoting.html(ComparisonTable.shortName($0)))</th>" }.joined()
            + "</tr></thead><tbody>"
        for (i, p) in policies.enumerated() {
            let total = interval("background_energy_j", policy: p).mean
            s += "<tr><th><span class=\"sw\" style=\"background:\(colors[i])\"></span>\(Quoting.html(p))</th>"
            for kind in kinds {
                let part = interval("background_energy_\(kind.rawValue)_j", policy: p).mean
                s += "<td>" + Quoting.html(ComparisonTable.percent(part, of: total) ?? "–") + "</td>"
            }
            s += "</tr>"
        }
        return s + "</tbody></table>"
    }

    /// Row numbers of runs.csv by policy and value of `column`: a sweep's lines in one pass,
    /// not one scan of all rows per point (10,000 rows of 500 points would take seconds).
    func rowsByPolicyAndValue(_ column: Int) -> [String: [String: [Int]]] {
        guard let p = results.runs.column("policy") else { return [:] }
        var out: [String: [String: [Int]]] = [:]
        for (i, row) in results.runs.rows.enumerated() { out[row[p], default: [:]][row[column], default: []].append(i) }
        return out
    }

    func better(_ metric: String) -> Metric.Better {
        RunMetrics.columns.first { $0.name == metric }?.better ?? .neither
    }

    /// For each column, the policies (indices) with the best mean among the deployable ones.
    func best(_ intervals: [[ConfidenceInterval]]) -> [Set<Int>] {
        Self.columns.indices.map { c in
            ComparisonTable.bestIndices(
                means: intervals.map { $0[c].mean }, ranked: results.policies.map { !isBound($0) },
                better: better(Self.columns[c].metric))
        }
    }

    /// The columns of tasks.csv the report reads (`latencies`).
    static let taskColumns: Set<String> = ["policy", "kind", "latency_s"]

    /// Start latencies of started scheduled tasks (refresh, processing, legacy fetch), per
    /// policy, sorted.
    func latencies() -> [[Double]]? {
        guard let tasks = results.tasks, let p = tasks.column("policy"), let l = tasks.column("latency_s"),
            let k = tasks.column("kind")
        else { return nil }
        var byPolicy = Dictionary(uniqueKeysWithValues: results.policies.map { ($0, [Double]()) })
        let scheduled = Set(TaskKind.allCases.filter(\.isScheduled).map(\.rawValue))
        for row in tasks.rows where scheduled.contains(row[k]) {
            if let v = Double(row[l]) { byPolicy[row[p]]?.append(v) }
        }
        return results.policies.map { byPolicy[$0]!.sorted() }
    }

    /// A parameter's values in point order, and whether they are all numbers (durations in seconds).
    func parameterValues(_ name: String) -> (labels: [String], numbers: [Double]?) {
        guard let c = results.runs.column(name) else { return ([], nil) }
        var seen: [String] = [], set = Set<String>()
        for row in results.runs.rows where set.insert(row[c]).inserted { seen.append(row[c]) }
        let numbers = seen.map { Double($0) ?? Scenario.duration($0).map(\.seconds) }
        return numbers.allSatisfy { $0 != nil } ? (seen, numbers.map { $0! }) : (seen, nil)
    }

    // MARK: - HTML

    /// The self-contained HTML page: inline SVG and CSS, no script, font or request.
    package func html() throws -> String {
        let r = results
        let policies = r.policies
        let colors = Palette.colors(policies)
        var body = ""
        let what =
            r.kind == "sweep"
            ? "sweep over \(r.parameters.joined(separator: ", ")) (\(pointCount) point\(pointCount == 1 ? "" : "s"))"
            : "run"
        body += "<header><h1>\(Quoting.html(title)): policy comparison</h1>"
        if title != r.scenarioName { body += "<p class=\"meta\">study \(Quoting.html(r.scenarioName))</p>" }
        body +=
            "<p class=\"meta\">\(Quoting.html(what)) · \(r.replications) replication\(r.replications == 1 ? "" : "s") · seed \(Quoting.html(r.seed)) · policies \(Quoting.html(policies.joined(separator: ", ")))</p>"
        if !r.commandLine.isEmpty {
            body += "<p class=\"meta\">reproduce: <code>\(Quoting.html(Quoting.shellCommand(r.commandLine)))</code></p>"
        }
        if let program = r.program { body += "<p class=\"meta\">\(Quoting.html(program))</p>" }
        if let precision = r.precision { body += "<p class=\"meta\">\(Quoting.html(precision))</p>" }
        body += "</header>"

        // The table.
        let intervals = policies.map { p in Self.columns.map { interval($0.metric, policy: p) } }
        let bestColumn = best(intervals)
        body += "<section><h2>Comparison</h2><p class=\"note\">Mean ± half-width of the 95% confidence interval over replications"
        body += r.kind == "sweep" ? " (each replication averaged over all points)" : ""
        body += "; ★ best among deployable policies (bounds such as the oracle are shown, not ranked).</p>"
        body += "<table class=\"cmp\"><thead><tr><th>policy</th>" + Self.columns.map { "<th>\(Quoting.html($0.title))</th>" }.joined() + "</tr></thead><tbody>"
        for (i, p) in policies.enumerated() {
            body += "<tr><th><span class=\"sw\" style=\"background:\(colors[i])\"></span>\(Quoting.html(p))\(isBound(p) ? " <small>(bound)</small>" : "")</th>"
            for (c, column) in Self.columns.enumerated() {
                let ci = intervals[i][c]
                var cell = column.format(ci.mean)
                if !ci.mean.isFinite { cell = "–" }
                let isBest = bestColumn[c].contains(i)
                if isBest { cell += " ★" }
                if ci.halfWidth.isFinite { cell += " <small>± \(Quoting.html(column.format(ci.halfWidth)))</small>" }
                body += "<td\(isBest ? " class=\"best\"" : "")>\(cell)</td>"
            }
            body += "</tr>"
        }
        body += "</tbody></table>"
        body += mechanismTable(policies, colors)
        body += "</section>"
        body += pairedSection(colors: colors)
        body += sensitivitySection()

        // Bars.
        body += "<section><h2>Energy, latency, staleness</h2><div class=\"grid\">"
        let barCharts: [(Column, String)] = [
            (Column("background_energy_j", "Background energy", SVG.number), "joules per phone"),
            (Column("latency_mean_s", "Mean start latency", SVG.duration), "time from earliest begin to start"),
            (Column("staleness_mean_s", "Mean staleness at launch", SVG.duration), "age of content when opened"),
        ]
        for (k, (column, unit)) in barCharts.enumerated() {
            let (metric, title, format) = (column.metric, column.title, column.format)
            let cis = policies.map { interval(metric, policy: $0) }
            let best = ComparisonTable.bestIndices(means: cis.map(\.mean), ranked: policies.map { !isBound($0) }, better: better(metric))
            body += SVG.bars(
                id: "bars-\(k)", title: title, unit: unit,
                rows: policies.indices.map {
                    SVG.Bar(
                        label: policies[$0], color: colors[$0], interval: cis[$0],
                        best: best.contains($0), bound: isBound(policies[$0]))
                },
                format: format, durations: column.isDuration)
        }
        body += "</div></section>"

        // CDF and Pareto scatter.
        body += "<section><h2>Distribution and trade-off</h2><div class=\"grid\">"
        if let lat = latencies() {
            body += SVG.cdf(
                id: "cdf", title: "Start latency of refresh, processing and fetch tasks (all replications)",
                xLabel: "start latency",
                series: policies.indices.map { SVG.Series(label: policies[$0], color: colors[$0], values: lat[$0]) })
        } else {
            body +=
                "<p class=\"note\">No latency distribution: this study did not write tasks.csv (it ran with --no-tasks, or is a fleet run without --tasks).</p>"
        }
        let energy = policies.map { interval("background_energy_j", policy: $0) }
        let stale = policies.map { interval("staleness_mean_s", policy: $0) }
        // The front among deployable policies: a bound is drawn but neither on it nor beating it.
        let front = SVG.paretoFront(policies.indices.map { isBound(policies[$0]) ? (.nan, .nan) : (energy[$0].mean, stale[$0].mean) })
        body += SVG.scatter(
            id: "pareto", title: "Background energy against staleness (lower is better on both)",
            xLabel: "background energy (J)", yLabel: "mean staleness at launch",
            points: policies.indices.map {
                SVG.Point(
                    label: policies[$0], color: colors[$0], x: energy[$0], y: stale[$0],
                    bound: isBound(policies[$0]))
            },
            front: front, xFormat: SVG.number, yFormat: SVG.duration, yDurations: true)
        body += "</div></section>"

        if !r.fleet.isEmpty { body += peopleSection(colors: colors) }
        body += appsSection()
        if r.kind == "sweep" { body += sweepSection(colors: colors) }
        body += try timelineSection(colors: colors)
        body += scenarioSection()
        return Self.page(title: "\(title): policy comparison", body: body)
    }

    /// The heading's name: the study's, cut at 48 characters. A variant's name carries its
    /// overrides (`default_duration-2h_policies-eager-name-ios-label-...`), and a heading of a
    /// hundred characters is no heading; the full name follows it.
    var title: String {
        let name = results.scenarioName
        return name.count <= 48 ? name : String(name.prefix(46)) + "…"
    }

    var pointCount: Int {
        guard let c = results.runs.column("point") else { return 1 }
        return Set(results.runs.rows.map { $0[c] }).count
    }

    func timelineSection(colors: [String]) throws -> String {
        var s = "<section><h2>One phone, one day</h2>"
        guard let scenario else {
            return s + "<p class=\"note\">No timeline: \(Quoting.html(scenarioProblem ?? "no scenario")).</p></section>"
        }
        let days = Int((scenario.setup.duration.seconds / 86_400).rounded(.up))
        let (day, why) =
            try options.day.map { (min(max($0, 0), max(days - 1, 0)), "") }
            ?? typicalDay(scenario, days: days)
        let from = SimInstant.after(.days(Int64(day)))
        let to = min(from + .days(1), SimInstant.after(scenario.setup.duration))
        s +=
            "<p class=\"note\" id=\"timeline-day\">Replication \(options.replication), day \(day) of days 0 to \(days - 1)\((to - from) < .days(1) ? " (its first \(SVG.duration((to - from).seconds)))" : "")\(Quoting.html(pointPhrase))"
        if !why.isEmpty || pointChosen {
            s += " — chosen as typical"
            if !why.isEmpty { s += ": \(Quoting.html(why))" }
            if pointChosen { s += "; the point is the one whose spread between policies is the median of the points'" }
            s += " (<code>bgsim report --day N\(pointChosen ? " --point P" : "")</code> shows another)"
        }
        s += ". Re-simulated from the manifest's scenario"
        s +=
            ": the same world under every policy (common random numbers), so differences are the policy's. Lanes: battery level, charger, network, screen (the app in use), then each app's state with its task runs as bars, one colour per kind (refresh blue, processing green, finite-length pink, fetch light blue, silent push vermilion, background transfer orange, region yellow, audio purple, location dark green, VoIP magenta, Bluetooth dark blue, redo red). A thin strip under an app's runs is a request waiting, coloured by what held it then (a gate, or the policy's rule), as battery-historian shows pending jobs. Hover for details.</p>"
        let apps = scenario.setup.apps.map(\.name)
        let colors = Palette.colors(scenario.policies.map(\.name))
        for (i, policy) in scenario.policies.enumerated() {
            let trace = try Experiment.trace(scenario, policy: policy, replication: options.replication, window: from..<to)
            s += Timeline.svg(id: "timeline-\(i)", policy: policy.name, color: colors[i], trace: trace, apps: apps, from: from, to: to)
        }
        return s + "</section>"
    }

    func scenarioSection() -> String {
        // The point the timeline shows (point 0's is the manifest's own).
        let resolved =
            point == 0
            ? results.resolvedScenario
            : scenario.flatMap { try? JSONSerialization.jsonObject(with: Data($0.resolvedJSON.utf8)) }
        guard let resolved, let data = try? JSONSerialization.data(withJSONObject: resolved, options: [.prettyPrinted, .sortedKeys]) else { return "" }
        var s = "<section><h2>Scenario</h2><p class=\"note\">As resolved (profiles expanded, overrides applied)"
        s += results.kind == "sweep" ? Quoting.html(pointPhrase) + "; the swept parameters vary from point to point." : "."
        s += "</p><details><summary>resolved scenario</summary><pre>\(Quoting.html(String(decoding: data, as: UTF8.self)))</pre></details></section>"
        return s
    }

    static func page(title: String, body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8">
        <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(Quoting.html(title))</title>
        <style>
        body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d1d1f;margin:24px auto;max-width:1340px;padding:0 16px;background:#fff}
        h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}h3{font-size:15px;margin:16px 0 4px}
        .meta,.note{color:#555;margin:2px 0}.note{font-size:13px;max-width:1000px}code{font-size:12px;background:#f4f4f6;padding:1px 4px;border-radius:3px}
        table.cmp{border-collapse:collapse;margin:8px 0;font-variant-numeric:tabular-nums}table{max-width:100%}
        .cmp th,.cmp td{padding:4px 8px;border-bottom:1px solid #e5e5e5;text-align:right;white-space:nowrap}.cmp thead th{font-size:12px;color:#555;vertical-align:bottom;white-space:normal;max-width:96px}
        .cmp tbody th{text-align:left}.cmp td.best{font-weight:700;background:#eef6ee}.cmp small{color:#777;font-weight:400;display:block;font-size:11px}
        .sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px}
        .grid{display:flex;flex-wrap:wrap;gap:12px 24px}
        svg.chart{font-size:11px;max-width:100%;height:auto;overflow:visible}
        .ctitle{font-size:13px;font-weight:600}.tick{fill:#555}.label{fill:#333;font-size:12px}.best{font-weight:700}
        .grid line.grid,line.grid{stroke:#eee}.axis{stroke:#888}.whisker{stroke:#222;stroke-width:1.3}
        .front{fill:none;stroke:#999;stroke-dasharray:5 4;stroke-width:1.5}.zero{stroke:#333;stroke-width:1.2;stroke-dasharray:3 3}
        .wide{max-width:100%;overflow-x:auto}.wide td:nth-child(-n+2){white-space:nowrap}details{margin:6px 0}pre{background:#f7f7f9;padding:10px;font-size:12px;max-height:520px;overflow:auto}
        </style></head><body>
        \(body)
        <footer class="note"><p>Written by bgsim \(Manifest.toolVersion) report. Self-contained: no scripts, fonts or requests.</p></footer>
        </body></html>

        """
    }
}
