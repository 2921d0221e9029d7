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
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private let started = Date()
    private var lastDraw = Date.distantPast
    private var lastTenth = -1
    private var wroteLine = false
    private var drewBar = false
    private var lastTotal = -1
    private var round = 1

    init(jobs: Int) { self.jobs = jobs }

    func update(done: Int, total: Int, skipped: Int) {
        lock.lock()
        defer { lock.unlock() }
        let now = Date()
        let elapsed = now.timeIntervalSince(started)
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        let left = rate > 0 ? Double(total - done) / rate : .nan
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
            if newRound && drewBar { FileHandle.standardError.write(Data("\n".utf8)) }
            lastDraw = now
            let width = 30
            let filled = total > 0 ? width * done / total : width
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            let line = "\r[\(bar)] \(done)/\(total) units\(inRound), \(min(jobs, total)) at a time  \(String(format: "%.1f", rate))/s  ETA \(Self.clock(left))\(resumed) "
            FileHandle.standardError.write(Data(line.utf8))
            drewBar = true
        } else {
            let tenth = total > 0 ? 10 * done / total : 10
            guard newRound || tenth > lastTenth || now.timeIntervalSince(lastDraw) >= 10 else { return }
            lastTenth = tenth
            lastDraw = now
            let pct = total > 0 ? 100 * done / total : 100
            let first = wroteLine ? "" : ", \(min(jobs, total)) at a time"
            wroteLine = true
            let line = "progress: \(done)/\(total) units (\(pct)%)\(inRound)\(first), \(String(format: "%.1f", rate)) units/s, ETA \(Self.clock(left))\(resumed)\n"
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    /// Ends the bar's line.
    func finish() {
        lock.lock()
        defer { lock.unlock() }
        if drewBar { FileHandle.standardError.write(Data("\n".utf8)) }
    }

    static func clock(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "--:--" }
        let s = Int(seconds.rounded())
        return s >= 3600 ? String(format: "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60) : String(format: "%d:%02d", s / 60, s % 60)
    }
}
