import SimEngine

/// Reads typed values out of a `ConfigNode` tree, turning every problem into a
/// `ScenarioError` that names the file, the key path and the line.
struct ConfigReader {
    let file: String

    func error(_ node: ConfigNode?, _ path: ConfigKeyPath, _ message: String, line: Int? = nil) -> ScenarioError {
        ScenarioError(
            node?.origin == nil ? .invalid : .override, file: node?.file ?? file, keyPath: path.description,
            line: line ?? node?.line, column: line == nil ? node?.column : nil,
            origin: node?.origin, message: message)
    }

    // MARK: - Mappings

    /// Reads the keys of one mapping; `finish()` rejects the keys nobody asked for.
    struct Mapping {
        let reader: ConfigReader
        let node: ConfigNode
        let path: ConfigKeyPath
        let pairs: [(key: String, keyLine: Int?, value: ConfigNode)]
        var asked: [String] = []

        init(_ node: ConfigNode, at path: ConfigKeyPath, reader: ConfigReader) throws(ScenarioError) {
            guard case .mapping(let pairs) = node.value else {
                throw reader.error(node, path, "expected a mapping of keys to values, got \(node.kindName)")
            }
            self.reader = reader
            self.node = node
            self.path = path
            self.pairs = pairs
        }

        /// The node under `key`, if present and not null.
        mutating func node(_ key: String) -> ConfigNode? {
            if asked.isEmpty { asked.reserveCapacity(16) }
            asked.append(key)
            guard let k = pairs.firstIndex(where: { $0.key == key }), !pairs[k].value.isNull else { return nil }
            if let listing = KeyListing.ifActive, let text = KeyListing.flow(pairs[k].value) {
                listing.add(path.appending(key), text, given: true)
            }
            return pairs[k].value
        }

        mutating func required<T>(
            _ key: String, _ what: @autoclosure () -> String,
            _ read: (ConfigNode, ConfigKeyPath) throws(ScenarioError) -> T
        ) throws(ScenarioError) -> T {
            guard let v = node(key) else {
                // A misspelt required key is far more likely than a missing one: name it.
                if let typo = pairs.first(where: { Self.isClose($0.key, to: key) }) {
                    throw reader.error(
                        typo.value, path.appending(typo.key),
                        "unknown key '\(typo.key)'; did you mean '\(key)'?", line: typo.keyLine)
                }
                throw reader.error(node, path.appending(key), "missing; expected \(what())")
            }
            return try read(v, path.appending(key))
        }

        mutating func optional<T>(
            _ key: String, default value: T,
            _ read: (ConfigNode, ConfigKeyPath) throws(ScenarioError) -> T
        ) throws(ScenarioError) -> T {
            guard let v = node(key) else {
                KeyListing.ifActive?.addDefault(value, at: path.appending(key), read)
                return value
            }
            return try read(v, path.appending(key))
        }

        /// Whether `unknown` is near enough to `known` to be suggested as its misspelling.
        static func isClose(_ unknown: String, to known: String) -> Bool {
            unknown != known && editDistance(known, unknown) <= max(2, unknown.count / 3)
        }

        /// Keys that an earlier bgsim read and this one reads as another, with what to write now.
        static let replaced = [
            "purges_per_hour": "purges now follow use: write purge_per_launch_pct, the chance that opening an app purges a suspended one",
            "extension_runs_per_day": "the app's extensions are a section now: write extensions: {runs_per_day: ...}",
        ]

        /// Throws for the first key that no reader asked for, suggesting the closest known key.
        func finish() throws(ScenarioError) {
            for pair in pairs where !asked.contains(pair.key) {
                if let now = Self.replaced[pair.key] {
                    throw reader.error(pair.value, path.appending(pair.key), "no longer read; \(now)", line: pair.keyLine)
                }
                var message = "unknown key '\(pair.key)'"
                if let close = asked.min(by: { editDistance($0, pair.key) < editDistance($1, pair.key) }),
                    Self.isClose(pair.key, to: close)
                {
                    message += "; did you mean '\(close)'? Known keys: "
                } else {
                    message += "; known keys: "
                }
                message += asked.joined(separator: ", ")
                throw reader.error(pair.value, path.appending(pair.key), message, line: pair.keyLine)
            }
        }
    }

