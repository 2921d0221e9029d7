import PhoneWorld
import ResultFiles
import ScenarioFiles
import Scheduling
import SimEngine
import SimRandom

/// `tasks.csv`: one row per task of every run.
package enum TaskRows {
    /// One column, or a group written together: its names and how a task's values are
    /// written (each field's separator first, as `CSVBytes` writes it).
    struct Column: Sendable {
        let names: [String]
        let write: @Sendable (borrowing TaskRecord, borrowing [String], CSVBytes) -> Void
        init(_ name: String, _ write: @escaping @Sendable (borrowing TaskRecord, borrowing [String], CSVBytes) -> Void) {
            self.init(names: [name], write)
        }
        /// Closures capture nothing: a captured value made each call retain and release its
        /// context (the hold reasons, one column each, cost 2% of a run writing tasks.csv).
        init(names: [String], _ write: @escaping @Sendable (borrowing TaskRecord, borrowing [String], CSVBytes) -> Void) {
            self.names = names
            self.write = write
        }
    }

    /// Every column after `policy` and `replication`, each defined once: name and value
    /// together (notebooks-data/README.md says what each means).
    static let columns: [Column] =
        [
            Column("task") { r, _, out in out.integer(r.request.id.rawValue) },
            Column("app") { r, names, out in out.field(names[r.request.app]) },
            Column("identifier") { r, _, out in out.field(r.request.identifier) },
            Column("kind") { r, _, out in out.field(r.request.kind.rawValue) },
            Column("submitted_s") { r, _, out in out.seconds(r.request.submitted) },
            Column("earliest_begin_s") { r, _, out in out.seconds(r.request.earliestBegin) },
            Column("started_s") { r, _, out in out.seconds(r.started) },
            Column("ended_s") { r, _, out in out.seconds(r.ended) },
            Column("outcome") { r, _, out in out.field(r.outcome.rawValue) },
            Column("success") { r, _, out in if r.outcome == .completed { out.field(r.success ? "true" : "false") } else { out.empty() } },
            Column("rejection") { r, _, out in if let e = r.rejection { out.field(e.rawValue) } else { out.empty() } },
            Column("latency_s") { r, _, out in out.seconds(r.latency) },
            Column("completion_latency_s") { r, _, out in out.seconds(r.completionLatency) },
            Column("cpu_time_s") { r, _, out in out.seconds(r.cpuTime) },
            Column("up_bytes") { r, _, out in out.number(r.movedUpBytes) },
            Column("down_bytes") { r, _, out in out.number(r.movedDownBytes) },
            Column("energy_j") { r, _, out in out.number(r.energyJ) },
            Column("cpu_energy_j") { r, _, out in out.number(r.cpuEnergyJ) },
            Column("radio_energy_j") { r, _, out in out.number(r.radioEnergyJ) },
            Column("radio_tail_energy_j") { r, _, out in out.number(r.radioTailEnergyJ) },
            Column("charger_energy_j") { r, _, out in out.number(r.chargerEnergyJ) },
        ]
        + [
            Column(names: HoldReason.allCases.map { "held_\($0.token)_s" }) { r, _, out in
                for reason in HoldReason.allCases { out.number(r.held[reason]) }
            },
            Column("delayed_by") { r, _, out in out.list(HoldReason.allCases.filter { r.held[$0] > 0 }.map(\.token)) },
            Column("policy_reasons") { r, _, out in out.list(r.policyReasons) },
            Column("policy_reason") { r, _, out in if let first = r.policyHolds.first { out.field(first.reason) } else { out.empty() } },
        ]

    /// The columns, in order.
    package static let header: [String] = ["policy", "replication"] + columns.flatMap(\.names)

    /// The fields after `policy` and `replication`, then the line break.
    static func write(_ r: TaskRecord, appNames: [String], to out: CSVBytes) {
        // Through the buffer, calling each closure in place: a `for c in columns` copied each
        // column (its name and closure retained and released), 4% of a run writing tasks.csv.
        columns.withUnsafeBufferPointer { b in
            for i in b.indices { b[i].write(r, appNames, out) }
        }
        out.endRecord()
    }
}

/// `timeline.csv`: the phone's state sampled at an interval, in every run.
package enum TimelineRows {
    /// The columns, in order (notebooks-data/README.md defines each).
    package static let header = [
        "policy", "replication", "time_s", "charge_pct", "phone_on", "charging", "network",
        "screen_on", "foreground_app", "in_call", "low_power_mode", "tasks_running",
    ]

    static func write(_ s: TimelineSample, appNames: [String], to out: CSVBytes) {
        func flag(_ b: Bool) -> String { b ? "1" : "0" }
        out.seconds(s.time)
        out.number(100 * s.charge)
        out.field(flag(s.isOn))
        out.field(flag(s.isCharging))
        out.field(s.network.rawValue)
        out.field(flag(s.screenOn))
        if let app = s.foregroundApp { out.field(appNames[app]) } else { out.empty() }
        out.field(flag(s.inCall))
        out.field(flag(s.lowPowerMode))
        out.integer(s.tasksRunning)
        out.endRecord()
    }
}

