import ResultFiles
import Scheduling
import SimEngine

/// Reading a policy entry: `{name: coalesce, label: coalesce-30m, max_delay: 30m}`. Every
/// parameter is optional (defaults: `Sources/Scheduling/Policies`, documented in the README);
/// unknown keys are errors that name the known ones.
extension Scenario {
    static func readPolicy(_ node: ConfigNode, _ path: ConfigKeyPath, _ r: ConfigReader) throws(ScenarioError) -> PolicySpec {
        var m = try r.mapping(node, at: path)
        let known = PolicySpec.Rule.names.joined(separator: ", ")
        let name = try m.required("name", "a policy name (\(known))") { n, p throws(ScenarioError) in try r.string(n, p) }
        let label = try m.optional("label", default: String?.none) { n, p throws(ScenarioError) in try r.name(n, p) }
        var fields = Fields(m: m, r: r)
        let rule: PolicySpec.Rule
        switch try self.rule(named: name, node, path.appending("name"), r) {
        case .eager: rule = .eager
        case .chargeOnly: rule = .chargeOnly
        case .coalesce(var c):
            try fields.duration("max_delay", &c.maxDelay, zero: true)
            try fields.integer("min_batch", &c.minBatch, 1...10_000)
            try fields.bool("ride_awake_radio", &c.rideAwakeRadio)
            try fields.bool("hold_on_wifi", &c.holdOnWiFi)
            rule = .coalesce(c)
        case .ios(var d):
            try fields.number("threshold", &d.threshold, "a score threshold from 0 to 2") { (0...2).contains($0) }
            try fields.number("refresh_battery_floor_pct", &d.refreshBattery.floor, "a level from 0 to 99 (percent)") { (0..<100).contains($0) }
            try fields.number("refresh_battery_exponent", &d.refreshBattery.exponent, "an exponent > 0") { $0 > 0 }
            try fields.number("processing_battery_floor_pct", &d.processingBattery.floor, "a level from 0 to 99 (percent)") { (0..<100).contains($0) }
            try fields.number("processing_battery_exponent", &d.processingBattery.exponent, "an exponent > 0") { $0 > 0 }
            try fields.number("plugged_in_bonus", &d.pluggedInBonus, "a factor >= 1") { $0 >= 1 }
            try fields.number("rescore_step_pct", &d.rescoreStep, "percentage points from 0 to 100") { (0...100).contains($0) }
            try fields.bool("processing_needs_power", &d.processingNeedsPower)
            try fields.number("low_power_level_pct", &d.lowPowerLevel, "a level from 0 to 100 (percent)") { (0...100).contains($0) }
            try fields.duration("launch_lookahead", &d.launchLookahead)
            try fields.number("default_launch_probability", &d.defaultLaunchProbability, "a probability from 0 to 1") { (0...1).contains($0) }
            try fields.number("certain_launch_probability", &d.certainLaunchProbability, "a probability from 0 to 1") { (0...1).contains($0) }
            try fields.number("battery_weight", &d.batteryWeight, "a weight >= 0") { $0 >= 0 }
            try fields.number("application_weight", &d.applicationWeight, "a weight >= 0") { $0 >= 0 }
            try fields.number("network_weight", &d.networkWeight, "a weight >= 0") { $0 >= 0 }
            try fields.number("min_network_quality", &d.minNetworkQuality, "a quality from 0 to 100") { (0...100).contains($0) }
            try fields.number("energy_budget_j_per_day", &d.energyBudgetPerDay, "joules per day >= 0") { $0 >= 0 }
            var mb = d.dataBudgetPerDay / 1e6
            try fields.number("data_budget_mb_per_day", &mb, "megabytes per day >= 0") { $0 >= 0 }
            d.dataBudgetPerDay = mb * 1e6
            try fields.duration("min_launch_spacing", &d.minLaunchSpacing, zero: true)
            try fields.optionalDuration("max_wait", &d.maxWait)
            rule = .ios(d)
        case .android(var a):
            try fields.bool("doze", &a.doze)
            try fields.duration("inactive_after", &a.inactiveAfter, zero: true)
            try fields.duration("first_idle", &a.firstIdle)
            try fields.duration("max_idle", &a.maxIdle)
            try fields.duration("first_window", &a.firstWindow)
            try fields.duration("max_window", &a.maxWindow)
            try fields.duration("active_within", &a.activeWithin)
            try fields.duration("working_set_within", &a.workingSetWithin)
            try fields.duration("frequent_within", &a.frequentWithin)
            for (b, key) in ["active", "working_set", "frequent", "rare"].enumerated() {
                try fields.quota("quota_\(key)", &a.quotas[b])
            }
            try fields.duration("daily_cap", &a.dailyCap)
            try fields.bool("battery_not_low", &a.batteryNotLow)
            var low = 100 * a.lowLevel, hysteresis = 100 * a.lowHysteresis
            try fields.number("low_level_pct", &low, "a level from 0 to 100 (percent)") { (0...100).contains($0) }
            try fields.number("low_hysteresis_pct", &hysteresis, "percentage points from 0 to 100") { (0...100).contains($0) }
            a.lowLevel = low / 100
            a.lowHysteresis = hysteresis / 100
            try fields.bool("require_unmetered", &a.requireUnmetered)
            rule = .android(a)
        case .oracle(var o):
            try fields.duration("finish_margin", &o.finishMargin, zero: true)
            try fields.bool("ride_foreground", &o.rideForeground)
            rule = .oracle(o)
        case .registered(var registered):
            for parameter in registered.type.parameterInfo {
                if let value = try fields.declared(parameter) { registered.values[parameter.name] = value }
            }
            rule = .registered(registered)
        }
        try fields.m.finish()
        return PolicySpec(rule, label: label)
    }