    func mapping(_ node: ConfigNode, at path: ConfigKeyPath) throws(ScenarioError) -> Mapping {
        try Mapping(node, at: path, reader: self)
    }

    func list(_ node: ConfigNode, at path: ConfigKeyPath) throws(ScenarioError) -> [ConfigNode] {
        guard case .sequence(let items) = node.value else {
            throw error(node, path, "expected a list, got \(node.kindName)")
        }
        return items
    }

    /// A key path of a scenario (`people.sessions_per_day`, `apps[0].cpu_w`), as sweep axes and
    /// fleet parameters name what they vary.
    func keyPath(_ node: ConfigNode, _ path: ConfigKeyPath) throws(ScenarioError) -> ConfigKeyPath {
        let text = try string(node, path)
        guard let k = ConfigKeyPath(parsing: text) else {
            throw error(node, path, "expected a key path such as people.sessions_per_day, got '\(text)'")
        }
        return k
    }

    // MARK: - Scalars

    func text(_ node: ConfigNode, _ path: ConfigKeyPath, expected: @autoclosure () -> String) throws(ScenarioError) -> String {
        guard case .scalar(let t, _) = node.value else {
            throw error(node, path, "expected \(expected()), got \(node.kindName)")
        }
        return t
    }

    func string(_ node: ConfigNode, _ path: ConfigKeyPath) throws(ScenarioError) -> String {
        let t = try text(node, path, expected: "a text value")
        guard !t.isEmpty else { throw error(node, path, "expected a non-empty text value") }
        return t
    }

    /// A name made of letters, digits, '.', '_' and '-', not starting with '.': safe as a
    /// folder name (the scenario's name names its output folder; `..` must not) and in CSV.
    ///
    /// Checked on bytes: every allowed character is one ASCII byte, and a byte of a non-ASCII
    /// character is never one of them. (Per `Character`, with Unicode properties, a sweep of
    /// many points spent a sixteenth of its time here.)
    func name(_ node: ConfigNode, _ path: ConfigKeyPath) throws(ScenarioError) -> String {
        let t = try string(node, path)
        // A name becomes a folder's name and a column's value: short, as file systems want.
        guard t.utf8.count <= 128 else { throw error(node, path, "expected a name of at most 128 characters, got \(t.utf8.count)") }
        guard t.utf8.first != UInt8(ascii: "."),
            t.utf8.allSatisfy({ Self.isASCIIAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") })
        else {
            throw error(node, path, "expected a name of letters, digits, '.', '_' or '-', not starting with '.', got '\(t)'")
        }
        return t
    }

    /// A name that also names a list item in key paths (a policy's label, an app's name:
    /// `policies[coalesce].max_delay`, `apps.news`): a `name` without '.', which separates a
    /// path's steps, and not only digits, which `[1]` reads as an index.
    func label(_ node: ConfigNode, _ path: ConfigKeyPath) throws(ScenarioError) -> String {
        let t = try name(node, path)
        if t.utf8.contains(UInt8(ascii: ".")) {
            throw error(node, path, "expected a name without '.' (a key path such as policies[\(t)].x would split it), got '\(t)'")
        }
        if t.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            throw error(node, path, "expected a name that is not only digits ([\(t)] in a key path is the item at index \(t)), got '\(t)'")
        }
        return t
    }

    @inline(__always)
    static func isASCIIAlphanumeric(_ b: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b)
    }

