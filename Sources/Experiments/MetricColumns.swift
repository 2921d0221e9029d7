import PhoneWorld
import Scheduling
import SimEngine
import SimRandom

/// One per-run metric: its column name (with its unit as a suffix), and which way is better.
public struct Metric: Sendable, Equatable {
    public enum Better: Sendable { case higher, lower, neither }
    public var name: String
    public var better: Better
    /// Whether the value is a count (written without a decimal point).
    public var isCount: Bool

    init(_ name: String, _ better: Better, count: Bool = false) {
        self.name = name
        self.better = better
        self.isCount = count
    }
}

extension RunMetrics {
    /// The metrics of `runs.csv`, in column order. Definitions: `notebooks-data/README.md`.
    public static let columns: [Metric] = [
        Metric("tasks_submitted", .neither, count: true),
        Metric("tasks_completed", .higher, count: true),
        Metric("tasks_expired", .lower, count: true),
        Metric("tasks_killed", .lower, count: true),
        Metric("tasks_replaced", .neither, count: true),
        Metric("tasks_cancelled", .neither, count: true),
        Metric("tasks_rejected", .lower, count: true),
        Metric("tasks_never_run", .lower, count: true),
        Metric("tasks_unsuccessful", .lower, count: true),
        Metric("rejected_unavailable", .neither, count: true),
        Metric("rejected_too_many_pending", .neither, count: true),
        Metric("rejected_not_permitted", .neither, count: true),
        Metric("runs_refresh", .neither, count: true),
        Metric("runs_processing", .neither, count: true),
        Metric("runs_finite_length", .neither, count: true),
        Metric("background_launches", .neither, count: true),
        Metric("app_terminations", .lower, count: true),
        Metric("completed_pct", .higher),
        Metric("latency_mean_s", .lower),
        Metric("latency_p50_s", .lower),
        Metric("latency_p90_s", .lower),
        Metric("latency_p99_s", .lower),
        Metric("latency_max_s", .lower),
        Metric("background_energy_j", .lower),
        Metric("background_battery_energy_j", .lower),
        Metric("scheduled_battery_energy_j", .lower),
        Metric("wasted_energy_j", .lower),
        Metric("phone_energy_j", .lower),
        Metric("battery_energy_j", .lower),
        Metric("charger_energy_j", .neither),
        Metric("min_charge_pct", .higher),
        Metric("final_charge_pct", .higher),
        Metric("shutdowns", .lower, count: true),
        Metric("time_off_s", .lower),
        Metric("energy_baseline_j", .lower),
        Metric("energy_screen_j", .neither),
        Metric("energy_cpu_foreground_j", .neither),
        Metric("energy_cpu_background_j", .lower),
        Metric("energy_call_j", .neither),
        Metric("energy_radio_active_j", .lower),
        Metric("energy_radio_tail_j", .lower),
        Metric("screen_on_s", .neither),
        Metric("low_power_s", .neither),
        Metric("wifi_pct", .neither),
        Metric("cellular_pct", .neither),
        Metric("no_network_pct", .neither),
        Metric("sessions", .neither, count: true),
        Metric("app_launches", .neither, count: true),
        Metric("low_power_prompts", .neither, count: true),
        Metric("purges", .neither, count: true),
        Metric("radio_promotions", .lower, count: true),
        Metric("radio_promotions_background", .lower, count: true),
        Metric("staleness_mean_s", .lower),
        Metric("staleness_p90_s", .lower),
    ]

    /// The values of `columns`, in order; `nan` where undefined (no task started).
    public var columnValues: [Double] {
        let sorted = latenciesS.sorted()
        func q(_ p: Double) -> Double { Statistics.quantile(sorted: sorted, p) }
        let submitted = Double(submitted)
        var v: [Double] = [
            submitted,
            Double(count(.completed)),
            Double(count(.expired)),
            Double(count(.killed)),
            Double(count(.replaced)),
            Double(count(.cancelled)),
            Double(count(.rejected)),
            Double(count(.neverRun)),
            Double(unsuccessful),
        ]
        v += rejections.map(Double.init)
        v += startedByKind.map(Double.init)
        v += [Double(backgroundLaunches), Double(terminations)]
        v += [
            submitted > 0 ? 100 * Double(count(.completed)) / submitted : .nan,
            Statistics.mean(sorted),
            q(0.5), q(0.9), q(0.99),
            sorted.last ?? .nan,
            backgroundEnergyJ,
            backgroundFromBatteryJ,
            scheduledFromBatteryJ,
            wastedEnergyJ,
            energy.consumedJ,
            energy.fromBatteryJ,
            energy.fromChargerJ,
            100 * minCharge,
            100 * finalCharge,
            Double(shutdowns),
            timeOff.seconds,
        ]
        v += [
            components.baselineJ,
            components.screenJ,
            components.cpuForegroundJ,
            components.cpuBackgroundJ,
            components.callJ,
            components.radioActiveJ,
            components.radioTailJ,
            screenOn.seconds,
            lowPower.seconds,
        ]
        let total = onNetwork.reduce(SimDuration.zero, +)
        for k in NetworkKind.allCases.indices { v.append(total > .zero ? 100 * onNetwork[k].seconds / total.seconds : .nan) }
        v += [Double(sessions), Double(launches), Double(lowPowerPrompts), Double(purges)]
        let staleness = stalenessS.sorted()
        v += [Double(promotions), Double(taskPromotions), Statistics.mean(staleness),
              Statistics.quantile(sorted: staleness, 0.9)]
        return v
    }
}

/// Per-policy statistics over replications.
public struct PolicySummary: Sendable {
    public var policy: PolicySpec
    public var replications: Int
    /// One interval per metric of `RunMetrics.columns`, over the replications where the
    /// metric is defined.
    public var intervals: [ConfidenceInterval]

    /// Summarises the runs of each policy, in the scenario's policy order.
    public static func summarise(_ runs: [RunResult], policies: [PolicySpec]) -> [PolicySummary] {
        policies.map { policy in
            let values = runs.filter { $0.policy == policy }.map(\.metrics.columnValues)
            let intervals = RunMetrics.columns.indices.map { c in
                ConfidenceInterval(values.map { $0[c] }.filter(\.isFinite))
            }
            return PolicySummary(policy: policy, replications: values.count, intervals: intervals)
        }
    }
}
