import Foundation
import Testing

/// docs/policies.md's "The policy API" is generated from the declarations themselves: every
/// public member a policy sees or returns, with its doc comment. A member added, renamed or
/// documented differently fails here until the page says so (`make policy-api-docs` writes it).
@Suite("The policy API page")
struct PolicyAPIDocumentationTests {
    /// The types a policy sees, returns or declares, in the page's order, each with its file
    /// and what the page says it is for.
    static let types: [(name: String, file: String, role: String)] = [
        ("SchedulingPolicy", "Sources/PolicyAPI/Policy.swift", "what a policy is"),
        ("RegisteredPolicy", "Sources/PolicyAPI/RegisteredPolicy.swift", "a policy with a name and declared parameters"),
        ("Setting", "Sources/PolicyAPI/Setting.swift", "one parameter's declaration (`PolicyParameter<P>` is `Setting<P>`)"),
        ("SettingUnit", "Sources/PolicyAPI/Setting.swift", "a number parameter's unit"),
        ("DeviceState", "Sources/PolicyAPI/Policy.swift", "what `decide` sees of the phone"),
        ("UsageHistory", "Sources/PolicyAPI/Policy.swift", "`DeviceState.usage`"),
        ("App", "Sources/PolicyAPI/Policy.swift", "`UsageHistory.App`, one app's record"),
        ("EligibleTask", "Sources/PolicyAPI/Policy.swift", "each request `decide` may start"),
        ("PolicyDecision", "Sources/PolicyAPI/Policy.swift", "what `decide` returns"),
        ("TaskSelection", "Sources/PolicyAPI/Policy.swift", "`PolicyDecision.start`"),
        ("PolicyHold", "Sources/PolicyAPI/Policy.swift", "`PolicyDecision.holds`"),
        ("PolicyTimeLimit", "Sources/PolicyAPI/Policy.swift", "`PolicyDecision.timeLimits`"),
        ("TaskRecord", "Sources/PolicyAPI/Tasks.swift", "what `taskEnded` learns"),
        ("TaskRequest", "Sources/PolicyAPI/Tasks.swift", "`TaskRecord.request`"),
        ("TaskOutcome", "Sources/PolicyAPI/Tasks.swift", "`TaskRecord.outcome`"),
        ("TaskID", "Sources/PolicyAPI/Tasks.swift", "a request's identity"),
        ("TaskKind", "Sources/PolicyAPI/TaskKinds.swift", "`EligibleTask.kind`"),
        ("NetworkKind", "Sources/PhoneWorld/Network.swift", "`DeviceState.network`"),
        ("SimInstant", "Sources/SimEngine/Time.swift", "a time of the run"),
        ("SimDuration", "Sources/SimEngine/Time.swift", "a span of time"),
    ]

    /// One member: its declaration as written (without `public`, attributes and body) and
    /// its doc comment joined into a line.
    struct Member: Equatable {
        var declaration: String
        var doc: String
    }

    /// The type's doc comment and its public members (a protocol's requirements), in order.
    static func members(of type: String, in source: String) -> (doc: String, members: [Member])? {
        let lines = source.components(separatedBy: "\n")
        let kinds = ["struct", "enum", "protocol", "final class"]
        guard
            let start = lines.firstIndex(where: { line in
                let t = line.trimmingCharacters(in: .whitespaces)
                return kinds.contains { t.hasPrefix("public \($0) \(type)") && !t.dropFirst("public \($0) \(type)".count).first!.isLetter }
            })
        else { return nil }
        let isProtocol = lines[start].contains("public protocol ")
        let isEnum = lines[start].contains("public enum ")
        func docAbove(_ i: Int) -> String {
            var k = i - 1, out: [String] = []
            // Attributes alone on their lines (`@inlinable`) sit between a comment and its member.
            while k >= 0, case let a = lines[k].trimmingCharacters(in: .whitespaces), a.hasPrefix("@"), !a.contains(" ") { k -= 1 }
            while k >= 0, lines[k].trimmingCharacters(in: .whitespaces).hasPrefix("///") {
                out.insert(String(lines[k].trimmingCharacters(in: .whitespaces).dropFirst(3)).trimmingCharacters(in: .whitespaces), at: 0)
                k -= 1
            }
            return out.filter { !$0.isEmpty }.joined(separator: " ")
        }
        var depth = 0, members: [Member] = [], i = start
        repeat {
            let line = lines[i]
            let t = line.trimmingCharacters(in: .whitespaces)
            if depth == 1, i > start {
                var decl = t
                for attribute in ["@inlinable ", "@inline(__always) ", "@discardableResult "] where decl.hasPrefix(attribute) {
                    decl.removeFirst(attribute.count)
                }
                let isPublic = decl.hasPrefix("public ")
                let starts = ["var ", "let ", "func ", "static ", "mutating func ", "init", "case ", "associatedtype "]
                let required = isProtocol && starts.contains { decl.hasPrefix($0) }
                let enumCase = isEnum && decl.hasPrefix("case ")
                if (isPublic || required || enumCase) && !decl.hasPrefix("public struct") && !decl.hasPrefix("public enum") {
                    // A declaration may run over lines until its parentheses close.
                    var k = i, open = 0
                    var whole = ""
                    repeat {
                        let part = lines[k].trimmingCharacters(in: .whitespaces)
                        whole += (whole.isEmpty || whole.hasSuffix("(") || part.hasPrefix(")") ? "" : " ") + part
                        open += part.filter { $0 == "(" }.count - part.filter { $0 == ")" }.count
                        k += 1
                    } while open > 0 && k < lines.count
                    members.append(Member(declaration: Self.clean(whole), doc: docAbove(i)))
                }
            }
            depth += t.filter { $0 == "{" }.count - t.filter { $0 == "}" }.count
            i += 1
        } while depth > 0 && i < lines.count
        return (docAbove(start), members)
    }