    /// `t` without its digit-group underscores (`1_000`). Most numbers have none, and
    /// Foundation's `replacingOccurrences` cost a tenth of planning a sweep of many points.
    static func withoutUnderscores(_ t: String) -> String {
        guard t.utf8.contains(UInt8(ascii: "_")) else { return t }
        var out = String.UnicodeScalarView()
        out.append(contentsOf: t.unicodeScalars.lazy.filter { $0 != "_" })
        return String(out)
    }

    /// A finite number within `range`; `what` describes the range and unit for messages.
    func number(
        _ node: ConfigNode, _ path: ConfigKeyPath, _ what: @autoclosure () -> String,
        where valid: (Double) -> Bool
    ) throws(ScenarioError) -> Double {
        let t = try text(node, path, expected: what())
        guard let x = Double(Self.withoutUnderscores(t)), x.isFinite else {
            throw error(node, path, "expected \(what()), got '\(t)'")
        }
        guard valid(x) else { throw error(node, path, "expected \(what()), got \(t)") }
        return x
    }

    func integer(_ node: ConfigNode, _ path: ConfigKeyPath, _ what: @autoclosure () -> String, in range: ClosedRange<Int>) throws(ScenarioError) -> Int {
        let t = try text(node, path, expected: what())
        guard let x = Int(Self.withoutUnderscores(t)), range.contains(x) else {
            throw error(node, path, "expected \(what()), got '\(t)'")
        }
        return x
    }

