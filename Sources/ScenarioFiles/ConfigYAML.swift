import Foundation
import Yams

/// Reading YAML text into a `ConfigNode`: the parser, its limits, and errors that point at
/// the line and key where the text went wrong.
extension ConfigNode {
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
}
