import PhoneWorld
import ResultFiles
import Scheduling
import SimEngine
import SimRandom

/// `apps.csv`: one row per policy, replication, app and task identifier: how often each of an
/// app's doors into the background ran, where, at what cost, and what held it. Written for
/// every study (a fleet's tasks.csv is opt-in); notebooks-data/README.md defines each column.
package enum AppRows {
    /// What a row is computed from besides its tally: the run's length, the battery, the
    /// app's launches and staleness.
    struct Context {
        var days: Double
        var batteryJ: Double
        var metrics: RunMetrics
        var appNames: [String]
    }

    struct Column: Sendable {
        let names: [String]
        let write: @Sendable (borrowing AppTaskTally, borrowing Context, CSVBytes) -> Void
        init(_ name: String, _ write: @escaping @Sendable (borrowing AppTaskTally, borrowing Context, CSVBytes) -> Void) {
            names = [name]
            self.write = write
        }
        init(names: [String], _ write: @escaping @Sendable (borrowing AppTaskTally, borrowing Context, CSVBytes) -> Void) {
            self.names = names
            self.write = write
        }
    }

    /// Every column after `policy` and `replication`, each defined once.
    static let columns: [Column] =
        [
            Column("app") { t, c, out in out.field(c.appNames[t.app]) },
            Column("identifier") { t, _, out in out.field(t.identifier) },
            Column("kind") { t, _, out in out.field(t.kind.rawValue) },
            Column("days") { _, c, out in out.number(c.days) },
            Column("launches") { t, c, out in out.integer(c.metrics.appLaunches[t.app]) },
            Column("launches_per_day") { t, c, out in out.number(Double(c.metrics.appLaunches[t.app]) / c.days) },
            Column("submitted") { t, _, out in out.integer(t.submitted) },
            Column("started") { t, _, out in out.integer(t.started) },
            Column("runs_per_day") { t, c, out in out.number(Double(t.started) / c.days) },
        ]
        + TaskOutcome.allCases.map { o in Column(o.rawValue) { t, _, out in out.integer(t.count(o)) } }
        + [Column("unsuccessful") { t, _, out in out.integer(t.unsuccessful) }]
        + ExpirationReason.allCases.enumerated().map { k, e in
            Column("expired_\(e.rawValue)") { t, _, out in out.integer(t.expirations[k]) }
        }
        + SubmitError.allCases.enumerated().map { k, e in
            Column("rejected_\(e.token)") { t, _, out in out.integer(t.rejections[k]) }
        }
        + [
            Column("runs_charging") { t, _, out in out.integer(t.startedCharging) },
            Column("runs_wifi") { t, _, out in out.integer(t.startedOnWifi) },
            Column("runs_cellular") { t, _, out in out.integer(t.startedOnCellular) },
            Column("runs_by_hour") { t, _, out in out.list(t.startsByHour.map(String.init)) },
            Column(names: ["gap_median_s", "gap_max_s"]) { t, _, out in
                if let gaps = t.gaps.summary() {
                    out.number(gaps.quantile(0.5))
                    out.number(gaps.max)
                } else {
                    out.empty()
                    out.empty()
                }
            },
            Column("latency_mean_s") { t, _, out in
                if t.started > 0 { out.number(t.latency.seconds / Double(t.started)) } else { out.empty() }
            },
            Column("run_time_mean_s") { t, _, out in
                if t.started > 0 { out.number(t.runTime.seconds / Double(t.started)) } else { out.empty() }
            },
            Column("grant_mean_s") { t, _, out in
                if t.granted > 0 { out.number(t.grant.seconds / Double(t.granted)) } else { out.empty() }
            },
            Column("grant_used_pct") { t, _, out in
                if t.grant > .zero { out.number(100 * t.runTime.seconds / t.grant.seconds) } else { out.empty() }
            },
            Column("cpu_time_s") { t, _, out in out.seconds(t.cpuTime) },
            Column("bytes") { t, _, out in out.number(t.movedBytes) },
            Column("energy_j") { t, _, out in out.number(t.energyJ) },
            Column("energy_per_run_j") { t, _, out in
                if t.started > 0 { out.number(t.energyJ / Double(t.started)) } else { out.empty() }
            },
            Column("energy_per_day_j") { t, c, out in out.number(t.energyJ / c.days) },
            Column("charger_energy_per_day_j") { t, c, out in out.number(t.chargerEnergyJ / c.days) },
            Column("battery_pct_per_day") { t, c, out in out.number(100 * (t.energyJ - t.chargerEnergyJ) / c.days / c.batteryJ) },
            Column(names: ["staleness_mean_s", "fresh_pct"]) { t, c, out in
                let launches = c.metrics.appLaunches[t.app]
                guard t.kind == .refresh, launches > 0 else {
                    out.empty()
                    out.empty()
                    return
                }
                out.number(c.metrics.appStalenessSumS[t.app] / Double(launches))
                out.number(100 * Double(c.metrics.appFreshLaunches[t.app]) / Double(launches))
            },
            Column(names: HoldReason.allCases.map { "held_\($0.token)_s" }) { t, _, out in
                for reason in HoldReason.allCases { out.number(t.held[reason]) }
            },
            Column("held_rules") { t, _, out in
                out.list(t.rulesByTime.map { "\($0.reason)=\(CSVWriter.number($0.seconds))" })
            },
            Column("top_rule") { t, _, out in if let top = t.rulesByTime.first { out.field(top.reason) } else { out.empty() } },
        ]

    /// The columns, in order.
    package static let header: [String] = ["policy", "replication"] + columns.flatMap(\.names)

    /// One run's rows, after the prefix each row begins with.
    static func write(_ tallies: AppTallies, context: Context, to writer: PartWriter) {
        for t in tallies.sorted {
            writer.append { out in
                for c in columns { c.write(t, context, out) }
                out.endRecord()
            }
        }
    }
}
