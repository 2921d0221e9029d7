import Foundation
import Synchronization

/// What a `run` or `sweep` stopped by SIGINT (Ctrl-C) or SIGTERM (`kill`, or Slurm at a job's
/// time limit or on preemption) says on stderr before it ends: how many units had finished,
/// that they are kept in the unit store, and that the same command goes on from them. The
/// process then dies of the signal, as it would without the handler, so shells, `make` and
/// Slurm see the status they expect (and a Ctrl-C stops a shell loop of runs). A signal the
/// process was started with ignored stays ignored.
///
/// A signal handler may only call async-signal-safe functions: everything the message needs
/// is prepared when the handler is installed (the folder's bytes, a buffer), and the handler
/// only reads two atomics, formats the counts itself and calls write(2), signal(2), raise(3).
enum Interruption {
    /// Units finished (this run's and earlier runs') and in the study (or this shard): -1
    /// until the first unit of this run finishes.
    private static let finished = Atomic<Int>(-1)
    private static let total = Atomic<Int>(-1)
    /// Written once, by `arm`, before any handler is installed; read only by the handler.
    nonisolated(unsafe) private static var units: UnsafeMutableBufferPointer<UInt8>?
    nonisolated(unsafe) private static var buffer: UnsafeMutablePointer<UInt8>?
    nonisolated(unsafe) private static var endBar = false
    /// With --precision, more replications may follow the ones counted: "all finished" does
    /// not mean the results come next.
    nonisolated(unsafe) private static var inRounds = false
    private static let capacity = 1024

    /// Installs the handlers for a study writing its units under `unitsFolder`, in rounds of
    /// replications if `inRounds`. Once per process (a second call changes nothing).
    static func arm(unitsFolder: String, inRounds rounds: Bool) {
        guard units == nil else { return }
        inRounds = rounds
        _ = finished.load(ordering: .relaxed)
        _ = total.load(ordering: .relaxed)
        // Long paths are cut, not the message: the buffer's size is fixed before any signal.
        let bytes = Array(unitsFolder.utf8.prefix(capacity / 2))
        let stored = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: bytes.count)
        _ = stored.initialize(from: bytes)
        units = stored
        buffer = .allocate(capacity: capacity)
        // A progress bar on a terminal has no newline until it ends.
        endBar = isatty(STDERR_FILENO) == 1
        for signo in [SIGINT, SIGTERM] {
            let previous = signal(signo) { signo in
                Interruption.report(signo)
                signal(signo, SIG_DFL)
                raise(signo)
            }
            // A signal ignored from the start stays ignored: a shell starts a background job
            // so, and a Ctrl-C meant for the foreground must not stop it.
            if let previous, unsafeBitCast(previous, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) {
                signal(signo, SIG_IGN)
            }
        }
    }

    /// Notes the progress a message would report.
    static func progress(finished f: Int, of t: Int) {
        total.store(t, ordering: .relaxed)
        finished.store(f, ordering: .relaxed)
    }

    /// Back to the default actions: the units are gone once the results are written.
    static func disarm() {
        guard units != nil else { return }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }

    /// Writes the message for a signal to stderr; called only in the handler.
    private static func report(_ signo: Int32) {
        guard let buffer, let units else { return }
        let f = finished.load(ordering: .relaxed), t = total.load(ordering: .relaxed)
        var w = Writer(start: buffer, capacity: capacity)
        if endBar { w.put("\n") }
        w.put("bgsim: stopped by ")
        w.put(signo == SIGINT ? "SIGINT" : "SIGTERM")
        if f < 0 || t < 0 {
            // Nothing counted yet: what is kept, not how much.
            w.put("; the units finished so far are kept in ")
            w.put(units)
            w.put("/units, and the same command goes on from them.\n")
        } else if inRounds {
            // --precision: the count is of the replications asked for so far.
            w.put(": ")
            w.put(f)
            w.put(" of the ")
            w.put(t)
            w.put(" units asked for so far had finished; they are kept in ")
            w.put(units)
            w.put("/units, and the same command goes on from them.\n")
        } else if f >= t {
            w.put(": all ")
            w.put(t)
            w.put(" units had finished; they are kept in ")
            w.put(units)
            w.put("/units, and the same command writes the results from them.\n")
        } else {
            w.put(": ")
            w.put(f)
            w.put(" of ")
            w.put(t)
            w.put(" units had finished; they are kept in ")
            w.put(units)
            w.put("/units, and the same command runs the other ")
            w.put(t - f)
            w.put(" and writes the results.\n")
        }
        _ = Glibc.write(STDERR_FILENO, buffer, w.count)
    }

    /// Bytes into a fixed buffer, without allocating; what does not fit is dropped.
    private struct Writer {
        let start: UnsafeMutablePointer<UInt8>
        let capacity: Int
        var count = 0

        mutating func put(_ byte: UInt8) {
            guard count < capacity else { return }
            start[count] = byte
            count += 1
        }

        mutating func put(_ text: StaticString) {
            let p = text.utf8Start
            for k in 0..<text.utf8CodeUnitCount { put(p[k]) }
        }

        mutating func put(_ bytes: UnsafeMutableBufferPointer<UInt8>) {
            for b in bytes { put(b) }
        }

        /// A non-negative count in decimal, written from its last digit back.
        mutating func put(_ value: Int) {
            var v = max(value, 0), width = 1
            while v >= 10 {
                v /= 10
                width += 1
            }
            guard count + width <= capacity else { return }
            v = max(value, 0)
            for k in stride(from: width - 1, through: 0, by: -1) {
                start[count + k] = 48 + UInt8(truncatingIfNeeded: v % 10)
                v /= 10
            }
            count += width
        }
    }
}
