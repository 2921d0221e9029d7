import Experiments
import Foundation
import ResultFiles
import ScenarioFiles
import Scheduling

/// A CSV file read back: its header and rows of fields (RFC 4180 quoting), as the result
/// files are written.
struct CSVTable {
    var header: [String]
    var rows: [[String]]
    private var index: [String: Int]

    init(header: [String], rows: [[String]]) {
        self.header = header
        self.rows = rows
        index = Dictionary(header.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
    }

    func column(_ name: String) -> Int? { index[name] }

    /// Parses CSV text: fields separated by commas, rows by newlines, quoted fields may hold
    /// commas, quotes (doubled) and newlines.
    static func parse(_ text: String, file: String) throws(ReportError) -> CSVTable {
        var text = text
        return try text.withUTF8 { bytes in
            Result { () throws(ReportError) in try parse(bytes, file: file, columns: nil) }
        }.get()
    }

    /// The same from bytes; with `columns`, only those columns are kept (in the file's order;
    /// any not in the header are left out): the report needs three of tasks.csv's columns,
    /// and every field made a String took about eight times the file's size in memory.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>, file: String, columns: Set<String>?) throws(ReportError) -> CSVTable {
        var header: [String]?
        var keep: [Bool] = []
        var rows: [[String]] = []
        var row: [String] = []
        // Fields ended on this line, and whether the first was empty (a blank line is skipped).
        var fields = 0, firstEmpty = false
        var field: [UInt8] = []
        var quoted = false, afterQuote = false
        func endField() {
            if fields == 0 { firstEmpty = field.isEmpty }
            if header == nil || (fields < keep.count && keep[fields]) { row.append(String(decoding: field, as: UTF8.self)) }
            fields += 1
            field.removeAll(keepingCapacity: true)
            afterQuote = false
        }
        func endLine() throws(ReportError) {
            endField()
            defer { row = []; fields = 0 }
            if fields == 1 && firstEmpty { return }
            guard header != nil else {
                header = row
                keep = row.map { columns?.contains($0) ?? true }
                return
            }
            guard fields == keep.count else {
                throw ReportError("\(file): row \(rows.count + 2) has \(fields) fields, the header has \(keep.count)")
            }
            rows.append(row)
        }
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if quoted {
                if b == UInt8(ascii: "\"") {
                    if i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "\"") {
                        field.append(b)
                        i += 1
                    } else {
                        quoted = false
                        afterQuote = true
                    }
                } else {
                    field.append(b)
                }
            } else if b == UInt8(ascii: "\"") && field.isEmpty && !afterQuote {
                quoted = true
            } else if b == UInt8(ascii: ",") {
                endField()
            } else if b == UInt8(ascii: "\n") {
                try endLine()
            } else if b != UInt8(ascii: "\r") {
                field.append(b)
            }
            i += 1
        }
        if quoted { throw ReportError("\(file): a quoted field is not closed") }
        if bytes.last != UInt8(ascii: "\n") { try endLine() }
        guard let header else { throw ReportError("\(file): empty (expected a header row)") }
        return CSVTable(header: zip(header, keep).filter(\.1).map(\.0), rows: rows)
    }

    static func read(_ url: URL, columns: Set<String>? = nil) throws(ReportError) -> CSVTable {
        let data: Data
        do { data = try Data(contentsOf: url, options: .alwaysMapped) } catch {
            throw ReportError("\(url.path): cannot be read (\(error.localizedDescription))")
        }
        return try data.withUnsafeBytes { raw in
            Result { () throws(ReportError) in try parse(raw.bindMemory(to: UInt8.self), file: url.path, columns: columns) }
        }.get()
    }
}

/// Why a report could not be made: names the results folder or file and what was expected.
package struct ReportError: Error, CustomStringConvertible, Sendable {
    /// The message.
    package var description: String
    /// An error saying `message`, on one line (control characters from the files escaped).
    package init(_ message: String) { description = Quoting.message(message) }
}