extension Experiment {
    /// The columns that say which point a row belongs to: none for a run; for a sweep,
    /// `point` and one column per axis, named by its key path.
    static func pointHeader(_ plan: StudyPlan) -> [String] { plan.isSweep ? ["point"] + plan.parameters : [] }
    static func pointFields(_ plan: StudyPlan, _ point: Int) -> [String] {
        plan.isSweep ? [String(point)] + plan.points[point].values.map(Sweep.displayText) : []
    }

    /// A sweep's design as CSV (`bgsim validate SWEEP --points`): `scenario`, `point` and one
    /// column per axis, one row per point, with the names and values the result files give
    /// them, so the listing joins runs.csv on `point` and shows the points a sweep will run
    /// (a Latin hypercube's or Sobol sequence's coverage, say) before anything runs.
    package static func designCSV(_ plan: StudyPlan) -> String {
        let out = resultFile(plan, header: [])
        for p in plan.points.indices {
            out.fields(rowHead(plan, p))
            out.endRecord()
        }
        return out.text
    }

    /// A result file's header record, and the fields that open each of its rows at `point`
    /// (the scenario's name and the point's), written once per point. The result files are
    /// written record by record into one buffer: built as arrays of strings per row, the
    /// summary of a 2,000-point sweep took a fifteenth of the sweep (perf).
    static func resultFile(_ plan: StudyPlan, header: [String]) -> CSVBytes {
        let out = CSVBytes(capacity: 1 << 16)
        for name in ["scenario"] + pointHeader(plan) + header { out.field(name) }
        out.endRecord()
        return out
    }
    static func rowHead(_ plan: StudyPlan, _ point: Int) -> [UInt8] {
        let head = CSVBytes()
        for f in [plan.name] + pointFields(plan, point) { head.field(f) }
        return head.bytes
    }

    /// `runs.csv`: one row per (point x) policy x replication.
    package static func runsCSV<R: RunValuesProtocol>(_ scenario: Scenario, _ runs: [R]) -> String {
        runsCSV(StudyPlan(scenario: scenario), [runs])
    }

    /// `runs.csv` of a study: one row per point, policy and replication.
    package static func runsCSV<R: RunValuesProtocol>(_ plan: StudyPlan, _ runs: [[R]]) -> String { runsRows(plan, runs).text }

    static func runsRows<R: RunValuesProtocol>(_ plan: StudyPlan, _ runs: [[R]]) -> ResultRows {
        let fleet = plan.points[0].scenario.fleet.map(\.path.description)
        return ResultRows(plan, header: ["policy", "replication", "seed"] + fleet + RunMetrics.columns.map(\.name)) { point, csv in
            let head = rowHead(plan, point)
            let scenario = plan.points[point].scenario
            for run in runs[point] {
                csv.fields(head)
                csv.field(run.policy.name)
                csv.integer(run.replication)
                csv.field(String(scenario.seed))
                // The person's drawn values: a pure function of the seed and the replication.
                for value in scenario.fleetDisplayValues(replication: run.replication) { csv.field(value) }
                for (metric, value) in zip(RunMetrics.columns, run.values) { csv.number(value, count: metric.isCount) }
                csv.endRecord()
            }
        }
    }

    /// `summary.csv`: one row per (point x) policy x metric: n, mean, standard deviation, 95% t-interval.
    package static func summaryCSV(_ scenario: Scenario, _ summaries: [PolicySummary]) -> String {
        summaryCSV(StudyPlan(scenario: scenario), [summaries])
    }

    /// `summary.csv` of a study: one row per point, policy and metric.
    package static func summaryCSV(_ plan: StudyPlan, _ summaries: [[PolicySummary]]) -> String {
        summaryRows(plan) { summaries[$0] }.text
    }

    /// summary.csv's columns after the point's: a phone metric's rows leave `app` and
    /// `identifier` empty; an app's rows (a run's only) name them.
    static let summaryHeader = [
        "policy", "metric", "n", "mean", "sd", "ci95_low", "ci95_high", "ci95_half_width", "app", "identifier", "median", "p10", "p90",
        "zero_pct",
    ]

