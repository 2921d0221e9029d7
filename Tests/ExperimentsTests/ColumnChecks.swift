import Foundation
import Policies
import Scheduling
import SimRandom
import Testing

/// What a run's event log says, per run (`policy/replication`): the lower-level rows that
/// runs.csv's, apps.csv's and tasks.csv's columns are recomputed from.
struct RunLog {
    var launches: [String: [Double]] = [:]
    /// Per task: charging and the network when it started; its expiration reasons.
    var startedOn: [String: (charging: Bool, network: String)] = [:]
    var expirations: [String: [String]] = [:]
    /// Per task: whether the charger came or went while it ran.
    var plugChanges: [Double] = []
    var counts: [String: Int] = [:]
    var lostEnergyJ = 0.0
    var offS = 0.0
    var firstShutdown: Double?
    var terminations = 0
    /// Purges that removed an app.
    var purges = 0
    var lowPowerS = 0.0

    /// Every run's log, from events.csv's rows, which are in time order per run.
    static func read(_ events: [CheckedRow], duration: Double) -> [String: RunLog] {
        var logs: [String: RunLog] = [:]
        var charging: [String: Bool] = [:], network: [String: String] = [:]
        var offAt: [String: Double] = [:], lowPowerSince: [String: Double] = [:]
        for e in events {
            let run = "\(e["policy"]!)/\(e["replication"]!)", t = e.number("time_s")!, event = e["event"]!
            var log = logs[run] ?? RunLog()
            log.counts[event, default: 0] += 1
            switch (e["subject"]!, event) {
            case ("world", "launch"): log.launches[e["app"]!, default: []].append(t)
            case ("world", "purge"): if e["app"] != "" { log.purges += 1 }
            case ("world", "plug_in"), ("world", "unplug"):
                charging[run] = event == "plug_in"
                log.plugChanges.append(t)
            case ("world", "network"): network[run] = String(e["detail"]!.split(separator: " ")[0].dropFirst("network=".count))
            case ("world", "low_power_on"): lowPowerSince[run] = t
            case ("world", "low_power_off"):
                if let since = lowPowerSince.removeValue(forKey: run) { log.lowPowerS += t - since }
            case ("task", "started"): log.startedOn[e["task"]!] = (charging[run] ?? false, network[run] ?? "none")
            case ("task", "expiration_handler"): log.expirations[e["task"]!, default: []].append(String(e["detail"]!.dropFirst("reason=".count)))
            case ("task", "result_lost"): log.lostEnergyJ += Double(e["detail"]!.dropFirst("energy_j=".count))!
            case ("phone", "shutdown"):
                offAt[run] = t
                if log.firstShutdown == nil { log.firstShutdown = t }
            case ("phone", "boot"): log.offS += Double(e["detail"]!.dropFirst("off_s=".count))!
            case ("app", _): if e["detail"]!.hasPrefix("cause=terminated") { log.terminations += 1 }
            default: break
            }
            if event == "boot" { offAt[run] = nil }
            logs[run] = log
        }
        for (run, at) in offAt { logs[run]!.offS += duration - at }
        for (run, since) in lowPowerSince { logs[run]!.lowPowerS += duration - since }
        return logs
    }
}

