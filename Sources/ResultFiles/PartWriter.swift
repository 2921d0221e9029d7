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
    /// Further files that take every record under their own first fields: the units of a
    /// sweep's other points that run the same simulation (`StudyPlan.source(of:)`).
    @usableFromInline let copies: [PartWriter]
    /// A record without first fields, made once for the copies.
    @usableFromInline let record = CSVBytes(capacity: 4096)

    /// A writer to `url`, each record starting with `prefix`, and to each of `copies`, each
    /// record starting with the copy's own first fields.
    package init(_ url: URL, prefix: [String], copies: [(url: URL, prefix: [String])] = []) throws(RuntimeFailure) {
        self.url = url
        let first = CSVBytes()
        for field in prefix { first.field(field) }
        self.prefix = prefix.isEmpty ? nil : first.bytes
        self.handle = FileHandle(fileDescriptor: try OutputFiles.openForWriting(url.path), closeOnDealloc: true)
        var made: [PartWriter] = []
        for copy in copies { made.append(try PartWriter(copy.url, prefix: copy.prefix)) }
        self.copies = made
    }

    /// Appends a record: the unit's first fields, then those `write` adds and its line break.
    /// Write errors are kept and reported by `close`. Inlinable: it runs for every row a run
    /// writes, from the row writers of another target.
    @inlinable package func append(_ write: (CSVBytes) -> Void) {
        if copies.isEmpty {
            if let prefix { buffer.fields(prefix) }
            write(buffer)
        } else {
            // Made once, then written under each file's first fields, its line break dropped
            // so that `endRecord` ends it as the writers do.
            record.removeAll()
            write(record)
            let fields = Array(record.bytes.dropLast())
            for writer in [self] + copies {
                if let prefix = writer.prefix { writer.buffer.fields(prefix) }
                writer.buffer.fields(fields)
                writer.buffer.endRecord()
                if writer.buffer.count >= Self.flushBytes { writer.flush() }
            }
            return
        }
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
        for copy in copies { try copy.close() }
    }
}
