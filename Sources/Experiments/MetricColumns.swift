import PhoneWorld
import ResultFiles
import ScenarioFiles
import Scheduling
import SimEngine
import SimRandom

/// One per-run metric: its column name (with its unit as a suffix), which way is better, and
/// how it is computed from a run's metrics. Name and computation stand together so that the
/// columns cannot drift from their values.
package struct Metric: Sendable {
    /// Which way a metric improves, for marking the best policy in a column.
    package enum Better: Sendable { case higher, lower, neither }
    /// The column name in `runs.csv`, with its unit as a suffix (`_s`, `_j`, `_pct`).
    package var name: String
    /// Which way the metric improves.
    package var better: Better
    /// Whether the value is a count (written without a decimal point).
    package var isCount: Bool
    let value: @Sendable (RunMetrics.Sorted) -> Double

    init(_ name: String, _ better: Better, count: Bool = false, _ value: @escaping @Sendable (RunMetrics.Sorted) -> Double) {
        self.name = name
        self.better = better
        self.isCount = count
        self.value = value
    }
}

extension RunMetrics {
    /// A run's metrics with their samples summarised once (an exact sample sorted), for
    /// quantiles.
    package struct Sorted: Sendable {
        /// The metrics themselves.
        package let m: RunMetrics
        let latency: QuantileSketch.Summary
        let completion: QuantileSketch.Summary
        let staleness: QuantileSketch.Summary
        init(_ m: RunMetrics) {
            self.m = m
            latency = m.latencies.summary()
            completion = m.completionLatencies.summary()
            staleness = m.staleness.summary()
        }
    }

    static func count(_ name: String, _ better: Metric.Better, _ value: @escaping @Sendable (RunMetrics) -> Int) -> Metric {
        Metric(name, better, count: true) { Double(value($0.m)) }
    }

    static func share(_ part: Int, of whole: Int) -> Double {
        whole > 0 ? 100 * Double(part) / Double(whole) : .nan
    }

    static func networkShare(_ m: RunMetrics, _ kind: NetworkKind) -> Double {
        let total = m.onNetwork.reduce(SimDuration.zero, +)
        return total > .zero ? 100 * m.onNetwork[kind.index].seconds / total.seconds : .nan
    }

    /// Mean, p50, p90, p99 and max of a sample: five metrics named `<stem>_mean_s` ...
    static func distribution(_ stem: String, _ sample: @escaping @Sendable (Sorted) -> QuantileSketch.Summary) -> [Metric] {
        [Metric("\(stem)_mean_s", .lower) { sample($0).mean }]
            + [("p50", 0.5), ("p90", 0.9), ("p99", 0.99)].map { label, p in
                Metric("\(stem)_\(label)_s", .lower) { sample($0).quantile(p) }
            }
            + [Metric("\(stem)_max_s", .lower) { sample($0).max }]
    }