extension OutputInvariantTests {
    /// runs.csv's columns beyond the sums `checkRuns` checks: each recomputed from the run's
    /// tasks and events, or held to an invariant where no lower-level row records it (radio
    /// promotions, staleness, the energy components).
    func checkRunColumns(_ runs: [CheckedRow], tasks: [CheckedRow], logs: [String: RunLog], apps: [CheckedRow], duration: Double) {
        let byRun = Dictionary(grouping: tasks) { "\($0.values["policy"]!)/\($0.values["replication"]!)" }
        let appsByRun = Dictionary(grouping: apps) { "\($0.values["policy"]!)/\($0.values["replication"]!)" }
        for run in runs {
            let key = "\(run["policy"]!)/\(run["replication"]!)", log = logs[key] ?? RunLog()
            let own = byRun[key] ?? [], n = { (column: String) in run.number(column) }
            func expect(_ column: String, _ want: Double?, _ tolerance: Double = 1e-9) {
                let got = n(column)
                let ok = want.map { w in got.map { Self.near($0, w, tolerance) } ?? false } ?? (got == nil)
                #expect(ok, "runs.csv \(key) \(column): \(run[column]!), its rows give \(want.map { "\($0)" } ?? "none")")
            }
            #expect(run["scenario"] == "default")
            #expect(runs.filter { $0.values["replication"] == run.values["replication"] }.allSatisfy { $0.values["seed"] == run["seed"] })
            for e in SubmitError.allCases { expect("rejected_\(e.token)", Double(own.count { $0.values["rejection"] == e.rawValue })) }
            expect("background_launches", Double(log.counts["not_running->background"] ?? 0))
            expect("app_terminations", Double(log.terminations))
            expect("completed_pct", 100 * Double(own.count { $0.values["outcome"] == "completed" }) / Double(own.count))
            let counted = own.filter { TaskKind(rawValue: $0.values["kind"]!)!.countsLatency }
            for (stem, column) in [("latency", "latency_s"), ("completion_latency", "completion_latency_s")] {
                let sample = counted.compactMap { $0.values[column].flatMap(Double.init) }.sorted()
                expect("\(stem)_mean_s", sample.isEmpty ? nil : sample.reduce(0, +) / Double(sample.count), 1e-6)
                for (label, p) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99)] {
                    expect("\(stem)_\(label)_s", sample.isEmpty ? nil : Statistics.quantile(sorted: sample, p), 1e-6)
                }
                expect("\(stem)_max_s", sample.last, 1e-6)
            }
            let battery = own.map { $0.number("energy_j")! - $0.number("charger_energy_j")! }
            expect("background_battery_energy_j", battery.reduce(0, +), 1e-6)
            let scheduled = own.indices.filter { TaskKind(rawValue: own[$0].values["kind"]!)!.isScheduled }
            expect("scheduled_battery_energy_j", scheduled.reduce(0) { $0 + battery[$1] }, 1e-6)
            let wasted = own.filter { ["expired", "killed"].contains($0.values["outcome"]!) }.reduce(0) { $0 + $1.number("energy_j")! }
            expect("wasted_energy_j", wasted + log.lostEnergyJ, 1e-6)
            expect("lost_work", Double(log.counts["result_lost"] ?? 0))
            expect("lost_work_energy_j", log.lostEnergyJ, 1e-6)
            expect("foreground_energy_j", n("phone_energy_j")! - n("background_energy_j")! - n("energy_baseline_j")!, 1e-6)
            // The battery gave what the charger did not, and the charger may have stored more.
            let (phone, drawn, charger) = (n("phone_energy_j")!, n("battery_energy_j")!, n("charger_energy_j")!)
            #expect(
                drawn <= phone * (1 + 1e-9) && drawn >= phone - charger - 1e-6 * phone, "runs.csv \(key): battery_energy_j within phone − charger ... phone")
            #expect((charger > 0) == (log.counts["plug_in"] ?? 0 > 0), "runs.csv \(key): charger energy only with a charger")
            expect("shutdowns", Double(log.counts["shutdown"] ?? 0))
            expect("time_off_s", log.offS, 1e-6)
            expect("time_to_empty_s", log.firstShutdown, 1e-6)
            expect("low_power_s", log.lowPowerS, 1e-6)
            expect("low_power_prompts", Double(log.counts["low_power_prompt"] ?? 0))
            expect("purges", Double(log.purges))
            let launches = log.launches.values.reduce(0) { $0 + $1.count }
            expect("app_launches", Double(launches))
            #expect((1...launches).contains(Int(n("sessions")!)), "runs.csv \(key): sessions within 1...app_launches")
            #expect(runs.filter { $0.values["replication"] == run.values["replication"] }.allSatisfy { $0.values["sessions"] == run["sessions"] })
            // Predictability counts the person's drawn launches, the history before the run
            // included: no row records those, so it is a share the same under every policy.
            #expect((0...1).contains(n("launch_predictability")!), "runs.csv \(key): launch_predictability within 0...1")
            #expect(
                runs.filter { $0.values["replication"] == run.values["replication"] }.allSatisfy {
                    $0.values["launch_predictability"] == run["launch_predictability"]
                })
            #expect((0...duration).contains(n("screen_on_s")!), "runs.csv \(key): screen_on_s within the run")
            let (promotions, background) = (n("radio_promotions")!, n("radio_promotions_background")!)
            #expect(background >= 0 && background <= promotions, "runs.csv \(key): background promotions within all")
            #expect(background <= Double(log.counts["transfer"] ?? 0), "runs.csv \(key): a background promotion per transfer at most")
            // Staleness: the mean over the launches of apps with a refresh task (apps.csv's
            // per-app means, weighted by their launches); its p90 within the run; fresh a share.
            var weighted = 0.0, weight = 0.0
            for app in Set((appsByRun[key] ?? []).filter { $0.values["kind"] == "refresh" }.map { $0.values["app"]! }) {
                let row = appsByRun[key]!.first { $0.values["app"] == app && $0.values["kind"] == "refresh" }!
                guard let s = row.values["staleness_mean_s"].flatMap(Double.init) else { continue }
                weighted += s * Double(log.launches[app]?.count ?? 0)
                weight += Double(log.launches[app]?.count ?? 0)
            }
            expect("staleness_mean_s", weight > 0 ? weighted / weight : nil, 1e-6)
            #expect((0...duration).contains(n("staleness_p90_s") ?? 0), "runs.csv \(key): staleness_p90_s within the run")
            #expect((0...100).contains(n("fresh_launches_pct") ?? 0))
            let succeeded = own.count { $0.values["kind"] == "refresh" && $0.values["success"] == "true" }
            expect("refreshes_succeeded", Double(succeeded))
            #expect(n("refreshes_seen")! <= Double(succeeded), "runs.csv \(key): refreshes seen of those that succeeded")
            expect("refreshes_seen_pct", succeeded > 0 ? 100 * n("refreshes_seen")! / Double(succeeded) : nil)
        }
    }

    /// apps.csv's columns beyond the counts `checkApps` checks: each recomputed from its
    /// tasks and its run's events; the grant and staleness, which no lower-level row records,
    /// held to what ties them to the rest.
    func checkAppColumns(_ apps: [CheckedRow], tasks: [CheckedRow], logs: [String: RunLog], duration: Double, capacityJ: Double) {
        let days = duration / 86_400
        func identifier(_ t: CheckedRow) -> String {
            let id = t.values["identifier"]!
            guard TaskKind(rawValue: t.values["kind"]!)!.isNumbered else { return id }
            return id.split(separator: ".").dropLast().joined(separator: ".") + ".*"
        }
        let byKey = Dictionary(grouping: tasks) { "\($0.values["policy"]!)/\($0.values["replication"]!)/\($0.values["app"]!)/\(identifier($0))" }
        for row in apps {
            let run = "\(row["policy"]!)/\(row["replication"]!)", key = "\(run)/\(row["app"]!)/\(row["identifier"]!)"
            let own = byKey[key] ?? [], log = logs[run] ?? RunLog()
            let started = own.filter { $0.values["started_s"] != "" }
            func expect(_ column: String, _ want: Double?, _ tolerance: Double = 1e-9) {
                let got = row.number(column)
                let ok = want.map { w in got.map { Self.near($0, w, tolerance) } ?? false } ?? (got == nil)
                #expect(ok, "apps.csv \(key) \(column): \(row[column]!), its rows give \(want.map { "\($0)" } ?? "none")")
            }
            func sum(_ column: String, _ rows: [CheckedRow] = own) -> Double { rows.reduce(0) { $0 + $1.number(column)! } }
            #expect(row["kind"] == own.first?.values["kind"], "apps.csv \(key): the kind of its tasks")
            expect("days", days)
            let launches = Double(log.launches[row.values["app"]!]?.count ?? 0)
            expect("launches", launches)
            expect("launches_per_day", launches / days)
            expect("runs_per_day", Double(started.count) / days)
            expect("unsuccessful", Double(own.count { $0.values["success"] == "false" }))
            for column in row.columns(where: { $0.hasPrefix("expired_") }) {
                let reason = String(column.dropFirst("expired_".count))
                expect(column, Double(own.reduce(0) { $0 + (log.expirations[$1.values["task"]!] ?? []).count { $0 == reason } }))
            }
            for e in SubmitError.allCases { expect("rejected_\(e.token)", Double(own.count { $0.values["rejection"] == e.rawValue })) }
            let on = started.map { log.startedOn[$0.values["task"]!]! }
            expect("runs_charging", Double(on.count { $0.charging }))
            expect("runs_wifi", Double(on.count { $0.network == "wifi" }))
            expect("runs_cellular", Double(on.count { $0.network == "cellular" }))
            var hours = [Int](repeating: 0, count: 24)
            for t in started { hours[Int(t.number("started_s")! / 3600) % 24] += 1 }
            #expect(row["runs_by_hour"] == hours.map(String.init).joined(separator: ";"), "apps.csv \(key) runs_by_hour")
            let starts = started.map { $0.number("started_s")! }.sorted()
            let gaps = zip(starts, starts.dropFirst()).map { $1 - $0 }.sorted()
            expect("gap_median_s", gaps.isEmpty ? nil : Statistics.quantile(sorted: gaps, 0.5), 1e-6)
            expect("gap_max_s", gaps.last, 1e-6)
            expect("latency_mean_s", started.isEmpty ? nil : sum("latency_s", started) / Double(started.count), 1e-6)
            let runTime = started.reduce(0) { $0 + $1.number("ended_s")! - $1.number("started_s")! }
            expect("run_time_mean_s", started.isEmpty ? nil : runTime / Double(started.count), 1e-6)
            // The grant (budget, limit or finite-length time) is in no row: what was used of it
            // is the run time over it, for a kind that grants every run.
            if let mean = row.number("grant_mean_s"), let used = row.number("grant_used_pct"), row.values["kind"] == "refresh" {
                #expect(Self.near(used, 100 * runTime / (mean * Double(started.count)), 1e-6), "apps.csv \(key): grant_used_pct")
            } else {
                #expect(row.number("grant_mean_s") == nil || row.number("grant_mean_s")! > 0)
            }
            expect("cpu_time_s", sum("cpu_time_s"), 1e-6)
            expect("bytes", sum("up_bytes") + sum("down_bytes"))
            let (energy, charger) = (sum("energy_j"), sum("charger_energy_j"))
            expect("energy_per_run_j", started.isEmpty ? nil : energy / Double(started.count))
            expect("energy_per_day_j", energy / days)
            expect("charger_energy_per_day_j", charger / days)
            expect("battery_pct_per_day", 100 * (energy - charger) / days / capacityJ)
            if row.values["kind"] == "refresh", launches > 0 {
                #expect(row.number("staleness_mean_s").map { (0...duration).contains($0) } == true, "apps.csv \(key): staleness_mean_s")
                #expect(row.number("fresh_pct").map { (0...100).contains($0) } == true, "apps.csv \(key): fresh_pct")
            } else {
                #expect(row["staleness_mean_s"] == "" && row["fresh_pct"] == "", "apps.csv \(key): staleness only for a refresh row of a launched app")
            }
            for column in row.columns(where: { $0.hasPrefix("held_") && $0.hasSuffix("_s") }) { expect(column, sum(column), 1e-6) }
            let named = row["held_rules"]!.split(separator: ";").map { $0.split(separator: "=") }
            let reasons = Set(own.flatMap { $0.values["policy_reasons"]!.split(separator: ";").map(String.init) })
            #expect(Set(named.map { String($0[0]) }) == reasons, "apps.csv \(key): held_rules names its tasks' policy reasons")
            #expect(Self.near(named.reduce(0) { $0 + Double($1[1])! }, row.number("held_policy_s")!, 1e-6), "apps.csv \(key): held_rules sum")
            #expect(row["top_rule"] == named.first.map { String($0[0]) } ?? "", "apps.csv \(key): top_rule is the longest held_rules")
        }
    }
}

