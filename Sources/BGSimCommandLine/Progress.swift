import Foundation

/// Progress on stderr: a bar redrawn in place with the rate and the time left when stderr is
/// a terminal; otherwise (a log file, a CI job, a Slurm output file) a plain line at every
/// tenth of the work and at most every 10 seconds, from the study's first second on (a study
/// done sooner shows only its last line), so logs stay short and readable.
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
    private var lastDraw = Date.distantPast
    private var lastTenth = -1
    private var wroteLine = false
    private var drewBar = false
    private var lastTotal = -1
    private var round = 1
    private var firstReport: (at: Date, done: Int)?
    /// When anything was last shown (at first, when the reporter was made), and the step
    /// being reported, if it has shown itself yet.
    private var lastShown: Date
    private var stepName: String?
    private var stepShown = false

    init(
        jobs: Int, isTerminal: Bool = isatty(STDERR_FILENO) == 1, now: @escaping () -> Date = Date.init,
        write: @escaping (String) -> Void = { StandardStreams.writeError($0) }
    ) {
        self.jobs = jobs
        self.isTerminal = isTerminal
        self.now = now
        self.write = write
        lastShown = now()
    }

    func update(done: Int, total: Int, skipped: Int) {
        lock.lock()
        defer { lock.unlock() }
        let now = self.now()
        if stepName != nil {
            // Units after a step (a round of --precision after writing, in tests): their own
            // line and tenths.
            if stepShown && isTerminal { write("\n") }
            stepName = nil
            stepShown = false
            lastTenth = -1
        }
        // The rate is that since the first report, once --jobs more units have finished:
        // before the first come the study's setup (checking which units a folder already
        // holds: 0.3 s for 20,000 units) and --jobs units started together, so the first unit
        // alone gave a rate --jobs times too low or worse (an ETA of 1:30:10 for a sweep that
        // took 5 s), and the units started with it finish at about the same time.
        let first = firstReport ?? (now, done)
        firstReport = first
        let seconds = now.timeIntervalSince(first.at)
        let rate: Double? =
            done - first.done >= min(jobs, total - first.done) && done > first.done && seconds > 0
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
            lastShown = now
        } else {
            // Within its first second a study shows only its end: a 0.2 s run printed a line at
            // each tenth, ten lines of noise in a log; now it prints one.
            guard wroteLine || done == total || now.timeIntervalSince(lastShown) >= 1 else { return }
            let tenth = total > 0 ? 10 * done / total : 10
            guard newRound || tenth > lastTenth || now.timeIntervalSince(lastDraw) >= 10 else { return }
            lastTenth = tenth
            lastDraw = now
            let pct = total > 0 ? 100 * done / total : 100
            let firstLine = wroteLine ? "" : ", \(min(jobs, total)) at a time"
            wroteLine = true
            let line = "progress: \(done)/\(total) units (\(pct)%)\(inRound)\(firstLine), \(shownRate) units/s, ETA \(Self.clock(left))\(resumed)\n"
            write(line)
            lastShown = now
        }
    }

    /// Points of a sweep read so far, before any unit runs: reading takes about half a
    /// millisecond a point on one core, seconds for tens of thousands.
    func reading(_ done: Int, of total: Int) { step("points read", done, of: total) }

    /// `step` as the closure `StudyOptions.writing` and `Experiment.merge` take.
    var stepReporter: @Sendable (String, Int, Int) -> Void { { self.step($0, $1, of: $2) } }

    /// A step before or after the units run, which said nothing before: reading a sweep's
    /// points, checking the shards' units before a merge (every file hashed), writing each
    /// result file (tasks.csv is joined from every unit's part and hashed: about a second for
    /// 400 MB). `what` names the step ("points read", "units of tasks.csv written"). A step is
    /// shown like the units (a bar, or a line at each tenth of it and at most every 10 seconds)
    /// once nothing has been shown for a second, so a small study shows none and a large one
    /// is never silent for long.
    func step(_ what: String, _ done: Int, of total: Int) {
        lock.lock()
        defer { lock.unlock() }
        let now = self.now()
        if what != stepName {
            stepName = what
            stepShown = false
            lastTenth = -1
        }
        guard stepShown || now.timeIntervalSince(lastShown) >= 1 else { return }
        let pct = total > 0 ? 100 * done / total : 100
        if isTerminal {
            guard !stepShown || done == total || now.timeIntervalSince(lastDraw) >= 0.1 else { return }
            // Another bar's line (the units', an earlier step's) stays as it was.
            if !stepShown && drewBar { write("\n") }
            let width = 30
            let filled = total > 0 ? width * done / total : width
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            write("\r[\(bar)] \(done)/\(total) \(what) ")
            drewBar = true
        } else {
            let tenth = total > 0 ? 10 * done / total : 10
            guard tenth > lastTenth || now.timeIntervalSince(lastDraw) >= 10 else { return }
            lastTenth = tenth
            write("progress: \(done)/\(total) \(what) (\(pct)%)\n")
        }
        lastDraw = now
        lastShown = now
        stepShown = true
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
