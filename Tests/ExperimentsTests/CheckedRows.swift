import Foundation
import Synchronization

@testable import Reports

/// A row of a result file read by a check. A read of a column is noted while the check of its
/// own file runs (reads of rows a check recomputes from are not), so that a test can name the
/// columns no check of their file reads: a column without a check.
struct CheckedRow {
    let file: String
    let values: [String: String]
    let reads: ColumnReads

    subscript(_ column: String) -> String? {
        reads.note(file, column)
        return values[column]
    }

    /// The column's number, `nil` when empty or absent.
    func number(_ column: String) -> Double? {
        guard let text = self[column], !text.isEmpty else { return nil }
        return Double(text)
    }

    /// The columns whose names satisfy `include`, each counted as read.
    func columns(where include: (String) -> Bool) -> [String] {
        let names = values.keys.filter(include).sorted()
        for name in names { reads.note(file, name) }
        return names
    }
}

/// The columns read per file, by the checks of that file.
final class ColumnReads: Sendable {
    private let read = Mutex<(checking: String?, columns: [String: Set<String>])>((nil, [:]))

    func note(_ file: String, _ column: String) {
        read.withLock { if $0.checking == file { _ = $0.columns[file, default: []].insert(column) } }
    }

    /// Runs `check`, the check of `file`'s columns: its reads of `file`'s rows are noted.
    func checking(_ file: String, _ check: () -> Void) {
        read.withLock { $0.checking = file }
        check()
        read.withLock { $0.checking = nil }
    }

    /// The columns of `header` that no check of `file` read.
    func unread(_ file: String, header: [String]) -> [String] {
        let seen = read.withLock { $0.columns[file] ?? [] }
        return header.filter { !seen.contains($0) }
    }

    /// `file` in `dir`: its header and its rows, each noting what is read.
    func rows(_ dir: URL, _ file: String) throws -> (header: [String], rows: [CheckedRow]) {
        let t = try CSVTable.read(dir.appendingPathComponent(file))
        return (t.header, t.rows.map { CheckedRow(file: file, values: Dictionary(uniqueKeysWithValues: zip(t.header, $0)), reads: self) })
    }
}