    /// The file from each point's summaries, which `summaries` makes when the point is written,
    /// then each app's rows, which `apps` makes.
    static func summaryRows(
        _ plan: StudyPlan, _ summaries: @escaping @Sendable (_ point: Int) -> [PolicySummary],
        apps: (@Sendable (_ point: Int) -> [AppSummary])? = nil
    ) -> ResultRows {
        ResultRows(plan, header: summaryHeader) { point, csv in
            let head = rowHead(plan, point)
            func write(_ ci: ConfidenceInterval, _ spread: Spread?) {
                csv.integer(ci.count)
                csv.number(ci.mean)
                csv.number(ci.standardDeviation)
                csv.number(ci.lower)
                csv.number(ci.upper)
                csv.number(ci.halfWidth)
            }
            func write(_ spread: Spread?) {
                if let spread {
                    for x in [spread.median, spread.p10, spread.p90, spread.zeroPct] { csv.number(x) }
                } else {
                    for _ in 0..<4 { csv.empty() }
                }
            }
            for s in summaries(point) {
                for (k, (metric, ci)) in zip(RunMetrics.columns, s.intervals).enumerated() {
                    csv.fields(head)
                    csv.field(s.policy.name)
                    csv.field(metric.name)
                    write(ci, nil)
                    csv.empty()
                    csv.empty()
                    write(k < s.spreads.count ? s.spreads[k] : nil)
                    csv.endRecord()
                }
            }
            for a in apps?(point) ?? [] {
                csv.fields(head)
                csv.field(a.policy.name)
                csv.field(a.metric)
                write(a.interval, nil)
                csv.field(a.app)
                csv.field(a.identifier)
                write(a.spread)
                csv.endRecord()
            }
        }
    }

    /// `comparisons.csv`: one row per (point x) policy (other than the baseline) x metric:
    /// the paired difference policy - baseline over replications.
    package static func comparisonsCSV(_ scenario: Scenario, _ comparisons: [PairedComparison]) -> String {
        comparisonsCSV(StudyPlan(scenario: scenario), [comparisons])
    }

    /// comparisons.csv's columns after the point's.
    static let comparisonsHeader = [
        "policy", "baseline", "metric", "n", "baseline_mean", "difference_mean",
        "difference_sd", "ci95_low", "ci95_high", "relative_difference_pct", "p_value",
    ]

    /// `comparisons.csv` of a study: one row per point, policy other than the baseline, and metric.
    package static func comparisonsCSV(_ plan: StudyPlan, _ comparisons: [[PairedComparison]]) -> String {
        comparisonRows(plan) { comparisons[$0] }.text
    }

    /// The file from each point's comparisons, which `comparisons` makes when the point is written.
    static func comparisonRows(_ plan: StudyPlan, _ comparisons: @escaping @Sendable (_ point: Int) -> [PairedComparison]) -> ResultRows {
        ResultRows(
            plan,
            header: comparisonsHeader
        ) { point, csv in
            let head = rowHead(plan, point)
            for c in comparisons(point) {
                let d = c.difference
                csv.fields(head)
                csv.field(c.policy.name)
                csv.field(c.baseline.name)
                csv.field(RunMetrics.columns[c.metric].name)
                csv.integer(d.count)
                for x in [c.baselineMean, d.mean, d.standardDeviation, d.lower, d.upper, 100 * c.relativeDifference, c.pValue] {
                    csv.number(x)
                }
                csv.endRecord()
            }
        }
    }
}

/// A result file of a study (runs.csv, summary.csv, comparisons.csv) as its header and a
/// function that writes one point's rows. Written to disk a point at a time
/// (`OutputContent.pieces`), a sweep's file is never whole in memory: summary.csv holds
/// about 7.6 kB a point and policy (152 MB for `Benchmarks/sweeps/points-20k.yaml`), and
/// built whole it was copied twice more on its way to disk: that sweep peaked at 700 MB,
/// now 96 MB. `text` is the whole file.
struct ResultRows: Sendable {
    let header: [String]
    let points: Int
    let write: @Sendable (_ point: Int, _ out: CSVBytes) -> Void

    init(_ plan: StudyPlan, header: [String], write: @escaping @Sendable (_ point: Int, _ out: CSVBytes) -> Void) {
        self.header = ["scenario"] + Experiment.pointHeader(plan) + header
        points = plan.points.count
        self.write = write
    }

    var text: String {
        let out = CSVBytes(capacity: 1 << 16)
        for name in header { out.field(name) }
        out.endRecord()
        for p in 0..<points { write(p, out) }
        return out.text
    }

    var content: OutputContent { .pieces(header: CSVWriter.line(header), count: points, write: write) }
}

/// `events.csv` (opt-in): every event of every run.
package enum EventRows {
    /// The columns, in order (notebooks-data/README.md defines each).
    package static let header = ["policy", "replication", "time_s", "subject", "app", "task", "event", "detail"]

    static func write(_ e: LoggedEvent, appNames: [String], to out: CSVBytes) {
        out.seconds(e.time)
        out.field(e.subject.rawValue)
        if let app = e.app { out.field(appNames[app]) } else { out.empty() }
        if let task = e.task { out.integer(task.rawValue) } else { out.empty() }
        out.field { e.write(event: &$0) }
        out.field { e.write(detail: &$0) }
        out.endRecord()
    }
}
