import Foundation

/// Rows one run writes straight to a part file as they are produced, so that a long run's
/// per-task rows and timeline never sit in memory. Parts are hidden files next to the
/// outputs (`.tasks.csv.3.part-<pid>`); `OutputFiles` joins them, in run order, into the
/// final file and removes them.
final class PartWriter: @unchecked Sendable {
    let url: URL
    private var handle: FileHandle?
    private var buffer: [UInt8] = []
    private var failure: String?
    private static let flushBytes = 1 << 20

    init(_ url: URL) throws(RuntimeFailure) {
        self.url = url
        guard FileManager.default.createFile(atPath: url.path, contents: nil),
              let handle = FileHandle(forWritingAtPath: url.path) else {
            throw RuntimeFailure("cannot write \(url.path): \(String(cString: strerror(errno)))")
        }
        self.handle = handle
        buffer.reserveCapacity(Self.flushBytes + 4096)
    }

    /// Appends a line (with its line break). Write errors are kept and reported by `close`.
    func append(_ line: String) {
        buffer.append(contentsOf: line.utf8)
        if buffer.count >= Self.flushBytes { flush() }
    }

    private func flush() {
        guard !buffer.isEmpty, failure == nil, let handle else { buffer.removeAll(keepingCapacity: true); return }
        do {
            try handle.write(contentsOf: buffer)
        } catch {
            failure = "cannot write \(url.path): \(error.localizedDescription)"
        }
        buffer.removeAll(keepingCapacity: true)
    }

    func close() throws(RuntimeFailure) {
        flush()
        try? handle?.close()
        handle = nil
        if let failure { throw RuntimeFailure(failure) }
    }
}

/// Where a study's parts go: a folder and this process's id, in every part's name.
public struct Spool: Sendable {
    public var folder: URL
    public init(folder: URL) { self.folder = folder }

    func part(_ file: String, unit: Int) -> URL {
        folder.appendingPathComponent(".\(file).\(unit).part-\(getpid())")
    }
}
