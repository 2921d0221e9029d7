#if BGSIM_EVENT_COSTS
import Glibc

/// Where a run's time goes, by kind of simulation event: a developer's instrument, compiled
/// only with `swift build -c release -Xswiftc -DBGSIM_EVENT_COSTS` (normal builds have none of
/// it). Each event's handling is timed with the monotonic clock, and so is the whole event
/// loop; `bgsim` prints the table on stderr when it exits. The totals are process-wide and
/// not synchronised: run one simulation at a time (`--jobs 1`). The clock reads add about
/// 40 ns to each event.
public enum EventCosts {
    nonisolated(unsafe) static var counts = [Int](repeating: 0, count: kinds.count)
    nonisolated(unsafe) static var nanos = [Int](repeating: 0, count: kinds.count)
    nonisolated(unsafe) static var loopNanos = 0
    nonisolated(unsafe) static var runs = 0

    /// The event kinds, in the order of `PhoneSimulation.Event.costIndex`.
    static let kinds = [
        "plug_in", "unplug", "eligible", "task_end", "cpu_monitor", "battery_level", "battery_watch_ended",
        "optimized_release", "policy_wake", "network", "launch", "leave", "call", "call_end", "purge",
        "radio", "push", "push_release", "mode_chunk", "load", "suspend", "interrupt", "interrupt_end", "begin_in_use", "extension_run", "server_push", "battery_replan",
    ]

    @inline(__always)
    static func now() -> Int {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return t.tv_sec * 1_000_000_000 + t.tv_nsec
    }

    /// Per kind, events per run, nanoseconds per event and share of the loop; then the loop's
    /// time per run and what it spent outside the handlers (taking events off the queue).
    public static func report() -> String {
        guard runs > 0, loopNanos > 0 else { return "event costs: no simulation ran\n" }
        let handled = nanos.reduce(0, +), events = counts.reduce(0, +)
        var lines = [
            "event costs over \(runs) runs (BGSIM_EVENT_COSTS build):",
            "kind                   events/run  ns/event  % of loop",
        ]
        for k in kinds.indices.sorted(by: { nanos[$0] > nanos[$1] }) where counts[k] > 0 {
            let name = kinds[k].padding(toLength: 22, withPad: " ", startingAt: 0)
            lines.append(
                name + " " + pad(counts[k] / runs, 10) + " " + pad(nanos[k] / counts[k], 9) + " "
                    + pad(100 * nanos[k] / loopNanos, 10))
        }
        lines.append(
            "loop: \(loopNanos / runs / 1000) µs per run, \(events / runs) events; outside the handlers "
                + "\((loopNanos - handled) / max(events, 1)) ns per event")
        return lines.joined(separator: "\n") + "\n"
    }

    static func pad(_ n: Int, _ width: Int) -> String {
        let s = String(n)
        return String(repeating: " ", count: max(0, width - s.count)) + s
    }
}

extension PhoneSimulation.Event {
    /// Index into `EventCosts.kinds`.
    var costIndex: Int {
        switch self {
        case .plugIn: 0
        case .unplug: 1
        case .eligible: 2
        case .taskEnd: 3
        case .cpuMonitor: 4
        case .batteryLevel: 5
        case .batteryWatchEnded: 6
        case .optimizedRelease: 7
        case .policyWake: 8
        case .network: 9
        case .launch: 10
        case .leave: 11
        case .call: 12
        case .callEnd: 13
        case .purge: 14
        case .radio: 15
        case .push: 16
        case .pushRelease: 17
        case .modeChunk: 18
        case .load: 19
        case .suspend: 20
        case .interrupt: 21
        case .interruptEnd: 22
        case .beginInUse: 23
        case .extensionRun: 24
        case .serverPush: 25
        case .batteryReplan: 26
        }
    }
}
#endif
