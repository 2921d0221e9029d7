import Foundation

/// Progress on stderr: a bar redrawn in place with the rate and the time left when stderr is
/// a terminal; otherwise (a log file, a CI job, a Slurm output file) a plain line at every
/// tenth of the work and at most every 10 seconds, so logs stay short and readable.
///
/// Counts are the whole study's. With `--precision` a round of replications can add units
/// after all those asked for so far are done: the total grows, the bar starts a new line and
/// says which round it is, and the plain lines start again from the new tenth.
final class ProgressReporter: @unchecked Sendable {
    /// Simulations run at once (`--jobs`, or the cores this process may use): named on the
    /// bar and on the first plain line, so a default that is not what the user expected shows.
    private let jobs: Int
    private let lock = NSLock()
    private let isTerminal: Bool
    /// The clock and where text goes: the process's and stderr, or a test's.
    private let now: () -> Date
    private let write: (String) -> Void
    private let started: Date
    private var lastDraw = Date.distantPast
    private var lastTenth = -1
    private var wroteLine = false
    private var drewBar = false
    private var lastTotal = -1
    private var round = 1
    private var firstReport: (at: Date, done: Int)?

    init(jobs: Int, isTerminal: Bool = isatty(STDERR_FILENO) == 1, now: @escaping () -> Date = Date.init,
         write: @escaping (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) }) {
        self.jobs = jobs
        self.isTerminal = isTerminal
        self.now = now
        self.write = write
        started = now()
    }

    func update(done: Int, total: Int, skipped: Int) {
        lock.lock()
        defer { lock.unlock() }
        let now = self.now()
        // The rate is that since the first report, once --jobs more units have finished:
        // before the first come the study's setup (checking which units a folder already
        // holds: 0.3 s for 20,000 units) and --jobs units started together, so the first unit
        // alone gave a rate --jobs times too low or worse (an ETA of 1:30:10 for a sweep that
        // took 5 s), and the units started with it finish at about the same time.
        let first = firstReport ?? (now, done)
        firstReport = first
        let seconds = now.timeIntervalSince(first.at)
        let rate: Double? = done - first.done >= min(jobs, total - first.done) && done > first.done && seconds > 0
            ? Double(done - first.done) / seconds : nil
        let left = rate.map { Double(total - done) / $0 } ?? .nan
        let shownRate = rate.map { String(format: "%.1f", $0) } ?? "--"
        let resumed = skipped > 0 ? ", \(skipped) already finished" : ""
        var newRound = false
        if total != lastTotal {
            newRound = lastTotal >= 0
            if newRound { round += 1 }
            lastTotal = total
        }
        let inRound = round > 1 ? ", round \(round) of --precision" : ""
        if isTerminal {
            guard newRound || done == total || now.timeIntervalSince(lastDraw) >= 0.1 else { return }
            // The last round's bar stays on its own line.
            if newRound && drewBar { write("\n") }
            lastDraw = now
            let width = 30
            let filled = total > 0 ? width * done / total : width
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            let line = "\r[\(bar)] \(done)/\(total) units\(inRound), \(min(jobs, total)) at a time  \(shownRate)/s  ETA \(Self.clock(left))\(resumed) "
            write(line)
            drewBar = true
        } else {
            let tenth = total > 0 ? 10 * done / total : 10
            guard newRound || tenth > lastTenth || now.timeIntervalSince(lastDraw) >= 10 else { return }
            lastTenth = tenth
            lastDraw = now
            let pct = total > 0 ? 100 * done / total : 100
            let firstLine = wroteLine ? "" : ", \(min(jobs, total)) at a time"
            wroteLine = true
            let line = "progress: \(done)/\(total) units (\(pct)%)\(inRound)\(firstLine), \(shownRate) units/s, ETA \(Self.clock(left))\(resumed)\n"
            write(line)
        }
    }

    /// Points of a sweep read so far, before any unit runs: reading takes about half a
    /// millisecond a point on one core, seconds for tens of thousands, which said nothing
    /// before. Shown like the units (a bar, or a line at each tenth and at most every 10
    /// seconds) once reading has taken a second, so a sweep of a few points shows none.
    func reading(_ done: Int, of total: Int) {
        lock.lock()
        defer { lock.unlock() }
        let now = self.now()
        guard now.timeIntervalSince(started) >= 1 else { return }
        if isTerminal {
            guard done == total || now.timeIntervalSince(lastDraw) >= 0.1 else { return }
            lastDraw = now
            let width = 30
            let filled = total > 0 ? width * done / total : width
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            write("\r[\(bar)] \(done)/\(total) points read ")
            drewBar = true
        } else {
            let tenth = total > 0 ? 10 * done / total : 10
            guard tenth > lastTenth || now.timeIntervalSince(lastDraw) >= 10 else { return }
            lastTenth = tenth
            lastDraw = now
            write("progress: \(done)/\(total) points read (\(total > 0 ? 100 * done / total : 100)%)\n")
        }
    }

    /// Ends the bar's line.
    func finish() {
        lock.lock()
        defer { lock.unlock() }
        if drewBar { write("\n") }
    }

    static func clock(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "--:--" }
        let s = Int(seconds.rounded())
        return s >= 3600 ? String(format: "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60) : String(format: "%d:%02d", s / 60, s % 60)
    }
}