extension OutputInvariantTests {
    /// tasks.csv's columns that `checkTasks` does not tie to the others: who the task is (its
    /// events'), the charger's part of its energy (the charger's events'), and the policy's
    /// reasons (what the policy declares).
    func checkTaskColumns(_ tasks: [CheckedRow], events: [CheckedRow], logs: [String: RunLog], policies: Set<String>) {
        var ended: [String: (app: String, detail: String)] = [:]
        for e in events where e.values["subject"] == "task" && TaskOutcome(rawValue: e.values["event"]!) != nil {
            ended["\(e.values["policy"]!)/\(e.values["replication"]!)/\(e.values["task"]!)"] = (e.values["app"]!, e.values["detail"]!)
        }
        var failures = 0
        for row in tasks {
            let run = "\(row["policy"]!)/\(row["replication"]!)", key = "\(run)/\(row["task"]!)"
            func check(_ ok: Bool, _ what: String) {
                if !ok { failures += 1 }
                if !ok && failures <= 5 { Issue.record("tasks.csv \(key): \(what)") }
            }
            check(policies.contains(row["policy"]!) && ["0", "1"].contains(row["replication"]!), "a policy and replication of the study")
            let end = ended[key]
            check(end?.app == row["app"], "app \(row["app"]!), its end event's \(end?.app ?? "none")")
            check(end?.detail.hasPrefix("kind=\(row["kind"]!) identifier=\(row["identifier"]!)") == true, "kind and identifier those of its end event")
            let (energy, charger) = (row.number("energy_j")!, row.number("charger_energy_j")!)
            check(charger >= -1e-12 && charger <= energy * (1 + 1e-12) + 1e-12, "charger_energy_j \(charger) within 0...energy_j \(energy)")
            // Wholly on the charger or wholly off it (no plug change while it or its radio tail
            // ran): all of its energy, or none, is the charger's.
            if let begun = row.number("started_s"), let end = row.number("ended_s"), let log = logs[run],
                !log.plugChanges.contains(where: { $0 >= begun && $0 <= end + 60 })
            {
                let plugged = log.startedOn[row.values["task"]!]?.charging ?? false
                check(
                    Self.near(charger, plugged ? energy : 0, 1e-9),
                    "charger_energy_j \(charger), but it ran \(plugged ? "plugged in" : "on battery") (energy \(energy))")
            }
            let declared = Set(PolicyRegistry.type(named: row.values["policy"]!).map { $0.holdReasons + [$0.policyName] } ?? [])
            let reasons = row["policy_reasons"]!.split(separator: ";").map(String.init)
            check(Set(reasons).isSubset(of: declared), "policy_reasons \(reasons), not all declared by the policy")
            check((row.values["policy_reason"]!.isEmpty) == reasons.isEmpty, "policy_reasons filled with policy_reason")
            check(row.values["policy_reason"]! == (reasons.first ?? ""), "policy_reason the first (longest) of policy_reasons")
        }
        #expect(failures == 0, "\(failures) rows of tasks.csv disagree with their events or policy")
    }

