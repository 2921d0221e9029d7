import Foundation
import Testing

@testable import BGSimCommandLine

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

    /// A study done within a second shows one line in a log, its last: ten units in 0.2 s are
    /// not ten lines. One that takes longer shows from its first second on, at each tenth.
    @Test func aQuickStudyShowsOneLineInALog() {
        let quick = Log()
        let r = reporter(jobs: 2, quick)
        for done in 1...10 { quick.advance(0.02); r.update(done: done, total: 10, skipped: 0) }
        let only = quick.text.split(separator: "\n")
        #expect(only.count == 1 && only[0].hasPrefix("progress: 10/10 units (100%), 2 at a time, "), "\(quick.text)")
        let slow = Log()
        let s = reporter(jobs: 2, slow)
        for done in 1...10 { slow.advance(0.25); s.update(done: done, total: 10, skipped: 0) }
        let lines = slow.text.split(separator: "\n")
        #expect(lines.count == 7 && lines.first?.hasPrefix("progress: 4/10 units (40%), 2 at a time") == true, "\(lines)")
        #expect(lines.last?.hasPrefix("progress: 10/10 units (100%)") == true)
    }

    /// A step after the units (writing a result file) shows once nothing has been shown for a
    /// second, then at each tenth of it; the next steps start their own tenths, and show only
    /// after a second of silence again (runs.csv's half second shows nothing).
    @Test func aStepAfterTheUnitsShowsOnceASecondHasPassedInSilence() {
        let log = Log()
        let r = reporter(jobs: 1, log)
        r.update(done: 1, total: 1, skipped: 0)
        // Steps of binary fractions of a second, so the clock adds up exactly.
        for done in 1...100 { log.advance(1.0 / 64); r.step("units of tasks.csv written", done, of: 100) }
        log.advance(0.25)
        for done in 1...4 { log.advance(0.125); r.step("points of runs.csv written", done, of: 4) }
        for done in 1...20 { log.advance(0.125); r.step("points of summary.csv written", done, of: 20) }
        let lines = log.text.split(separator: "\n").map(String.init)
        #expect(
            lines == [
                "progress: 1/1 units (100%), 1 at a time, -- units/s, ETA --:--",
                "progress: 64/100 units of tasks.csv written (64%)",
                "progress: 70/100 units of tasks.csv written (70%)",
                "progress: 80/100 units of tasks.csv written (80%)",
                "progress: 90/100 units of tasks.csv written (90%)",
                "progress: 100/100 units of tasks.csv written (100%)",
                "progress: 2/20 points of summary.csv written (10%)",
                "progress: 4/20 points of summary.csv written (20%)",
                "progress: 6/20 points of summary.csv written (30%)",
                "progress: 8/20 points of summary.csv written (40%)",
                "progress: 10/20 points of summary.csv written (50%)",
                "progress: 12/20 points of summary.csv written (60%)",
                "progress: 14/20 points of summary.csv written (70%)",
                "progress: 16/20 points of summary.csv written (80%)",
                "progress: 18/20 points of summary.csv written (90%)",
                "progress: 20/20 points of summary.csv written (100%)",
            ], "\(lines)")
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
        #expect(
            lines == [
                "progress: 1/12 units (8%), 2 at a time, -- units/s, ETA --:--",
                "progress: 2/12 units (16%), -- units/s, ETA --:--",
                "progress: 3/12 units (25%), 2.0 units/s, ETA 0:05",
                "progress: 11/12 units (91%), 5.0 units/s, ETA 0:00",
            ], "\(lines)")
    }
}