    /// The metrics of `runs.csv`, in column order. Definitions: `notebooks-data/README.md`.
    package static let columns: [Metric] = {
        var c: [Metric] = [
            count("tasks_submitted", .neither) { $0.submitted },
            count("tasks_completed", .higher) { $0.count(.completed) },
            count("tasks_expired", .lower) { $0.count(.expired) },
            count("tasks_killed", .lower) { $0.count(.killed) },
            count("tasks_replaced", .neither) { $0.count(.replaced) },
            count("tasks_cancelled", .neither) { $0.count(.cancelled) },
            count("tasks_rejected", .lower) { $0.count(.rejected) },
            count("tasks_never_run", .lower) { $0.count(.neverRun) },
            count("tasks_dropped", .lower) { $0.count(.dropped) },
            count("tasks_unsuccessful", .lower) { $0.unsuccessful },
        ]
        c += SubmitError.allCases.enumerated().map { k, e in count("rejected_\(e.token)", .neither) { $0.rejections[k] } }
        c += TaskKind.allCases.map { kind in count("runs_\(kind.rawValue)", .neither) { $0.startedByKind[kind.index] } }
        c += [
            count("background_launches", .neither) { $0.backgroundLaunches },
            count("app_terminations", .lower) { $0.terminations },
            Metric("completed_pct", .higher) { share($0.m.count(.completed), of: $0.m.submitted) },
        ]
        c += distribution("latency") { $0.latency }
        c += distribution("completion_latency") { $0.completion }
        c += [
            Metric("background_energy_j", .lower) { $0.m.backgroundEnergyJ },
            Metric("background_battery_energy_j", .lower) { $0.m.backgroundFromBatteryJ },
            Metric("scheduled_battery_energy_j", .lower) { $0.m.scheduledFromBatteryJ },
            Metric("wasted_energy_j", .lower) { $0.m.wastedEnergyJ },
            count("lost_work", .lower) { $0.lostWork },
            Metric("lost_work_energy_j", .lower) { $0.m.lostWorkEnergyJ },
        ]
        c += TaskKind.allCases.map { kind in
            Metric("background_energy_\(kind.rawValue)_j", .neither) { $0.m.energyByKind[kind.index] }
        }
        c += [
            Metric("foreground_energy_j", .neither) { $0.m.foregroundEnergyJ },
            Metric("phone_energy_j", .lower) { $0.m.energy.consumedJ },
            Metric("battery_energy_j", .lower) { $0.m.energy.fromBatteryJ },
            Metric("charger_energy_j", .neither) { $0.m.energy.fromChargerJ },
            Metric("min_charge_pct", .higher) { 100 * $0.m.minCharge },
            Metric("final_charge_pct", .higher) { 100 * $0.m.finalCharge },
            count("shutdowns", .lower) { $0.shutdowns },
            Metric("time_off_s", .lower) { $0.m.timeOff.seconds },
            Metric("time_to_empty_s", .higher) { $0.m.firstShutdown.map { ($0 - .start).seconds } ?? .nan },
            Metric("energy_baseline_j", .lower) { $0.m.components.baselineJ },
            Metric("energy_screen_j", .neither) { $0.m.components.screenJ },
            Metric("energy_cpu_foreground_j", .neither) { $0.m.components.cpuForegroundJ },
            Metric("energy_cpu_background_j", .lower) { $0.m.components.cpuBackgroundJ },
            Metric("energy_call_j", .neither) { $0.m.components.callJ },
            Metric("energy_radio_active_j", .lower) { $0.m.components.radioActiveJ },
            Metric("energy_radio_tail_j", .lower) { $0.m.components.radioTailJ },
            Metric("energy_mode_j", .neither) { $0.m.components.modeJ },
            Metric("energy_load_j", .neither) { $0.m.components.loadJ },
            Metric("screen_on_s", .neither) { $0.m.screenOn.seconds },
            Metric("low_power_s", .neither) { $0.m.lowPower.seconds },
            Metric("wifi_pct", .neither) { networkShare($0.m, .wifi) },
            Metric("cellular_pct", .neither) { networkShare($0.m, .cellular) },
            Metric("no_network_pct", .neither) { networkShare($0.m, .none) },
            count("sessions", .neither) { $0.sessions },
            count("app_launches", .neither) { $0.launches },
            Metric("launch_predictability", .neither) { $0.m.launchPredictability },
            count("low_power_prompts", .neither) { $0.lowPowerPrompts },
            count("purges", .neither) { $0.purges },
            count("radio_promotions", .lower) { $0.promotions },
            count("radio_promotions_background", .lower) { $0.taskPromotions },
            Metric("staleness_mean_s", .lower) { $0.staleness.mean },
            Metric("staleness_p90_s", .lower) { $0.staleness.quantile(0.9) },
            Metric("fresh_launches_pct", .higher) { share($0.m.freshLaunches, of: $0.m.staleness.count) },
            count("refreshes_succeeded", .neither) { $0.refreshesSucceeded },
            count("refreshes_seen", .neither) { $0.refreshesSeen },
            Metric("refreshes_seen_pct", .higher) { share($0.m.refreshesSeen, of: $0.m.refreshesSucceeded) },
        ]
        return c
    }()

    /// The values of `columns`, in order; `nan` where undefined (no task started).
    package var columnValues: [Double] {
        let sorted = Sorted(self)
        return Self.columns.map { $0.value(sorted) }
    }
}
