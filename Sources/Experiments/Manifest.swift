// swift-format-ignore-file: AllPublicDeclarationsHaveDocumentation

import Foundation

/// Minimal JSON text for the manifest: strings escaped per RFC 8259, keys in a fixed order.
enum JSON {
    static func string(_ s: String) -> String {
        var out = ""
        append(s, to: &out)
        return out
    }

    /// Appends `s` as a JSON string.
    static func append(_ s: String, to out: inout String) {
        var bytes: [UInt8] = []
        append(s, to: &bytes)
        out += String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `s` as a JSON string, in UTF-8. Text with nothing to escape (the usual case:
    /// names, numbers) is appended whole; in UTF-8 every byte of a multi-byte character is at
    /// least 0x80, so checking the bytes finds exactly the characters that need escaping, and
    /// the others are copied as they are.
    static func append(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out.append(contentsOf: s.utf8)
        } else {
            let hex = Array("0123456789abcdef".utf8)
            for b in s.utf8 {
                switch b {
                case UInt8(ascii: "\""): out.append(contentsOf: "\\\"".utf8)
                case UInt8(ascii: "\\"): out.append(contentsOf: "\\\\".utf8)
                case UInt8(ascii: "\n"): out.append(contentsOf: "\\n".utf8)
                case UInt8(ascii: "\r"): out.append(contentsOf: "\\r".utf8)
                case UInt8(ascii: "\t"): out.append(contentsOf: "\\t".utf8)
                case ..<0x20: out.append(contentsOf: "\\u00".utf8 + [hex[Int(b >> 4)], hex[Int(b & 15)]])
                default: out.append(b)
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// An object from (key, already-encoded value) pairs, one per line at `indent`.
    static func object(_ pairs: [(String, String)], indent: Int = 0) -> String {
        guard !pairs.isEmpty else { return "{}" }
        let pad = String(repeating: "  ", count: indent + 1)
        return "{\n" + pairs.map { pad + string($0.0) + ": " + $0.1 }.joined(separator: ",\n")
            + "\n" + String(repeating: "  ", count: indent) + "}"
    }

    static func array(_ items: [String]) -> String { "[" + items.joined(separator: ", ") + "]" }
}

extension ConfigNode {
    /// The tree as compact JSON, scalars as strings, keys in document order: the resolved
    /// scenario (profiles in place, overrides applied), whose SHA-256 identifies it.
    var canonicalJSON: String {
        var out: [UInt8] = []
        appendCanonicalJSON(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Written into one byte buffer: built by concatenating each level's pieces, the resolved
    /// reference scenario took a sixth of a short run's start; appended to a `String`, it was
    /// still a seventh of planning a sweep of many points (one resolved scenario per point).
    func appendCanonicalJSON(to out: inout [UInt8]) {
        switch value {
        case .scalar(let text, _):
            JSON.append(text, to: &out)
        case .mapping(let pairs):
            out.append(UInt8(ascii: "{"))
            for (k, pair) in pairs.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                JSON.append(pair.key, to: &out)
                out.append(UInt8(ascii: ":"))
                pair.value.appendCanonicalJSON(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        case .sequence(let items):
            out.append(UInt8(ascii: "["))
            for (k, item) in items.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                item.appendCanonicalJSON(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        }
    }
}

/// `manifest.json`: what produced a result folder, and the files that make it complete.
public struct Manifest: Sendable {
    public static let schemaVersion = 7
    public static let toolVersion = "0.3.0"

    public var plan: StudyPlan
    public var commandLine: [String]
    /// Replications per policy actually run (more than the scenario's with `--precision`).
    public var replications: Int
    /// The precision asked for and whether it was reached, if `--precision` was given.
    public var precision: PrecisionOutcome?

    public init(plan: StudyPlan, commandLine: [String], replications: Int, precision: PrecisionOutcome?) {
        self.plan = plan
        self.commandLine = commandLine
        self.replications = replications
        self.precision = precision
    }

    /// The keys every manifest starts with: what was run.
    func head(kind: String) -> [(String, String)] {
        let scenario = plan.first
        var pairs: [(String, String)] = [
            ("schema_version", String(Self.schemaVersion)),
            ("tool", JSON.string("bgsim")),
            ("tool_version", JSON.string(Self.toolVersion)),
            ("kind", JSON.string(kind)),
            ("command_line", JSON.array(commandLine.map(JSON.string))),
            ("scenario", JSON.string(plan.name)),
            ("scenario_file", JSON.string(scenario.file)),
            ("scenario_sha256", JSON.string(plan.points[0].scenarioDigest)),
            ("plan_sha256", JSON.string(plan.fingerprint)),
            ("points", String(plan.points.count)),
            ("parameters", JSON.array(plan.parameters.map(JSON.string))),
            ("seed", String(scenario.seed)),
            ("generator", JSON.string(scenario.generator.name)),
            ("replications", String(replications)),
            ("replication_numbers", JSON.string("0-\(replications - 1)")),
            ("policies", JSON.array(plan.policies.map { JSON.string($0.name) })),
            ("baseline", JSON.string(scenario.metrics.baseline)),
        ]
        if plan.isSweep {
            pairs.insert(contentsOf: [("sweep_file", JSON.string(plan.file)), ("design", JSON.string(plan.design ?? ""))], at: 5)
        }
        return pairs
    }

    /// The resolved inputs every manifest ends with: the scenario (for a sweep, point 0's)
    /// and the sweep file.
    var tail: [(String, String)] {
        var pairs = [("resolved_scenario", plan.first.resolvedJSON)]
        if let sweep = plan.sweepJSON { pairs.append(("resolved_sweep", sweep)) }
        return pairs
    }

    public func json(files: [(name: String, bytes: Int, sha256: String)]) -> String {
        var pairs = head(kind: plan.isSweep ? "sweep" : "run")
        if let p = precision {
            pairs.append(
                (
                    "precision",
                    JSON.object(
                        [
                            ("target_relative_half_width", CSVWriter.number(p.target)),
                            ("metrics", JSON.array(p.metrics.map(JSON.string))),
                            ("max_replications", String(p.maxReplications)),
                            ("reached", p.reached ? "true" : "false"),
                            ("worst_relative_half_width", CSVWriter.number(p.worst).isEmpty ? "null" : CSVWriter.number(p.worst)),
                        ], indent: 1)
                ))
        }
        pairs.append(("files", Self.fileList(files, indent: 1)))
        return JSON.object(pairs + tail) + "\n"
    }

    static func fileList(_ files: [(name: String, bytes: Int, sha256: String)], indent: Int) -> String {
        let pad = String(repeating: "  ", count: indent + 1)
        return "[\n"
            + files.map { f in
                pad + "{\"name\": \(JSON.string(f.name)), \"bytes\": \(f.bytes), \"sha256\": \(JSON.string(f.sha256))}"
            }.joined(separator: ",\n") + "\n" + String(repeating: "  ", count: indent) + "]"
    }
}