    /// A declaration as the page shows it: no `public`, no body, no default value, and
    /// `internal(set)` said as read-only.
    static func clean(_ text: String) -> String {
        var s = text
        for attribute in ["@inlinable ", "@inline(__always) ", "@discardableResult "] { s = s.replacingOccurrences(of: attribute, with: "") }
        var readOnly = false
        for prefix in ["public internal(set) ", "public private(set) ", "public fileprivate(set) "] where s.hasPrefix(prefix) {
            s = "public " + s.dropFirst(prefix.count)
            readOnly = true
        }
        if s.hasPrefix("public ") { s.removeFirst("public ".count) }
        // Cut at the body's brace outside brackets; a stored property's default goes when the
        // type is written, and becomes the type when it is a call of the type's initialiser.
        var depth = 0, cut = s.endIndex, equals: String.Index?
        var k = s.startIndex
        while k < s.endIndex {
            let c = s[k]
            if "([<".contains(c) { depth += 1 } else if ")]>".contains(c) && depth > 0 { depth -= 1 }
            if depth == 0 && c == "{" {
                cut = k
                break
            }
            if depth == 0 && c == "=" && equals == nil && s[..<k].hasSuffix(" ") && s[s.index(after: k)...].hasPrefix(" ") { equals = k }
            k = s.index(after: k)
        }
        let isStored = ["var ", "let ", "static var ", "static let "].contains { s.hasPrefix($0) }
        if isStored, let equals, equals < cut {
            let head = s[..<equals].trimmingCharacters(in: .whitespaces)
            let value = s[s.index(after: equals)..<cut].trimmingCharacters(in: .whitespaces)
            let typeName = value.prefix { $0.isLetter || $0.isNumber }
            if head.contains(":") {
                s = head
            } else if let first = typeName.first, first.isUppercase, value.dropFirst(typeName.count).hasPrefix("(") {
                s = head + ": " + typeName
            } else {
                s = head + " = " + value
            }
        } else {
            s = String(s[..<cut]).trimmingCharacters(in: .whitespaces)
        }
        return readOnly ? s + " (read-only)" : s
    }

    /// The page's section, from the declarations.
    static func reference() throws -> String {
        var s = "<!-- generated from the declarations by Tests/ExperimentsTests/PolicyAPIDocumentationTests.swift: `make policy-api-docs` rewrites it -->\n"
        for t in types {
            let source = try String(contentsOf: repoRoot.appendingPathComponent(t.file), encoding: .utf8)
            let found = try #require(members(of: t.name, in: source), "no public type \(t.name) in \(t.file)")
            s += "\n#### `\(t.name)`: \(t.role)\n\n\(found.doc) ([\(t.file.split(separator: "/").last!)](../\(t.file)))\n\n"
            s += "| member | meaning |\n| --- | --- |\n"
            for m in found.members {
                #expect(!m.doc.isEmpty, "\(t.name).\(m.declaration) in \(t.file) has no doc comment for the page")
                let decl = m.declaration.replacingOccurrences(of: "|", with: "\\|")
                s += "| `\(decl)` | \(m.doc.replacingOccurrences(of: "|", with: "\\|")) |\n"
            }
        }
        return s + "\n<!-- end of the generated policy API -->\n"
    }

    static let begin = "<!-- generated from the declarations"
    static let end = "<!-- end of the generated policy API -->\n"

    @Test func thePageListsEveryPublicMemberOfThePolicyAPIAsDeclared() throws {
        let expected = try Self.reference()
        let url = repoRoot.appendingPathComponent("docs/policies.md")
        let doc = try String(contentsOf: url, encoding: .utf8)
        let from = try #require(doc.range(of: Self.begin), "docs/policies.md has no generated policy API")
        let to = try #require(doc.range(of: Self.end, range: from.upperBound..<doc.endIndex))
        let current = String(doc[from.lowerBound..<to.upperBound])
        if current != expected, ProcessInfo.processInfo.environment["BGSIM_WRITE_POLICY_API"] == "1" {
            try (doc[..<from.lowerBound] + expected + doc[to.upperBound...]).write(to: url, atomically: true, encoding: .utf8)
            return
        }
        #expect(current == expected, "docs/policies.md's policy API is not the declarations': run `make policy-api-docs`")
    }

    /// The parser finds what it must: a member of each kind, multi-line declarations whole.
    @Test func theParserTakesMembersWithTheirDocs() throws {
        let source = """
            /// A thing.
            public struct Thing: Sendable {
                /// Its size.
                public var size: Double = 1
                var hidden = 0
                /// Made.
                public init(
                    size: Double
                ) { self.size = size }
                /// Read here only.
                public internal(set) var seen: [Int] = []
                public struct Inner { public var x = 0 }
                /// Twice.
                @inlinable public func twice() -> Double { 2 * size }
                public static func == (a: Thing, b: Thing) -> Bool { a.size == b.size }
                /// A flag.
                public var flag = false
                public static let one = Thing(size: 1)
            }
            """
        let found = try #require(Self.members(of: "Thing", in: source))
        #expect(found.doc == "A thing.")
        #expect(
            found.members == [
                Member(declaration: "var size: Double", doc: "Its size."), Member(declaration: "init(size: Double)", doc: "Made."),
                Member(declaration: "var seen: [Int] (read-only)", doc: "Read here only."), Member(declaration: "func twice() -> Double", doc: "Twice."),
                Member(declaration: "static func == (a: Thing, b: Thing) -> Bool", doc: ""), Member(declaration: "var flag = false", doc: "A flag."),
                Member(declaration: "static let one: Thing", doc: ""),
            ])
    }
}
