import Foundation

/// Minimal JSON text for the manifest: strings escaped per RFC 8259, keys in a fixed order.
enum JSON {
    static func string(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where u.value < 0x20: out += String(format: "\\u%04x", u.value)
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
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
        switch value {
        case .scalar(let text, _): JSON.string(text)
        case .mapping(let pairs): "{" + pairs.map { JSON.string($0.key) + ":" + $0.value.canonicalJSON }.joined(separator: ",") + "}"
        case .sequence(let items): "[" + items.map(\.canonicalJSON).joined(separator: ",") + "]"
        }
    }
}

/// `manifest.json`: what produced a result folder, and the files that make it complete.
public struct Manifest: Sendable {
    public static let schemaVersion = 5
    public static let toolVersion = "0.2.0"

    public var scenario: Scenario
    public var commandLine: [String]
    /// Replications per policy actually run (more than the scenario's with `--precision`).
    public var replications: Int
    /// The precision asked for and whether it was reached, if `--precision` was given.
    public var precision: PrecisionOutcome?

    public init(scenario: Scenario, commandLine: [String], replications: Int, precision: PrecisionOutcome?) {
        self.scenario = scenario
        self.commandLine = commandLine
        self.replications = replications
        self.precision = precision
    }

    public func json(files: [(name: String, bytes: Int, sha256: String)]) -> String {
        var pairs: [(String, String)] = [
            ("schema_version", String(Self.schemaVersion)),
            ("tool", JSON.string("bgsim")),
            ("tool_version", JSON.string(Self.toolVersion)),
            ("command_line", JSON.array(commandLine.map(JSON.string))),
            ("scenario", JSON.string(scenario.name)),
            ("scenario_file", JSON.string(scenario.file)),
            ("scenario_sha256", JSON.string(SHA256.hex(scenario.resolvedJSON))),
            ("seed", String(scenario.seed)),
            ("generator", JSON.string(scenario.generator.name)),
            ("replications", String(replications)),
            ("replication_numbers", JSON.string("0-\(replications - 1)")),
            ("policies", JSON.array(scenario.policies.map { JSON.string($0.name) })),
            ("baseline", JSON.string(scenario.metrics.baseline)),
        ]
        if let p = precision {
            pairs.append(("precision", JSON.object([
                ("target_relative_half_width", CSVWriter.number(p.target)),
                ("metrics", JSON.array(p.metrics.map(JSON.string))),
                ("max_replications", String(p.maxReplications)),
                ("reached", p.reached ? "true" : "false"),
                ("worst_relative_half_width", CSVWriter.number(p.worst).isEmpty ? "null" : CSVWriter.number(p.worst)),
            ], indent: 1)))
        }
        pairs.append(("files", "[\n" + files.map { f in
            "    " + "{\"name\": \(JSON.string(f.name)), \"bytes\": \(f.bytes), \"sha256\": \(JSON.string(f.sha256))}"
        }.joined(separator: ",\n") + "\n  ]"))
        pairs.append(("resolved_scenario", scenario.resolvedJSON))
        return JSON.object(pairs) + "\n"
    }
}
