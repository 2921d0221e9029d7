import Foundation

/// Reads the files a study is made of (scenarios, sweeps, profiles, traces) with limits, so
/// that no input, shared or generated, can hang the reader or exhaust memory: a regular file
/// (not a device or a pipe, which may never end), at most `limit` bytes, UTF-8.
package enum InputFile {
    /// What a file is, for the limit and the messages.
    package enum Kind: String {
        case scenario = "scenario file"
        case sweep = "sweep file"
        case profile = "profile"
        case trace = "trace file"
        case baseScenario = "base scenario"

        /// YAML documents are small (the bundled ones are a few kilobytes); traces are logs.
        var defaultLimitMB: Int { self == .trace ? 256 : 4 }
    }

    /// The environment variable that raises (or lowers) every limit, in megabytes.
    static let limitVariable = "BGSIM_MAX_INPUT_MB"

    /// `BGSIM_MAX_INPUT_MB` in bytes, if set, read once with `getenv`: Foundation's
    /// `environment` builds the whole environment each time, 8.6 M instructions over the
    /// reference scenario's 21 files (callgrind).
    /// A value that is not a number of megabytes is an error, not a limit silently left as it was.
    static let limitFromEnvironment: Result<Int?, ScenarioError> = {
        guard let raw = getenv(limitVariable) else { return .success(nil) }
        let text = String(cString: raw)
        guard let mb = Int(text), mb > 0, mb <= 1 << 20 else {
            return .failure(
                ScenarioError(
                    .invalid, file: limitVariable,
                    message: "expected a whole number of megabytes from 1 to \(1 << 20) (the largest input file bgsim reads), got '\(text)'"))
        }
        return .success(mb << 20)
    }()

    /// The limit for `kind`, in bytes.
    static func limit(_ kind: Kind) throws(ScenarioError) -> Int { try limitFromEnvironment.get() ?? kind.defaultLimitMB << 20 }

    /// The text of `path`, or an error naming the file and what is wrong with it.
    package static func read(_ path: String, _ kind: Kind) throws(ScenarioError) -> String {
        let data = try readBytes(path, kind)
        // Checked already: UTF-8, no NUL; a byte-order mark is dropped.
        var text = String(decoding: data, as: UTF8.self)
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        return text
    }

    /// The bytes of `path`, checked as `read` checks its text (a regular file within the
    /// limit, UTF-8, no NUL), without a byte-order mark, and without making a String: a trace
    /// is read from its bytes, and a copy as text would double its memory.
    package static func readBytes(_ path: String, _ kind: Kind) throws(ScenarioError) -> Data {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw ScenarioError(
                .unreadable, file: path,
                message: errno == ENOENT ? "no such \(kind.rawValue)" : "cannot read the \(kind.rawValue) (\(String(cString: strerror(errno))))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw ScenarioError(.unreadable, file: path, message: "not a regular file: expected a \(kind.rawValue)")
        }
        let limit = try limit(kind)
        guard info.st_size <= limit else {
            throw ScenarioError(
                .invalid, file: path,
                message: "the \(kind.rawValue) is \(megabytes(Int(info.st_size))), over the limit of \(megabytes(limit)) (set \(limitVariable) to raise it)")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ScenarioError(.unreadable, file: path, message: "cannot read the \(kind.rawValue) (\(String(cString: strerror(errno))))")
        }
        defer { try? handle.close() }
        // Read at most one byte past the limit: the file may have grown since stat.
        let data: Data
        do { data = try handle.read(upToCount: limit + 1) ?? Data() } catch {
            throw ScenarioError(.unreadable, file: path, message: "cannot read the \(kind.rawValue)")
        }
        guard data.count <= limit else {
            throw ScenarioError(
                .invalid, file: path, message: "the \(kind.rawValue) is over the limit of \(megabytes(limit)) (set \(limitVariable) to raise it)")
        }
        guard isUTF8(data) else {
            throw ScenarioError(.invalid, file: path, message: "not UTF-8 text: expected a \(kind.rawValue) in UTF-8")
        }
        // A NUL byte never belongs in a text file.
        guard !data.withUnsafeBytes({ $0.count > 0 && memchr($0.baseAddress!, 0, $0.count) != nil }) else {
            throw ScenarioError(.invalid, file: path, message: "a NUL byte: expected a \(kind.rawValue) of text")
        }
        // A byte-order mark is allowed and dropped.
        return data.starts(with: [0xEF, 0xBB, 0xBF]) ? data.dropFirst(3) : data
    }

    /// Whether `data` is UTF-8: ASCII checked eight bytes at a time, the rest by the standard
    /// library's validation of the part from the first non-ASCII byte on.
    static func isUTF8(_ data: Data) -> Bool {
        data.withUnsafeBytes { raw -> Bool in
            let n = raw.count
            var i = 0
            while i + 8 <= n {
                if raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { break }
                i += 8
            }
            while i < n && raw[i] < 0x80 { i += 1 }
            guard i < n else { return true }
            // All before i is ASCII, so a UTF-8 sequence can only begin at i.
            return String(validating: raw[i...], as: UTF8.self) != nil
        }
    }

    static func megabytes(_ bytes: Int) -> String {
        bytes >= 1 << 20 ? String(format: "%.1f MB", Double(bytes) / Double(1 << 20)) : "\(bytes) bytes"
    }
}
