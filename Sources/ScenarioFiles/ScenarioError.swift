import ResultFiles

/// Bad input: a scenario file or a command-line value that cannot be used.
///
/// The message names the file, the key path and what was expected, and the line and column
/// where the YAML parser gives them:
/// `models/scenarios/x.yaml:4:17: phone.battery.capacity_wh: expected a number > 0, got -5`.
public struct ScenarioError: Error, CustomStringConvertible, Equatable, Sendable {
    package enum Kind: Equatable, Sendable {
        case unreadable
        case syntax
        case invalid
        case override
    }

    let kind: Kind
    /// The file the input came from.
    package let file: String
    /// The key path, such as `apps[1].tasks[0].interval`; empty for the whole document.
    package let keyPath: String
    /// 1-based line and column, where known.
    package let line: Int?
    /// 1-based column, where the YAML parser gives one.
    package let column: Int?
    /// Where a value came from when it was not the file (`--set phone.battery.capacity_wh=-5`).
    package let origin: String?
    /// What was wrong and what was expected.
    package let message: String

    package init(
        _ kind: Kind, file: String, keyPath: String = "", line: Int? = nil, column: Int? = nil,
        origin: String? = nil, message: String
    ) {
        self.kind = kind
        self.file = file
        self.keyPath = keyPath
        self.line = line
        self.column = column
        self.origin = origin
        self.message = message
    }

    /// The same error, said to come from `origin` unless it already names where its value
    /// came from: an error a sweep's point caused away from its axes' key paths (an app's
    /// geofence naming a place the point's network does not have) still names the point.
    package func from(_ origin: String) -> ScenarioError {
        guard self.origin == nil else { return self }
        return ScenarioError(kind, file: file, keyPath: keyPath, line: line, column: column, origin: origin, message: message)
    }

    /// `file:line:column: origin: key.path: message`, with the parts that are known.
    public var description: String {
        var place = file
        if let line { place += ":\(line)" }
        if let column { place += ":\(column)" }
        var parts = [place]
        if let origin { parts.append(origin) }
        if !keyPath.isEmpty { parts.append(keyPath) }
        parts.append(message)
        return Quoting.message(parts.joined(separator: ": "))
    }
}