/// The files of a finished run or sweep, read back for a report.
package struct ResultSet {
    /// The results folder.
    package var folder: URL
    /// `run` or `sweep`.
    package var kind: String
    /// The study's name (its scenario's or sweep's).
    package var scenarioName: String
    /// The policies' labels, in the study's order.
    package var policies: [String]
    /// The policy the comparisons are made against.
    package var baseline: String?
    /// The swept key paths, in order (none for a run).
    package var parameters: [String]
    /// The key paths drawn per person (replication) of a fleet; empty for one person.
    package var fleet: [String]
    /// Replications per policy (and point).
    package var replications: Int
    /// The master seed, as the manifest writes it.
    package var seed: String
    /// The command that reproduces the files.
    package var commandLine: [String]
    /// What `--precision` asked for and reached, when the study had a goal: the sentence the
    /// report prints, from the manifest's `precision` entry.
    package var precision: String?
    /// The program that made the files, its version and where each policy came from, as the
    /// report says it (from the manifest's `program`); `nil` in files from before it.
    package var program: String?
    /// The resolved scenario (point 0's for a sweep), as the manifest holds it.
    package var resolvedScenario: Any?
    /// The same as written, keys in document order (what the plan's digest covers), and
    /// for a sweep the sweep file as read.
    var resolvedScenarioText: String?
    var resolvedSweepText: String?
    /// The scenario file the study read (relative to the folder it ran in), where profiles
    /// named by a swept parameter are looked up again.
    var scenarioFile: String?
    /// `plan_sha256`: the digest of every point's values and resolved scenario.
    var planDigest: String?
    var runs: CSVTable
    /// One row per task, when the study wrote them: the columns the report draws from
    /// (`Report.taskColumns`).
    var tasks: CSVTable?
    /// A run's apps.csv, when written: the columns the report's per-app section reads.
    var apps: CSVTable?
    /// A morris sweep's sensitivity.csv (`bgsim sensitivity`), when written.
    var sensitivity: CSVTable?

    /// Reads `manifest.json` and `runs.csv`, and of `tasks.csv`, if present, the columns the
    /// report draws from. Nothing is drawn from `summary.csv` (the report's intervals are made
    /// from runs.csv, and equal summary.csv's for a run): read whole, a 20,000-point sweep's
    /// (152 MB) took the report to 1.2 GB.
    ///
    /// What is read is checked first, so that a report never draws damaged files as if they
    /// were results: each file the manifest lists has its size and SHA-256 (unless `verify` is
    /// false: `--no-verify`, for files edited on purpose), and runs.csv has rows, a number (or
    /// nothing) in every metric column, a replication the manifest has, and only the
    /// manifest's policies.
    package static func load(_ folder: String, verify: Bool = true) throws(ReportError) -> ResultSet {
        let url = URL(literalPath: folder)
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDir), isDir.boolValue else {
            throw ReportError("\(folder): no such results folder (expected the --out folder of '\(ProgramName.current) run' or '\(ProgramName.current) sweep')")
        }
        let manifestURL = url.appendingPathComponent("manifest.json")
        guard let data = FileManager.default.contents(atPath: manifestURL.path) else {
            throw ReportError("\(manifestURL.path): missing (expected the manifest a finished run or sweep writes)")
        }
        guard let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw ReportError("\(manifestURL.path): not a JSON object")
        }
        func string(_ key: String) throws(ReportError) -> String {
            guard let v = json[key] as? String else { throw ReportError("\(manifestURL.path): key '\(key)' missing or not a string") }
            return v
        }
        let kind = try string("kind")
        guard kind == "run" || kind == "sweep" else {
            throw ReportError(
                "\(manifestURL.path): kind '\(kind)': a report needs a finished run or sweep (merge shards first with '\(ProgramName.current) merge')")
        }
        guard let policies = json["policies"] as? [String], !policies.isEmpty else {
            throw ReportError("\(manifestURL.path): key 'policies' missing or empty")
        }
        // Counts size what the report makes: each is checked against bgsim's own limits first.
        guard let replications = json["replications"] as? Int, (1...1_000_000).contains(replications) else {
            throw ReportError("\(manifestURL.path): key 'replications' missing or not a whole number from 1 to 1000000")
        }
        let points = json["points"] as? Int ?? 1
        guard (1...SweepDesign.maxPoints).contains(points), kind == "sweep" || points == 1 else {
            throw ReportError("\(manifestURL.path): key 'points' is not a whole number from 1 to \(kind == "sweep" ? SweepDesign.maxPoints : 1)")
        }
        if verify { try checkDigests(json["files"], in: url, manifest: manifestURL.path) }
        let runs = try CSVTable.read(url.appendingPathComponent("runs.csv"))
        for (table, name, needed) in [(runs, "runs.csv", ["policy", "replication"])] {
            for column in needed where table.column(column) == nil {
                throw ReportError("\(url.appendingPathComponent(name).path): no '\(column)' column (is this a bgsim results folder?)")
            }
        }
        try checkRuns(runs, file: url.appendingPathComponent("runs.csv").path, policies: policies, replications: replications, points: points)
        let tasksURL = url.appendingPathComponent("tasks.csv")
        let tasks =
            FileManager.default.fileExists(atPath: tasksURL.path)
            ? try CSVTable.read(tasksURL, columns: Report.taskColumns) : nil
        let appsURL = url.appendingPathComponent("apps.csv")
        let apps =
            kind == "run" && FileManager.default.fileExists(atPath: appsURL.path)
            ? try CSVTable.read(appsURL, columns: Report.appColumns) : nil
        let sensitivityURL = url.appendingPathComponent("sensitivity.csv")
        let sensitivity =
            kind == "sweep" && FileManager.default.fileExists(atPath: sensitivityURL.path) ? try CSVTable.read(sensitivityURL) : nil
        return ResultSet(
            folder: url, kind: kind, scenarioName: try string("scenario"), policies: policies,
            baseline: json["baseline"] as? String, parameters: json["parameters"] as? [String] ?? [],
            fleet: json["fleet"] as? [String] ?? [],
            replications: replications, seed: (json["seed"] as? Int).map(String.init) ?? "\(json["seed"] ?? "")",
            commandLine: json["command_line"] as? [String] ?? [],
            precision: (json["precision"] as? [String: Any]).flatMap { Self.precisionSentence($0, replications: replications, kind: kind) },
            program: (json["program"] as? [String: Any]).flatMap(Self.programSentence),
            resolvedScenario: json["resolved_scenario"],
            resolvedScenarioText: rawValue(of: "resolved_scenario", in: data),
            resolvedSweepText: rawValue(of: "resolved_sweep", in: data), scenarioFile: json["scenario_file"] as? String,
            planDigest: json["plan_sha256"] as? String, runs: runs, tasks: tasks, apps: apps,
            sensitivity: sensitivity)
    }

    /// Each file the manifest lists that is present has its size and SHA-256; runs.csv must be.
    static func checkDigests(_ listed: Any?, in folder: URL, manifest: String) throws(ReportError) {
        guard let files = listed as? [[String: Any]], !files.isEmpty else {
            throw ReportError("\(manifest): no 'files' list to check the results against (give --no-verify to report anyway)")
        }
        for f in files {
            guard let name = f["name"] as? String, let sha = f["sha256"] as? String, !name.contains("/") else {
                throw ReportError("\(manifest): a 'files' entry without a plain name and sha256")
            }
            let path = folder.appendingPathComponent(name).path
            // A file left out on purpose (tasks.csv of a bundled dataset, which git does not
            // keep) is not a changed one: the report does without it. runs.csv it cannot.
            if name != "runs.csv" && !FileManager.default.fileExists(atPath: path) { continue }
            guard let (bytes, hex) = SHA256.file(at: path) else { throw ReportError("\(path): listed in the manifest but missing") }
            guard hex == sha, (f["bytes"] as? Int).map({ $0 == bytes }) ?? true else {
                throw ReportError(
                    "\(path) does not match its SHA-256 in the manifest: changed since bgsim wrote it (give --no-verify to report on it anyway)")
            }
        }
    }

    /// runs.csv as bgsim writes it: rows, and in them numbers where numbers go, replications
    /// and points the manifest has, and only its policies.
    static func checkRuns(_ runs: CSVTable, file: String, policies: [String], replications: Int, points: Int = 1) throws(ReportError) {
        guard !runs.rows.isEmpty else { throw ReportError("\(file): no rows (expected one per policy and replication)") }
        let known = Set(policies)
        let p = runs.column("policy")!, r = runs.column("replication")!, pc = runs.column("point")
        let metrics = RunMetrics.columns.compactMap { m in runs.column(m.name).map { (m.name, $0) } }
        for (k, row) in runs.rows.enumerated() {
            let line = k + 2
            guard known.contains(row[p]) else {
                throw ReportError("\(file): row \(line): policy '\(row[p])' is not one of the manifest's (\(policies.joined(separator: ", ")))")
            }
            guard let rep = Int(row[r]), (0..<replications).contains(rep) else {
                throw ReportError("\(file): row \(line): replication '\(row[r])': expected 0 to \(replications - 1)")
            }
            // A point sizes the arrays of points the report makes (`pointValues`).
            if let pc {
                guard let point = Int(row[pc]), (0..<points).contains(point) else {
                    throw ReportError("\(file): row \(line): point '\(row[pc])': expected 0 to \(points - 1)")
                }
            }
            for (name, c) in metrics where !row[c].isEmpty && Double(row[c]) == nil {
                throw ReportError("\(file): row \(line): column '\(name)': expected a number, got '\(row[c].prefix(40))'")
            }
        }
    }

    /// The manifest's `precision` entry in words: the goal, the metrics, and whether every
    /// policy (at every point of a sweep) reached it, with the worst relative half-width.
    /// "made by my-bgsim 0.1.0 (bgsim 0.3.0); policies: quiet-hours from QuietHoursPolicy
    /// 0.1.0" (the built-in policies are bgsim's).
    static func programSentence(_ p: [String: Any]) -> String? {
        guard let name = p["name"] as? String, let version = p["version"] as? String else { return nil }
        var s = "made by \(name) \(version)"
        if let core = p["bgsim_version"] as? String, name != "bgsim" { s += " (bgsim \(core))" }
        // The built-in policies come with bgsim; the others are named with their package.
        let policies = (p["policies"] as? [[String: Any]] ?? []).compactMap { o -> String? in
            guard let policy = o["policy"] as? String, let package = o["package"] as? String, let v = o["version"] as? String,
                package != "bgsim"
            else { return nil }
            return "\(policy) from \(package) \(v)"
        }
        if !policies.isEmpty { s += "; policies: " + policies.joined(separator: ", ") }
        return s
    }

    static func precisionSentence(_ p: [String: Any], replications: Int, kind: String) -> String? {
        guard let target = p["target_relative_half_width"] as? Double, let reached = p["reached"] as? Bool else { return nil }
        let metrics = (p["metrics"] as? [String] ?? []).joined(separator: ", ")
        let worst = (p["worst_relative_half_width"] as? Double).map { String(format: "%.3f", $0) } ?? "unbounded"
        let scope = kind == "sweep" ? "every policy at every point" : "every policy"
        return reached
            ? "Precision goal \(target) (relative 95% half-width) on \(metrics): reached by \(scope) with \(replications) replications (worst \(worst))."
            : "Precision goal \(target) (relative 95% half-width) on \(metrics): NOT reached within \(p["max_replications"] as? Int ?? replications) replications (worst \(worst)); intervals are wider than asked."
    }

    /// A manifest entry's value as written: the manifest puts each resolved document on one
    /// line of its own (`  "key": {...},`). A JSON parser keeps no key order, and the plan's
    /// digest covers the document's own.
    static func rawValue(of key: String, in manifest: Data) -> String? {
        let prefix = "  \"\(key)\": "
        for line in String(decoding: manifest, as: UTF8.self).split(separator: "\n") where line.hasPrefix(prefix) {
            var value = line.dropFirst(prefix.count)
            if value.hasSuffix(",") { value = value.dropLast() }
            return String(value)
        }
        return nil
    }

    /// The scenario a point ran, rebuilt from the manifest: point 0's resolved scenario as
    /// written, and for another point of a sweep, that scenario with the study's overrides
    /// set over it again in the order the sweep set them (the sweep file's `set`, the point's
    /// parameter values from runs.csv, the command line's `--set`), so a swept profile gets
    /// the settings the sweep made inside it. Profiles are looked up from the scenario file's
    /// folder, as when the study ran. The result is checked: every point rebuilt this way must
    /// give the plan's digest, or this says why the point cannot be shown.
    package func scenario(atPoint point: Int) throws(ReportError) -> Scenario {
        let manifest = folder.appendingPathComponent("manifest.json").path
        guard let text = resolvedScenarioText else { throw ReportError("the manifest has no resolved scenario") }
        let points = pointValues()
        guard point == 0 || (kind == "sweep" && point < points.count) else {
            throw ReportError(
                kind == "sweep"
                    ? "the sweep has points 0 to \(points.count - 1) (runs.csv), not \(point)"
                    : "a run has one point, 0; --point is for sweeps")
        }
        // A scenario's policies given by name are written out as mappings when it is read,
        // unless `policies` was set (as a sweep or --set sets it), so reading the resolved
        // scenario again would change them: they are set to what was written.
        let policies = Self.entries(of: text, keys: ["policies"], origin: manifest)
        guard point > 0 else {
            do { return try Scenario.parse(yaml: text, file: manifest, overrides: policies) } catch {
                throw ReportError("the manifest's resolved scenario could not be read back: \(error)")
            }
        }
        let sweepSet = resolvedSweepText.map { Self.entries(of: $0, under: "set", origin: "\(manifest): resolved_sweep.set") } ?? []
        var commandSet: [Override] = []
        for (k, word) in commandLine.enumerated() where word == "--set" && k + 1 < commandLine.count {
            if let o = Override(parsing: commandLine[k + 1]) { commandSet.append(o) }
        }
        let documents = DocumentCache()
        var rebuilt = PlanDigest(replications: replications)
        var shown: Scenario?
        for p in points.indices {
            let axes = zip(parameters, points[p]).map { path, value in
                Override(path: ConfigKeyPath(parsing: path) ?? ConfigKeyPath([.key(path)]), value: value, origin: "point \(p): \(path)=\(value)")
            }
            let scenario: Scenario
            do {
                scenario = try Scenario.parse(
                    yaml: text, file: scenarioFile ?? manifest, overrides: policies + sweepSet + axes + commandSet,
                    documents: documents)
            } catch {
                throw ReportError("point \(p) cannot be rebuilt from the manifest: \(error)")
            }
            if p == point { shown = scenario }
            rebuilt.add(values: points[p], resolvedJSON: scenario.resolvedJSON)
        }
        guard rebuilt.hex() == planDigest, let shown else {
            throw ReportError(
                "point \(point) cannot be rebuilt exactly from the manifest: its overrides set over point 0's "
                    + "scenario do not give the plan's digest (have the model files that \(scenarioFile ?? "the scenario") names changed "
                    + "since the study ran?)")
        }
        return shown
    }

    /// Overrides that set each of `keys` of a JSON document's top level to its value there,
    /// or (with `under`) each entry of one of its mappings.
    static func entries(of json: String, keys: [String]? = nil, under: String? = nil, origin: String) -> [Override] {
        guard let tree = try? ConfigNode.parse(yaml: json, file: origin), case .mapping(var pairs) = tree.value else { return [] }
        if let under {
            guard let node = pairs.first(where: { $0.key == under })?.value, case .mapping(let inner) = node.value else { return [] }
            pairs = inner
        }
        return pairs.compactMap { pair in
            guard keys?.contains(pair.key) ?? true, let path = ConfigKeyPath(parsing: pair.key) else { return nil }
            return Override(path: path, value: pair.value.canonicalJSON, origin: "\(origin): \(pair.key)")
        }
    }

    /// Each point's parameter values, by point number, from runs.csv.
    func pointValues() -> [[String]] {
        guard let pc = runs.column("point") else { return [[]] }
        let columns = parameters.compactMap(runs.column)
        var values: [Int: [String]] = [:]
        for row in runs.rows {
            guard let p = Int(row[pc]), values[p] == nil else { continue }
            values[p] = columns.map { row[$0] }
        }
        return (0..<(values.keys.max().map { $0 + 1 } ?? 1)).map { values[$0] ?? [] }
    }
}
