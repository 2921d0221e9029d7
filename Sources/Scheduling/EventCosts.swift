#if BGSIM_EVENT_COSTS
import Glibc

/// Where a run's time goes, by kind of simulation event: a developer's instrument, compiled
/// only with `swift build -c release -Xswiftc -DBGSIM_EVENT_COSTS` (normal builds have none of
/// it). Each event's handling is timed with the monotonic clock, and so is the whole event
/// loop; `bgsim` prints the table on stderr when it exits. The totals are process-wide and
/// not synchronised: run one simulation at a time (`--jobs 1`). The clock reads add about
/// 40 ns to each event.
package enum EventCosts {
    nonisolated(unsafe) static var counts = [Int](repeating: 0, count: kinds.count)
    nonisolated(unsafe) static var nanos = [Int](repeating: 0, count: kinds.count)
    nonisolated(unsafe) static var loopNanos = 0
    nonisolated(unsafe) static var runs = 0

    /// The event kinds, in the order of `PhoneEvent.costIndex`.
    static let kinds = [
        "plug_in", "unplug", "optimized_release", "battery_level", "battery_watch_ended", "battery_replan", "load",
        "launch", "leave", "call", "call_end", "purge", "interrupt", "interrupt_end",
        "network", "eligible", "phase_end", "cpu_monitor",
        "suspend", "policy_wake", "mechanism", "transfer_done",
    ]

    @inline(__always)
    static func now() -> Int {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return t.tv_sec * 1_000_000_000 + t.tv_nsec
    }

    /// Per kind, events per run, nanoseconds per event and share of the loop; then the loop's
    /// time per run and what it spent outside the handlers (taking events off the queue).
    package static func report() -> String {
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

extension PhoneEvent {
    /// Index into `EventCosts.kinds`.
    var costIndex: Int {
        switch self {
        case .power(let e):
            switch e {
            case .plugIn: 0
            case .unplug: 1
            case .optimizedRelease: 2
            case .level: 3
            case .watchEnded: 4
            case .replan: 5
            case .load: 6
            }
        case .person(let e):
            switch e {
            case .launch: 7
            case .leave: 8
            case .call: 9
            case .callEnd: 10
            case .purge: 11
            case .interrupt: 12
            case .interruptEnd: 13
            }
        case .network: 14
        case .eligible: 15
        case .phaseEnd: 16
        case .cpuMonitor: 17
        case .suspend: 18
        case .policyWake: 19
        case .mechanism: 20
        case .transferDone: 21
        }
    }
}
#endif
