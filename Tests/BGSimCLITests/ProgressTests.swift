import Foundation
import Testing
@testable import bgsim

/// The progress lines, on a clock the test moves: what a log (not a terminal) shows.
@Suite("Progress on stderr")
struct ProgressTests {
    final class Log: @unchecked Sendable {
        var text = ""
        var time = Date(timeIntervalSince1970: 0)
        func advance(_ seconds: Double) { time += seconds }
    }

    func reporter(jobs: Int, _ log: Log) -> ProgressReporter {
        ProgressReporter(jobs: jobs, isTerminal: false, now: { log.time }, write: { log.text += $0 })
    }

    /// A sweep's points read in under a second say nothing; a longer read shows a line at each
    /// tenth from its first second on, ending at 100%.
    @Test func readingAPlanShowsOnlyWhenItTakesASecond() {
        let quick = Log()
        let r = reporter(jobs: 2, quick)
        for done in stride(from: 256, through: 2_000, by: 256) { quick.advance(0.05); r.reading(min(done, 2_000), of: 2_000) }
        r.reading(2_000, of: 2_000)
        #expect(quick.text.isEmpty)

        let slow = Log()
        let s = reporter(jobs: 2, slow)
        for done in stride(from: 256, to: 20_000, by: 256) { slow.advance(0.09); s.reading(done, of: 20_000) }
        s.reading(20_000, of: 20_000)
        let lines = slow.text.split(separator: "\n")
        #expect(lines.first == "progress: 3072/20000 points read (15%)", "the first chunk read after a second: \(lines)")
        #expect(lines.last == "progress: 20000/20000 points read (100%)")
        #expect(lines.count == 10, "\(lines)")
    }

    /// No rate until --jobs more units have finished after the first: the setup before the
    /// first unit and the units started with it would give a rate --jobs times off.
    @Test func theRateIsMeasuredFromTheFirstUnitOnceJobsMoreHaveFinished() {
        let log = Log()
        let r = reporter(jobs: 2, log)
        log.advance(30)  // setup: checking which units the folder holds
        r.update(done: 1, total: 12, skipped: 0)
        log.advance(0.001)
        r.update(done: 2, total: 12, skipped: 0)
        log.advance(1)
        r.update(done: 3, total: 12, skipped: 0)
        log.advance(1)
        r.update(done: 11, total: 12, skipped: 0)
        let lines = log.text.split(separator: "\n").map(String.init)
        #expect(lines == ["progress: 1/12 units (8%), 2 at a time, -- units/s, ETA --:--",
                          "progress: 2/12 units (16%), -- units/s, ETA --:--",
                          "progress: 3/12 units (25%), 2.0 units/s, ETA 0:05",
                          "progress: 11/12 units (91%), 5.0 units/s, ETA 0:00"], "\(lines)")
    }
}
