import Foundation

/// A position in a configuration document: `apps[1].tasks[0].interval`.
package struct ConfigKeyPath: Hashable, Sendable, CustomStringConvertible {
    /// One step of a path: a mapping's key or a list's index.
    package enum Component: Hashable, Sendable {
        case key(String)
        case index(Int)
    }

    /// The steps from the document's root.
    package var components: [Component]

    /// The path through `components`.
    package init(_ components: [Component] = []) { self.components = components }

    /// The document itself.
    package static let root = ConfigKeyPath()

    /// This path, then `key`.
    package func appending(_ key: String) -> ConfigKeyPath { appending(.key(key)) }
    /// This path, then item `index` of a list.
    package func appending(index: Int) -> ConfigKeyPath { appending(.index(index)) }

    /// One allocation: reading a scenario appends a key for every value it reads (for the
    /// messages), and `components + [c]` allocated the one-element array too.
    func appending(_ c: Component) -> ConfigKeyPath {
        var out: [Component] = []
        out.reserveCapacity(components.count + 1)
        out.append(contentsOf: components)
        out.append(c)
        return ConfigKeyPath(out)
    }

    /// Parses `phone.battery.capacity_wh`, `apps[0].name` or `apps.0.name`.
    package init?(parsing text: String) {
        var components: [Component] = []
        for part in text.split(separator: ".", omittingEmptySubsequences: false) {
            var rest = Substring(part)
            let name = rest.prefix { $0 != "[" }
            rest = rest.dropFirst(name.count)
            if let index = Int(name), index >= 0 {
                components.append(.index(index))
            } else if !name.isEmpty {
                components.append(.key(String(name)))
            } else if rest.isEmpty {
                return nil
            }
            while rest.first == "[" {
                guard let close = rest.firstIndex(of: "]") else { return nil }
                let inside = rest[rest.index(after: rest.startIndex)..<close]
                if let index = Int(inside), index >= 0 {
                    components.append(.index(index))
                } else if !inside.isEmpty, !inside.contains("["), Int(inside) == nil {
                    // `policies[ios]`: the item labelled or named `ios`, as `policies.ios` is.
                    components.append(.key(String(inside)))
                } else {
                    return nil
                }
                rest = rest[rest.index(after: close)...]
            }
            guard rest.isEmpty else { return nil }
        }
        guard !components.isEmpty else { return nil }
        self.components = components
    }

    /// `apps[1].tasks[0].interval`: keys joined by dots, indices in brackets.
    package var description: String {
        var out = ""
        for c in components {
            switch c {
            case .key(let k): out += out.isEmpty ? k : ".\(k)"
            case .index(let i): out += "[\(i)]"
            }
        }
        return out
    }
}

