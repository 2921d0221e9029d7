import Foundation
import Yams

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

    /// Parses YAML text into a tree.
    /// - Throws: `ScenarioError` with the parser's line and column.
    package static func parse(yaml: String, file: String, origin: String? = nil) throws(ScenarioError) -> ConfigNode {
        // A value set on the command line or drawn for a fleet's person is most often a word
        // or a number, which YAML reads as itself: read without the parser, whose setup was
        // about 100,000 instructions a value, 1.6 M per person of a forecast (callgrind).
        if origin != nil, isPlainWord(yaml) { return ConfigNode(value: .scalar(yaml, plain: true), origin: origin, file: file) }
        return try parseYAML(yaml, file: file, origin: origin)
    }

    /// `parse(yaml:file:origin:)` by the YAML parser, whatever the text.
    static func parseYAML(_ yaml: String, file: String, origin: String?) throws(ScenarioError) -> ConfigNode {
        var budget = maxValues
        return try parse(yaml: yaml, file: file, origin: origin, locateSyntaxErrors: true, budget: &budget)
    }

    /// Whether YAML reads `text` as a plain scalar of the same text: letters, digits, `_`,
    /// `.`, `+` and `-`, beginning with a letter, a digit or `_`, or with a sign or a dot
    /// before a digit (so never a document marker, a list item or a flow or block indicator).
    static func isPlainWord(_ text: String) -> Bool {
        let utf8 = text.utf8
        guard let first = utf8.first else { return false }
        func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
        func isWordByte(_ c: UInt8) -> Bool {
            isDigit(c) || (c | 0x20 >= UInt8(ascii: "a") && c | 0x20 <= UInt8(ascii: "z")) || c == UInt8(ascii: "_")
        }
        guard utf8.allSatisfy({ isWordByte($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") }) else {
            return false
        }
        if isWordByte(first) { return true }
        let second = utf8.dropFirst().first
        return second.map(isDigit) ?? false
    }

    /// `budget`: the values the conversion may still make, shared by the re-parses that
    /// locate a syntax error, so that they take no more than one document's worth in all.
    private static func parse(
        yaml: String, file: String, origin: String?,
        locateSyntaxErrors: Bool, budget: inout Int
    ) throws(ScenarioError) -> ConfigNode {
        try checkNesting(yaml, file: file, origin: origin)
        let node: Node?
        do {
            // The basic resolver: bgsim reads every scalar as text and converts it itself, so
            // YAML's tag rules (regular expressions for booleans, numbers, nulls and dates,
            // compiled at first use and run on every mapping key by the duplicate-key check)
            // were a fifth of a short run's start, for nothing. Keys are compared as text.
            // The encoding is named: Yams' default reads the whole process environment at
            // each parse (for YAMS_DEFAULT_ENCODING, and prints to stdout when that is set),
            // 380,000 instructions per file (callgrind). A Swift string is UTF-8.
            node = try Yams.compose(yaml: yaml, .basic, .default, .utf8)
        } catch let error as YamlError {
            var e = Self.syntaxError(error, file: file, origin: origin)
            if let line = e.line, let column = e.column, let hint = indexInFlowHint(yaml, line: line, column: column) {
                e = ScenarioError(.syntax, file: file, line: line, column: column, origin: origin, message: e.message + hint)
            }
            if locateSyntaxErrors, origin == nil, let line = e.line, let near = lastKey(in: yaml, before: line) {
                e = ScenarioError(
                    .syntax, file: file, keyPath: near.description, line: e.line, column: e.column,
                    message: "(after this key) " + e.message)
            }
            throw e
        } catch {
            throw ScenarioError(.syntax, file: file, origin: origin, message: "not valid YAML: \(error)")
        }
        guard let node else { return ConfigNode(value: .mapping([]), line: 1, column: 1, origin: origin, file: file) }
        return try convert(node, file: file, origin: origin, path: .root, budget: &budget)
    }

    /// Values a document may hold once YAML aliases are expanded: an alias repeats a whole
    /// subtree, so a few hundred bytes of nested aliases can stand for billions of values.
    static let maxValues = 250_000
    /// Levels of nesting a document may have; the parser recurses once per level.
    static let maxDepth = 64

    /// Refuses text nested deeper than `maxDepth` before the parser, which recurses per level,
    /// sees it. Counted on the text: open `[` and `{` outside quotes and comments, plus the
    /// block levels (indentation, and each `- ` that starts an item on the same line).
    static func checkNesting(_ yaml: String, file: String, origin: String?) throws(ScenarioError) {
        var copy = yaml
        // On the contiguous bytes with integer indices: through String.UTF8View indices the
        // scan cost about 80 instructions a byte.
        let deepLine: Int? = copy.withUTF8 { b -> Int? in
            let space = UInt8(ascii: " "), hash = UInt8(ascii: "#"), newline = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r")
            let dash = UInt8(ascii: "-"), dquote = UInt8(ascii: "\""), squote = UInt8(ascii: "'"), backslash = UInt8(ascii: "\\")
            var flow = 0, lineNumber = 0, i = 0
            var indents: [Int] = []
            while i < b.count {
                lineNumber += 1
                var end = i
                while end < b.count, b[end] != newline { end += 1 }
                var j = i
                while j < end, b[j] == space { j += 1 }
                let indent = j - i
                if j < end, b[j] != hash, b[j] != cr {
                    if flow == 0 {
                        while let last = indents.last, last >= indent { indents.removeLast() }
                        indents.append(indent)
                        // `- - - x`: each dash opens one more level.
                        var k = j
                        while k + 1 < end, b[k] == dash, b[k + 1] == space {
                            indents.append(k + 2 - i)
                            k += 2
                        }
                    }
                    var quote: UInt8 = 0
                    var previous = space
                    var k = j
                    while k < end {
                        let c = b[k]
                        if quote != 0 {
                            if c == quote { quote = 0 } else if quote == dquote, c == backslash { k += 1 }
                        } else if c == dquote || c == squote {
                            quote = c
                        } else if c == hash, previous == space {
                            break
                        } else if c == UInt8(ascii: "[") || c == UInt8(ascii: "{") {
                            flow += 1
                            if indents.count + flow > maxDepth { return lineNumber }
                        } else if c == UInt8(ascii: "]") || c == UInt8(ascii: "}") {
                            flow = max(0, flow - 1)
                        }
                        previous = c
                        k += 1
                    }
                    if indents.count + flow > maxDepth { return lineNumber }
                }
                i = end + 1
            }
            return nil
        }
        if let line = deepLine {
            throw ScenarioError(
                .invalid, file: file, line: origin == nil ? line : nil, origin: origin,
                message: "nested more than \(maxDepth) levels deep: expected a scenario, sweep or profile document")
        }
    }

    /// Advice when a syntax error is at the `[` of an index inside a word (`apps[0].cpu_w`):
    /// inside `{...}` or `[...]` YAML takes that `[` for the start of a list, which a sweep's
    /// `- {path: apps[0].cpu_w, values: [...]}` meets at once; quoted, the path is text.
    static func indexInFlowHint(_ yaml: String, line: Int, column: Int) -> String? {
        let lines = yaml.split(separator: "\n", omittingEmptySubsequences: false)
        guard line >= 1, line <= lines.count else { return nil }
        let text = Array(lines[line - 1])
        guard column >= 2, column <= text.count, text[column - 1] == "[" else { return nil }
        let before = text[column - 2]
        guard before.isLetter || before.isNumber || before == "_" else { return nil }
        var start = column - 2
        while start > 0, text[start - 1].isLetter || text[start - 1].isNumber || "_.[]".contains(text[start - 1]) { start -= 1 }
        var end = column - 1
        while end < text.count, text[end].isLetter || text[end].isNumber || "_.[]".contains(text[end]) { end += 1 }
        let word = String(text[start..<end])
        return "; inside {...} or [...] a key path with an index must be quoted: '\(word)'"
    }

    /// The key path of the last value before `line`, found by re-parsing the longest prefix
    /// of the document that is valid YAML: context for a syntax error. Best effort.
    static func lastKey(in yaml: String, before line: Int) -> ConfigKeyPath? {
        let lines = yaml.split(separator: "\n", omittingEmptySubsequences: false)
        var end = min(line - 1, lines.count)
        // One budget for all the prefixes: each re-parse of an alias bomb would otherwise
        // expand it again, 50 times (18 s, found by the fuzzer).
        var budget = maxValues
        while end > 0, line - end <= 50, budget > 0 {
            if let prefix = try? ConfigNode.parse(
                yaml: lines[..<end].joined(separator: "\n"), file: "", origin: nil,
                locateSyntaxErrors: false, budget: &budget),
                let (path, _) = prefix.last(at: .root)
            {
                return path
            }
            end -= 1
        }
        return nil
    }

    /// The key path and line of the value that starts last in the document.
    func last(at path: ConfigKeyPath) -> (ConfigKeyPath, Int)? {
        var best: (ConfigKeyPath, Int)? = path.components.isEmpty ? nil : (path, line ?? 0)
        func consider(_ candidate: (ConfigKeyPath, Int)?) {
            if let c = candidate, c.1 >= (best?.1 ?? 0) { best = c }
        }
        switch value {
        case .scalar: break
        case .mapping(let pairs):
            for pair in pairs { consider(pair.value.last(at: path.appending(pair.key))) }
        case .sequence(let items):
            for (i, item) in items.enumerated() { consider(item.last(at: path.appending(index: i))) }
        }
        return best
    }

    private static func convert(
        _ node: Node, file: String, origin: String?, path: ConfigKeyPath, budget: inout Int
    ) throws(ScenarioError) -> ConfigNode {
        let line = origin == nil ? node.mark?.line : nil
        let column = origin == nil ? node.mark?.column : nil
        budget -= 1
        guard budget >= 0 else {
            throw ScenarioError(
                .invalid, file: file, keyPath: path.description, line: line, column: column, origin: origin,
                message: "the document holds more than \(maxValues) values once its YAML aliases are expanded")
        }
        switch node {
        case .scalar(let s):
            return ConfigNode(value: .scalar(s.string, plain: s.style == .plain || s.style == .any), line: line, column: column, origin: origin, file: file)
        case .sequence(let seq):
            var items: [ConfigNode] = []
            for (i, item) in seq.enumerated() {
                items.append(try convert(item, file: file, origin: origin, path: path.appending(index: i), budget: &budget))
            }
            return ConfigNode(value: .sequence(items), line: line, column: column, origin: origin, file: file)
        case .mapping(let map):
            var pairs: [(key: String, keyLine: Int?, value: ConfigNode)] = []
            // The parser's own check compares keys with their tags, so `!foo seed` passed beside
            // `seed` and one of them was silently dropped: keys are compared as the text read.
            var seen = Set<String>()
            for (k, v) in map {
                guard case .scalar(let key) = k else {
                    throw ScenarioError(
                        .invalid, file: file, keyPath: path.description, line: k.mark?.line,
                        column: k.mark?.column, origin: origin, message: "keys must be plain names")
                }
                guard seen.insert(key.string).inserted else {
                    throw ScenarioError(
                        .syntax, file: file, keyPath: path.appending(key.string).description, line: k.mark?.line,
                        column: k.mark?.column, origin: origin, message: "duplicate key '\(key.string)'")
                }
                pairs.append(
                    (
                        key.string, origin == nil ? k.mark?.line : nil,
                        try convert(v, file: file, origin: origin, path: path.appending(key.string), budget: &budget)
                    ))
            }
            return ConfigNode(value: .mapping(pairs), line: line, column: column, origin: origin, file: file)
        case .alias:
            throw ScenarioError(
                .invalid, file: file, keyPath: path.description, line: line, column: column,
                origin: origin, message: "YAML aliases are not supported; write the value out")
        }
    }

    private static func syntaxError(_ error: YamlError, file: String, origin: String?) -> ScenarioError {
        func make(_ problem: String, _ context: YamlError.Context?, _ mark: Mark?) -> ScenarioError {
            var text = "invalid YAML: \(problem)"
            if let context { text += " (\(context.text) at line \(context.mark.line))" }
            return ScenarioError(
                .syntax, file: file, line: origin == nil ? mark?.line : nil,
                column: origin == nil ? mark?.column : nil, origin: origin, message: text)
        }
        switch error {
        case let .scanner(context, problem, mark, _): return make(problem, context, mark)
        case let .parser(context, problem, mark, _): return make(problem, context, mark)
        case let .composer(context, problem, mark, _): return make(problem, context, mark)
        case let .reader(problem, _, _, _): return make(problem, nil, nil)
        case let .duplicatedKeysInMapping(duplicates, context):
            return make("duplicate key \(duplicates.map { "'\($0)'" }.joined(separator: ", "))", nil, context.mark)
        default: return make("\(error)", nil, nil)
        }
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
