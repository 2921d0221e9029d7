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
    static let limitFromEnvironment: Int? = {
        guard let raw = getenv(limitVariable), let mb = Int(String(cString: raw)), mb > 0, mb <= 1 << 20 else { return nil }
        return mb << 20
    }()

    /// The limit for `kind`, in bytes.
    static func limit(_ kind: Kind) -> Int { limitFromEnvironment ?? kind.defaultLimitMB << 20 }

    /// The text of `path`, or an error naming the file and what is wrong with it.
    package static func read(_ path: String, _ kind: Kind) throws(ScenarioError) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw ScenarioError(
                .unreadable, file: path,
                message: errno == ENOENT ? "no such \(kind.rawValue)" : "cannot read the \(kind.rawValue) (\(String(cString: strerror(errno))))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw ScenarioError(.unreadable, file: path, message: "not a regular file: expected a \(kind.rawValue)")
        }
        let limit = limit(kind)
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
        guard var text = String(validating: data, as: UTF8.self) else {
            throw ScenarioError(.invalid, file: path, message: "not UTF-8 text: expected a \(kind.rawValue) in UTF-8")
        }
        // A byte-order mark is allowed and dropped; a NUL byte never belongs in a text file.
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        guard !data.contains(0) else {
            throw ScenarioError(.invalid, file: path, message: "a NUL byte: expected a \(kind.rawValue) of text")
        }
        return text
    }

    static func megabytes(_ bytes: Int) -> String {
        bytes >= 1 << 20 ? String(format: "%.1f MB", Double(bytes) / Double(1 << 20)) : "\(bytes) bytes"
    }
}
