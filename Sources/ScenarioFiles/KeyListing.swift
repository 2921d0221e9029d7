import Foundation
import PhoneWorld
import SimEngine
import Synchronization

/// Every key a scenario's reading looked at, with its value: what the file (or a profile, or
/// `--set`) gave, or the default the reader used, written as a scenario file would write it.
/// `bgsim validate --print` lists them, as ns-3 prints its attributes.
package final class KeyListing: Sendable {
    /// One key: its path, its value as a scenario file writes it, and whether it was given.
    package struct Entry: Sendable, Equatable {
        package var path: String
        package var value: String
        package var given: Bool
        /// A remark for the reader: an assumption's plausible range.
        package var note: String?
    }

    private let entries = Mutex<[Entry]>([])

    /// Collects keys only while `body` reads, on this task.
    package static func listing<T>(_ body: () throws(ScenarioError) -> T) throws(ScenarioError) -> (T, [Entry]) {
        let listing = KeyListing()
        var result: Result<T, ScenarioError>?
        active.add(1, ordering: .sequentiallyConsistent)
        $current.withValue(listing) { result = Result { () throws(ScenarioError) -> T in try body() } }
        active.subtract(1, ordering: .sequentiallyConsistent)
        var seen = Set<String>()
        let keys = listing.entries.withLock { $0 }.filter { seen.insert($0.path).inserted }
        return (try result!.get(), keys)
    }

    @TaskLocal static var current: KeyListing?

    /// Listings running in the process: a reader asks for `current` only while one is, so a
    /// sweep reading thousands of points does not look up a task-local value at every key.
    static let active = Atomic<Int>(0)

    /// The listing of this task, if any listing is running.
    static var ifActive: KeyListing? { active.load(ordering: .relaxed) > 0 ? current : nil }

    /// A given value as a scenario file writes it on one line: a scalar, or a list of scalars
    /// (`[home, work]`); `nil` for a mapping or a nested list, whose own keys are listed.
    static func flow(_ node: ConfigNode) -> String? {
        func scalar(_ n: ConfigNode) -> String? {
            guard case .scalar(let text, _) = n.value else { return nil }
            // Quoted where YAML would read the text otherwise inside a flow list.
            return text.contains(where: { ",[]{}:#\"'".contains($0) }) || text.first == " " || text.last == " "
                ? "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" : text
        }
        switch node.value {
        case .scalar(let text, _): return text
        case .sequence(let items):
            let texts = items.compactMap(scalar)
            return texts.count == items.count ? "[" + texts.joined(separator: ", ") + "]" : nil
        default: return nil
        }
    }

    func add(_ path: ConfigKeyPath, _ value: String, given: Bool) {
        entries.withLock { $0.append(Entry(path: path.description, value: value, given: given)) }
    }

    /// Replaces the entry of an optional key read as unset (`~`) by its default in the file's
    /// own words, in place (`addDefault` finds the spelling).
    func respellDefault<T>(_ value: T, at path: ConfigKeyPath, _ read: (ConfigNode, ConfigKeyPath) throws(ScenarioError) -> T) {
        let mark = count
        addDefault(value, at: path, read)
        let added = entries.withLock { e in
            defer { e.removeLast(e.count - mark) }
            return e.count == mark + 1 ? e[mark].value : nil
        }
        guard let added else { return }
        let key = path.description
        entries.withLock { e in
            if let i = e.lastIndex(where: { $0.path == key && !$0.given }) {
                e[i].value = added
            } else {
                e.append(Entry(path: key, value: added, given: false))
            }
        }
    }

    /// Adds `note` to the latest entry for `path`.
    func annotate(_ path: ConfigKeyPath, _ note: String) {
        let key = path.description
        entries.withLock { e in
            if let i = e.lastIndex(where: { $0.path == key }) { e[i].note = note }
        }
    }
    var count: Int { entries.withLock { $0.count } }
    func truncate(_ n: Int) { entries.withLock { $0.removeLast($0.count - n) } }

    /// Records the default of an absent key in the file's own words: the first spelling that
    /// reads back to the same value (the number, as a percent, a duration, a time of day, a
    /// name); for a section, its own keys, read from an empty mapping; else the value as
    /// Swift describes it, marked as such.
    func addDefault<T>(_ value: T, at path: ConfigKeyPath, _ read: (ConfigNode, ConfigKeyPath) throws(ScenarioError) -> T) {
        let want = String(describing: value)
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional && mirror.children.isEmpty {
            add(path, "~", given: false)  // unset: YAML's null, which reads as absent
            return
        }
        func readsBack(_ node: ConfigNode) -> Bool {
            guard let v = try? read(node, path) else { return false }
            return String(describing: v) == want
        }
        for text in Self.spellings(of: value) where readsBack(ConfigNode(value: .scalar(text, plain: true))) {
            add(path, text, given: false)
            return
        }
        // A list of scalars, each in its first spelling (hourly weights).
        if let v = value as? ParameterValue, case .list(let items) = v, !items.isEmpty {
            let texts = items.compactMap { Self.spellings(of: $0).first }
            if texts.count == items.count, readsBack(ConfigNode(value: .sequence(texts.map { ConfigNode(value: .scalar($0, plain: true)) }))) {
                add(path, "[" + texts.joined(separator: ", ") + "]", given: false)
                return
            }
        }
        let mark = count
        if readsBack(ConfigNode(value: .mapping([]))) { return }
        truncate(mark)
        if readsBack(ConfigNode(value: .sequence([]))) {
            add(path, "[]", given: false)
            return
        }
        add(path, "(built in: \(want))", given: false)
    }

    static func spellings(of value: Any) -> [String] {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional, let wrapped = mirror.children.first { return spellings(of: wrapped.value) }
        switch value {
        case let d as Double:
            return [number(d), number(d * 100)]
        case let n as Int:
            return ["\(n)"]
        case let n as UInt64:
            return ["\(n)"]
        case let b as Bool:
            return [b ? "true" : "false"]
        case let s as String:
            return s.isEmpty ? ["\"\""] : [s]
        case let v as ParameterValue:
            switch v {
            case .duration(let d): return spellings(of: d)
            case .number(let x): return spellings(of: x)
            case .integer(let n): return spellings(of: n)
            case .flag(let b): return spellings(of: b)
            case .text(let t): return spellings(of: t)
            case .off: return ["none"]
            // Seconds or bytes: the read-back keeps the one its key reads.
            case .distribution(.fixed(let v)): return spellings(of: SimDuration(seconds: v)) + [number(v / 1000)]
            case .distribution, .names, .file, .section, .list: return []
            }
        case let d as SimDuration:
            let s = d.microseconds / 1_000_000
            return [d.description, String(format: "%02d:%02d", s / 3600, s / 60 % 60)]
        case let r as any RawRepresentable:
            return ["\(r.rawValue)"]
        default:
            return ["\(value)"]
        }
    }

    static func number(_ x: Double) -> String {
        x == x.rounded() && abs(x) < 1e15 ? String(Int64(x)) : "\(x)"
    }
}