/// A node of a configuration document, with where it came from.
///
/// Scenario files are parsed by Yams into this tree rather than decoded straight into
/// types, so that every value keeps its line and column for error messages, and so that
/// `--set` overrides can replace any value by key path before the document is read.
package struct ConfigNode: Sendable {
    package indirect enum Value: Sendable {
        /// A scalar's text as written (numbers, durations and times are parsed on reading).
        case scalar(String, plain: Bool)
        case mapping([(key: String, keyLine: Int?, value: ConfigNode)])
        case sequence([ConfigNode])
    }

    package var value: Value
    var line: Int?
    var column: Int?
    /// Set for nodes that came from the command line: `--set key=value`.
    var origin: String?
    /// The file the node was read from, when it is not the scenario file (a profile under
    /// `models/`); errors then name that file.
    var file: String?

    var kindName: String {
        switch value {
        case .scalar: "a single value"
        case .mapping: "a mapping"
        case .sequence: "a list"
        }
    }

    /// Whether `other` is the same tree, down to every scalar's text, key, line, column, origin
    /// and file: reading it gives the same values and the same errors.
    func isIdentical(to other: ConfigNode) -> Bool {
        guard line == other.line, column == other.column, origin == other.origin, file == other.file else { return false }
        switch (value, other.value) {
        case let (.scalar(a, plainA), .scalar(b, plainB)):
            return plainA == plainB && a == b
        case let (.mapping(a), .mapping(b)):
            return a.count == b.count
                && (Self.sameStorage(a, b)
                    || zip(a, b).allSatisfy { $0.key == $1.key && $0.keyLine == $1.keyLine && $0.value.isIdentical(to: $1.value) })
        case let (.sequence(a), .sequence(b)):
            return a.count == b.count && (Self.sameStorage(a, b) || zip(a, b).allSatisfy { $0.isIdentical(to: $1) })
        default:
            return false
        }
    }

    /// Whether two arrays of equal count share their storage, and so their elements: the
    /// points of a sweep share every subtree no override or profile touched, and comparing
    /// them node by node was most of checking that a point's apps are the last point's.
    private static func sameStorage<T>(_ a: [T], _ b: [T]) -> Bool {
        a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress } }
    }

    /// Whether this is YAML's null (`~`, `null`, or nothing at all).
    var isNull: Bool {
        if case .scalar(let text, let plain) = value, plain, ["", "~", "null", "Null", "NULL"].contains(text) { return true }
        return false
    }

    /// Replaces (or adds) the value at `path` with `replacement`.
    ///
    /// Missing keys of mappings are added, so an override can set a key the file leaves at
    /// its default; whether the key exists at all is checked when the scenario is read.
    /// A key under a profile reference (`people: median`) turns the reference into a mapping
    /// `{profile: median, key: value}`, so `--set people.sessions_per_day=80` adjusts the
    /// profile the file names.
    mutating func set(
        _ path: ArraySlice<ConfigKeyPath.Component>, to replacement: ConfigNode, file: String,
        origin: String, walked: ConfigKeyPath = .root
    ) throws(ScenarioError) {
        guard let first = path.first else {
            self = replacement
            return
        }
        let rest = path.dropFirst()
        if case .key = first, case .scalar = value, !isNull, Profiles.isReference(walked) {
            value = .mapping([("profile", line, self)])
        }
        switch (first, value) {
        case (.key(let key), .mapping(var pairs)):
            if let i = pairs.firstIndex(where: { $0.key == key }), !pairs[i].value.isNull {
                try pairs[i].value.set(rest, to: replacement, file: file, origin: origin, walked: walked.appending(key))
            } else if let i = pairs.firstIndex(where: { $0.key == key }) {
                var fresh = ConfigNode(value: .mapping([]), origin: origin)
                try fresh.set(rest, to: replacement, file: file, origin: origin, walked: walked.appending(key))
                pairs[i].value = fresh
            } else {
                var fresh = ConfigNode(value: .mapping([]), origin: origin)
                try fresh.set(rest, to: replacement, file: file, origin: origin, walked: walked.appending(key))
                pairs.append((key, nil, fresh))
            }
            value = .mapping(pairs)
        case (.index(let i), .sequence(var items)):
            guard i < items.count else {
                throw ScenarioError(
                    .override, file: file, keyPath: walked.description, origin: origin,
                    message: "index \(i) is out of range: the list has \(items.count) item\(items.count == 1 ? "" : "s")")
            }
            try items[i].set(rest, to: replacement, file: file, origin: origin, walked: walked.appending(index: i))
            value = .sequence(items)
        case (.key(let key), .sequence(var items)):
            // A list item by its label or name: `policies.ios` (`policies[ios]`), `apps.news`.
            guard let i = Self.item(named: key, in: items) else {
                let names = items.compactMap { Self.itemName($0) }
                throw ScenarioError(
                    .override, file: file, keyPath: walked.description, origin: origin,
                    message: "no item of the list is labelled or named '\(key)'"
                        + (names.isEmpty ? "" : "; items: \(names.joined(separator: ", "))"))
            }
            try items[i].set(rest, to: replacement, file: file, origin: origin, walked: walked.appending(index: i))
            value = .sequence(items)
        case (.key, _):
            throw ScenarioError(
                .override, file: file, keyPath: walked.description, origin: origin,
                message: "cannot set a key inside \(kindName)")
        case (.index, _):
            throw ScenarioError(
                .override, file: file, keyPath: walked.description, origin: origin,
                message: "cannot index into \(kindName)")
        }
    }
}

extension ConfigNode {
    /// What names a list item: its `label`, else its `name` or `profile`, else the item itself
    /// when it is a single value (`- eager`, `- news`).
    static func itemName(_ item: ConfigNode) -> String? {
        switch item.value {
        case .scalar(let text, _): return text
        case .mapping(let pairs):
            for key in ["label", "name", "profile"] {
                if let node = pairs.first(where: { $0.key == key })?.value, case .scalar(let text, _) = node.value { return text }
            }
            return nil
        case .sequence: return nil
        }
    }

    /// The index of the only item that `name` names; nil when none or several do.
    static func item(named name: String, in items: [ConfigNode]) -> Int? {
        let matches = items.indices.filter { itemName(items[$0]) == name }
        return matches.count == 1 ? matches[0] : nil
    }
}

/// One `--set key.path=value` override.
public struct Override: Sendable, Equatable, CustomStringConvertible {
    /// Where the value goes.
    package var path: ConfigKeyPath
    /// The value as YAML text (`10`, `30m`, `[eager]`).
    package var value: String
    /// How the user wrote it, for messages: `--set seed=7` or `--seed 7`.
    package var origin: String

    /// Parses `key.path=value`, as given to `--set`.
    package init?(parsing text: String) {
        guard let eq = text.firstIndex(of: "="), let path = ConfigKeyPath(parsing: String(text[..<eq])) else { return nil }
        self.path = path
        self.value = String(text[text.index(after: eq)...])
        self.origin = "--set \(text)"
    }

    /// An override that a dedicated option stands for, such as `--seed 7` for `seed`.
    package init(path: ConfigKeyPath, value: String, origin: String) {
        self.path = path
        self.value = value
        self.origin = origin
    }

    /// How the user wrote it.
    public var description: String { origin }
}
