import Foundation

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
        var rows: [[String]] = []
        var row: [String] = []
        var field: [UInt8] = []
        var quoted = false, afterQuote = false
        var bytes = Array(text.utf8)
        if bytes.last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
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
                row.append(String(decoding: field, as: UTF8.self))
                field.removeAll(keepingCapacity: true)
                afterQuote = false
            } else if b == UInt8(ascii: "\n") {
                row.append(String(decoding: field, as: UTF8.self))
                field.removeAll(keepingCapacity: true)
                afterQuote = false
                if !(row.count == 1 && row[0].isEmpty) { rows.append(row) }
                row = []
            } else if b != UInt8(ascii: "\r") {
                field.append(b)
            }
            i += 1
        }
        if quoted { throw ReportError("\(file): a quoted field is not closed") }
        guard let header = rows.first else { throw ReportError("\(file): empty (expected a header row)") }
        let body = Array(rows.dropFirst())
        for (n, r) in body.enumerated() where r.count != header.count {
            throw ReportError("\(file): row \(n + 2) has \(r.count) fields, the header has \(header.count)")
        }
        return CSVTable(header: header, rows: body)
    }

    static func read(_ url: URL) throws(ReportError) -> CSVTable {
        let text: String
        do { text = try String(contentsOf: url, encoding: .utf8) } catch {
            throw ReportError("\(url.path): cannot be read (\(error.localizedDescription))")
        }
        return try parse(text, file: url.path)
    }
}

/// Why a report could not be made: names the results folder or file and what was expected.
public struct ReportError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ message: String) { description = message }
}

/// The files of a finished run or sweep, read back for a report.
public struct ResultSet {
    public var folder: URL
    /// `run` or `sweep`.
    public var kind: String
    public var scenarioName: String
    public var policies: [String]
    public var baseline: String?
    /// The swept key paths, in order (none for a run).
    public var parameters: [String]
    public var replications: Int
    public var seed: String
    public var commandLine: [String]
    /// The resolved scenario (point 0's for a sweep), as the manifest holds it.
    public var resolvedScenario: Any?
    var runs: CSVTable
    var summary: CSVTable
    /// One row per task, when the study wrote them.
    var tasks: CSVTable?

    /// Reads `manifest.json`, `runs.csv` and `summary.csv` (and `tasks.csv` if present).
    public static func load(_ folder: String) throws(ReportError) -> ResultSet {
        let url = URL(fileURLWithPath: folder)
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDir), isDir.boolValue else {
            throw ReportError("\(folder): no such results folder (expected the --out folder of 'bgsim run' or 'bgsim sweep')")
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
            throw ReportError("\(manifestURL.path): kind '\(kind)': a report needs a finished run or sweep (merge shards first with 'bgsim merge')")
        }
        guard let policies = json["policies"] as? [String], !policies.isEmpty else {
            throw ReportError("\(manifestURL.path): key 'policies' missing or empty")
        }
        guard let replications = json["replications"] as? Int else {
            throw ReportError("\(manifestURL.path): key 'replications' missing or not an integer")
        }
        let runs = try CSVTable.read(url.appendingPathComponent("runs.csv"))
        let summary = try CSVTable.read(url.appendingPathComponent("summary.csv"))
        for (table, name, needed) in [(runs, "runs.csv", ["policy", "replication"]), (summary, "summary.csv", ["policy", "metric", "mean"])] {
            for column in needed where table.column(column) == nil {
                throw ReportError("\(url.appendingPathComponent(name).path): no '\(column)' column (is this a bgsim results folder?)")
            }
        }
        let tasksURL = url.appendingPathComponent("tasks.csv")
        let tasks = FileManager.default.fileExists(atPath: tasksURL.path) ? try CSVTable.read(tasksURL) : nil
        return ResultSet(
            folder: url, kind: kind, scenarioName: try string("scenario"), policies: policies,
            baseline: json["baseline"] as? String, parameters: json["parameters"] as? [String] ?? [],
            replications: replications, seed: (json["seed"] as? Int).map(String.init) ?? "\(json["seed"] ?? "")",
            commandLine: json["command_line"] as? [String] ?? [], resolvedScenario: json["resolved_scenario"],
            runs: runs, summary: summary, tasks: tasks)
    }

    /// A metric's values in runs.csv by row (NaN where empty).
    func runValues(_ metric: String) -> [Double]? {
        guard let c = runs.column(metric) else { return nil }
        return runs.rows.map { Double($0[c]) ?? .nan }
    }
}