    /// Optional keys of a policy mapping, each written into a parameter when present.
    struct Fields {
        var m: ConfigReader.Mapping
        let r: ConfigReader

        mutating func duration(_ key: String, _ value: inout SimDuration, zero: Bool = false) throws(ScenarioError) {
            let r = self.r
            value = try m.optional(key, default: value) { n, p throws(ScenarioError) in try r.duration(n, p, allowZero: zero) }
        }

        mutating func optionalDuration(_ key: String, _ value: inout SimDuration?) throws(ScenarioError) {
            let r = self.r
            value = try m.optional(key, default: value) { n, p throws(ScenarioError) in try r.duration(n, p) }
        }

        mutating func number(
            _ key: String, _ value: inout Double, _ what: String,
            where valid: (Double) -> Bool
        ) throws(ScenarioError) {
            let r = self.r
            value = try m.optional(key, default: value) { n, p throws(ScenarioError) in try r.number(n, p, what, where: valid) }
        }

        mutating func integer(_ key: String, _ value: inout Int, _ range: ClosedRange<Int>) throws(ScenarioError) {
            let r = self.r
            value = try m.optional(key, default: value) { n, p throws(ScenarioError) in
                try r.integer(n, p, "a whole number from \(range.lowerBound) to \(range.upperBound)", in: range)
            }
        }

        mutating func bool(_ key: String, _ value: inout Bool) throws(ScenarioError) {
            let r = self.r
            value = try m.optional(key, default: value) { n, p throws(ScenarioError) in try r.bool(n, p) }
        }

        /// A registered policy's parameter, read and checked as its declaration says; `nil`
        /// when the entry leaves it out.
        mutating func declared(_ parameter: PolicyParameterInfo) throws(ScenarioError) -> PolicyParameterValue? {
            let r = self.r
            return try m.optional(parameter.name, default: PolicyParameterValue?.none) { n, p throws(ScenarioError) in
                switch parameter.kind {
                case .duration(let range):
                    let d = try r.duration(n, p, allowZero: true)
                    guard range.contains(d) else {
                        throw r.error(n, p, "expected a duration from \(range.lowerBound) to \(range.upperBound), got \(d)")
                    }
                    return .duration(d)
                case .number(let range, let unit):
                    func show(_ x: Double) -> String { x == x.rounded() && abs(x) < 1e15 ? String(Int64(x)) : CSVWriter.number(x) }
                    let what = "\(unit) from \(show(range.lowerBound)) to \(show(range.upperBound))"
                    return .number(try r.number(n, p, what) { range.contains($0) })
                case .integer(let range):
                    return .integer(try r.integer(n, p, "a whole number from \(range.lowerBound) to \(range.upperBound)", in: range))
                case .flag:
                    return .flag(try r.bool(n, p))
                }
            }
        }

        /// `{time: 10m, window: 2h, max_jobs: 120}`; `time: none` for no time quota.
        mutating func quota(_ key: String, _ value: inout AndroidPolicy.Quota) throws(ScenarioError) {
            let r = self.r
            value = try m.optional(key, default: value) { [value] n, p throws(ScenarioError) in
                var q = try r.mapping(n, at: p)
                var out = value
                out.time = try q.optional("time", default: out.time) { n, p throws(ScenarioError) in
                    if case .scalar("none", _) = n.value { return nil }
                    return try r.duration(n, p)
                }
                out.window = try q.optional("window", default: out.window) { n, p throws(ScenarioError) in try r.duration(n, p) }
                out.maxJobs = try q.optional("max_jobs", default: out.maxJobs) { n, p throws(ScenarioError) in
                    try r.integer(n, p, "a whole number of jobs from 1 to 1000000", in: 1...1_000_000)
                }
                try q.finish()
                return out
            }
        }
    }
}