    /// `true` or `false` (YAML's yes/no/on/off too).
    func bool(_ node: ConfigNode, _ path: ConfigKeyPath) throws(ScenarioError) -> Bool {
        let t = try text(node, path, expected: "true or false")
        switch t.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw error(node, path, "expected true or false, got '\(t)'")
        }
    }

    func seed(_ node: ConfigNode, _ path: ConfigKeyPath) throws(ScenarioError) -> UInt64 {
        let t = try text(node, path, expected: "a seed (a whole number from 0 to 2^64-1)")
        guard let x = UInt64(Self.withoutUnderscores(t)) else {
            throw error(node, path, "expected a seed (a whole number from 0 to 2^64-1), got '\(t)'")
        }
        return x
    }

    /// A duration such as `30s`, `15m`, `1h30m`, `7d`, `250ms`.
    func duration(_ node: ConfigNode, _ path: ConfigKeyPath, allowZero: Bool = false) throws(ScenarioError) -> SimDuration {
        let t = try text(node, path, expected: Self.durationExpected)
        guard let d = Self.parseDuration(t) else { throw error(node, path, Self.durationError(t)) }
        guard d > .zero || (allowZero && d == .zero) else {
            throw error(node, path, "expected a duration \(allowZero ? ">= 0" : "> 0"), got '\(t)'")
        }
        return d
    }

    /// A time of day `HH:MM` or `HH:MM:SS`, as the duration since midnight.
    func timeOfDay(_ node: ConfigNode, _ path: ConfigKeyPath) throws(ScenarioError) -> SimDuration {
        let t = try text(node, path, expected: "a time of day such as 23:00")
        let parts = t.split(separator: ":").map { Int($0) }
        guard (2...3).contains(parts.count), parts.allSatisfy({ $0 != nil }),
            let h = parts[0], let m = parts[1], (0..<24).contains(h), (0..<60).contains(m),
            parts.count == 2 || (0..<60).contains(parts[2]!)
        else {
            throw error(node, path, "expected a time of day such as 23:00 (HH:MM, 24-hour), got '\(t)'")
        }
        return .hours(Int64(h)) + .minutes(Int64(m)) + .seconds(Int64(parts.count == 3 ? parts[2]! : 0))
    }

    /// Read on bytes: a duration is ASCII digits, points and unit letters, and a byte of a
    /// non-ASCII character matches none of them, so such text is refused as before. (Per
    /// `Character`, with Foundation's trimming, a sweep of many points spent a twelfth of its
    /// time here.) Surrounding whitespace is trimmed as before, only when there is any.
    /// What a duration is, for error messages: every unit it may use.
    static let durationExpected = "a duration: a number and a unit (us, ms, s, m, h, d), units joined as in 1h30m; such as 30s, 15m or 7d"

    /// "expected a duration ..., got 'TEXT'", with the spelling meant when TEXT writes a unit
    /// out (`30 minutes`: did you mean 30m?).
    static func durationError(_ text: String) -> String {
        var message = "expected \(durationExpected), got '\(text)'"
        let words = text.lowercased().split(separator: " ")
        let units: [(String, String)] = [
            ("microsecond", "us"), ("millisecond", "ms"), ("sec", "s"), ("min", "m"), ("hour", "h"), ("hr", "h"), ("day", "d"), ("week", "w"),
        ]
        if words.count == 2, let n = Double(words[0]), let unit = units.first(where: { words[1].hasPrefix($0.0) }) {
            let number = n == n.rounded() && abs(n) < 1e15 ? String(Int(n)) : String(words[0])
            let days = n * 7
            message += unit.1 == "w" ? "; did you mean \(days == days.rounded() ? String(Int(days)) : String(days))d?" : "; did you mean \(number)\(unit.1)?"
        }
        return message
    }

    static func parseDuration(_ text: String) -> SimDuration? {
        var text = text
        if let first = text.utf8.first, let last = text.utf8.last,
            !(isASCIIAlphanumeric(first) || first == UInt8(ascii: ".")) || !isASCIIAlphanumeric(last)
        {
            text = text.trimmingCharacters(in: .whitespaces)
        }
        guard !text.isEmpty else { return nil }
        if text == "0" { return .zero }
        let u = text.utf8
        var i = u.startIndex, total = 0.0
        while i < u.endIndex {
            var j = i
            while j < u.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(u[j]) || u[j] == UInt8(ascii: ".") {
                u.formIndex(after: &j)
            }
            guard let value = Double(text[i..<j]), j < u.endIndex else { return nil }
            // The unit: ms, us, d, h, m or s ("ms" before "m").
            let next = u.index(after: j)
            let s = next < u.endIndex && u[next] == UInt8(ascii: "s")
            let scale: Double, twoLetters: Bool
            switch u[j] {
            case UInt8(ascii: "m"): (scale, twoLetters) = s ? (1e3, true) : (60e6, false)
            case UInt8(ascii: "u") where s: (scale, twoLetters) = (1, true)
            case UInt8(ascii: "d"): (scale, twoLetters) = (86_400e6, false)
            case UInt8(ascii: "h"): (scale, twoLetters) = (3_600e6, false)
            case UInt8(ascii: "s"): (scale, twoLetters) = (1e6, false)
            default: return nil
            }
            i = twoLetters ? u.index(after: next) : next
            total += value * scale
        }
        // Past every horizon (at most 100 years) a duration means "never": saturated at
        // `SimDuration.far`, so that instants plus durations cannot overflow.
        guard total.isFinite else { return nil }
        return total >= Double(SimDuration.far.microseconds) ? .far : SimDuration(microseconds: Int64(total.rounded()))
    }
}

/// Levenshtein distance, for "did you mean" suggestions.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    var row = Array(0...b.count)
    for i in 1...max(a.count, 1) where !a.isEmpty {
        var previous = row[0]
        row[0] = i
        for j in stride(from: 1, through: b.count, by: 1) {
            let current = row[j]
            row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
            previous = current
        }
    }
    return a.isEmpty ? b.count : row[b.count]
}

extension ConfigReader {
    /// One of an enumeration's raw values, listing them when it is not.
    func choice<T: RawRepresentable & CaseIterable>(
        _ node: ConfigNode, _ path: ConfigKeyPath, _ type: T.Type,
        what: String
    ) throws(ScenarioError) -> T where T.RawValue == String {
        let name = try string(node, path)
        guard let v = T(rawValue: name) else {
            throw error(node, path, "unknown \(what) '\(name)'; known: \(T.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return v
    }
}
