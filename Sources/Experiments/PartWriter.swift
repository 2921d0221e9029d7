import Foundation

/// Rows one run writes straight to a file as they are produced, so that a long run's
/// per-task rows and timeline never sit in memory. The files are the run's unit's row
/// files (`units/p000000-1-r000003.tasks.csv`); the result files join them in unit order.
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

    /// Appends a line (with its line break), after `prefix` (the unit's first fields). Write
    /// errors are kept and reported by `close`.
    func append(_ line: String, after prefix: String = "") {
        buffer.append(contentsOf: prefix.utf8)
        buffer.append(contentsOf: line.utf8)
        if buffer.count >= Self.flushBytes { flush() }
    }

    private func flush() {
        guard !buffer.isEmpty, failure == nil, let handle else { buffer.removeAll(keepingCapacity: true); return }
        do {
            try handle.write(contentsOf: buffer)
        } catch {
            failure = "cannot write \(url.path): \(OutputFiles.reason(error))"
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
