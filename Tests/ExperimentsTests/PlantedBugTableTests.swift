import Foundation
import Testing

/// `make planted-bugs` plants each row of Tests/PlantedBugs/bugs.tsv in a copy of the tree; a
/// row whose text the code no longer has plants nothing and proves nothing. This keeps the
/// table in step with the code in `make test`, in a second rather than the table's 35 minutes.
@Suite("Planted bugs' table")
struct PlantedBugTableTests {
    @Test func everyRowsTextIsInItsFileOnce() throws {
        let table = try String(contentsOf: repoRoot.appendingPathComponent("Tests/PlantedBugs/bugs.tsv"), encoding: .utf8)
        var rows = 0
        for line in table.split(separator: "\n") where !line.hasPrefix("#") && !line.isEmpty {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            try #require(fields.count == 5, "\(line)")
            let text = try String(contentsOf: repoRoot.appendingPathComponent(fields[2]), encoding: .utf8)
            let old = fields[3].replacingOccurrences(of: "\\n", with: "\n")
            #expect(text.components(separatedBy: old).count == 2, "\(fields[0]): its text is not once in \(fields[2])")
            #expect(old != fields[4].replacingOccurrences(of: "\\n", with: "\n"), "\(fields[0]) plants nothing")
            rows += 1
        }
        #expect(rows >= 72)
    }
}