    /// summary.csv's rows beyond their means: each run row's count, spread, quantiles and zero
    /// share are those of its metric's replications in runs.csv; each app row names an app
    /// and identifier of apps.csv.
    func checkSummaryColumns(_ summary: [CheckedRow], runs: [CheckedRow], apps: [CheckedRow]) {
        let replications = Set(runs.map { $0.values["replication"]! }).count
        let appKeys = Set(apps.map { "\($0.values["policy"]!)/\($0.values["app"]!)/\($0.values["identifier"]!)" })
        var checked = 0
        for row in summary {
            #expect(row["scenario"] == "default")
            let (policy, metric) = (row.values["policy"]!, row.values["metric"]!)
            if row["app"] != "" {
                #expect(appKeys.contains("\(policy)/\(row.values["app"]!)/\(row["identifier"]!)"), "summary.csv \(policy) \(metric): an app row of apps.csv")
                continue
            }
            #expect(row["identifier"] == "")
            let v = runs.filter { $0.values["policy"] == policy }.compactMap { $0.values[metric].flatMap(Double.init) }.filter(\.isFinite)
            guard v.count == replications, let n = row.number("n") else { continue }
            checked += 1
            let sorted = v.sorted(), mean = v.reduce(0, +) / Double(v.count)
            let sd = (v.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(v.count - 1)).squareRoot()
            #expect(n == Double(v.count), "summary.csv \(policy) \(metric): n")
            #expect(Self.near(row.number("sd") ?? .nan, sd, 1e-6), "summary.csv \(policy) \(metric): sd")
            for (column, p) in [("median", 0.5), ("p10", 0.1), ("p90", 0.9)] {
                #expect(Self.near(row.number(column) ?? .nan, Statistics.quantile(sorted: sorted, p), 1e-9), "summary.csv \(policy) \(metric): \(column)")
            }
            #expect(Self.near(row.number("zero_pct") ?? .nan, 100 * Double(v.count { $0 == 0 }) / Double(v.count)), "summary.csv \(policy) \(metric): zero_pct")
        }
        #expect(checked > 500, "summary rows checked: \(checked)")
    }
}
