import Foundation

/// Rows one run writes straight to a file as they are produced, so that a long run's
/// per-task rows and timeline never sit in memory. The files are the run's unit's row
/// files (`units/p000000-1-r000003.tasks.csv`); the result files join them in unit order.
package final class PartWriter: @unchecked Sendable {
    let url: URL
    private var handle: FileHandle?
    @usableFromInline let buffer = CSVBytes(capacity: PartWriter.flushBytes + 4096)
    /// The unit's first fields (`policy,replication`), written as CSV once; nil when there are
    /// none. Keyed on the field count, not the bytes: one empty first field still needs its comma.
    @usableFromInline let prefix: [UInt8]?
    private var failure: String?
    @usableFromInline static let flushBytes = 1 << 20

    package init(_ url: URL, prefix: [String]) throws(RuntimeFailure) {
        self.url = url
        let first = CSVBytes()
        for field in prefix { first.field(field) }
        self.prefix = prefix.isEmpty ? nil : first.bytes
        self.handle = FileHandle(fileDescriptor: try OutputFiles.openForWriting(url.path), closeOnDealloc: true)
    }

    /// Appends a record: the unit's first fields, then those `write` adds and its line break.
    /// Write errors are kept and reported by `close`. Inlinable: it runs for every row a run
    /// writes, from the row writers of another target.
    @inlinable package func append(_ write: (CSVBytes) -> Void) {
        if let prefix { buffer.fields(prefix) }
        write(buffer)
        if buffer.count >= Self.flushBytes { flush() }
    }

    @usableFromInline func flush() {
        guard !buffer.isEmpty, failure == nil, let handle else { buffer.removeAll(); return }
        do {
            try buffer.withUnsafeBytes { try handle.write(contentsOf: $0) }
        } catch {
            failure = "cannot write \(url.path): \(OutputFiles.reason(error))"
        }
        buffer.removeAll()
    }

    package func close() throws(RuntimeFailure) {
        flush()
        try? handle?.close()
        handle = nil
        if let failure { throw RuntimeFailure(failure) }
    }
}
