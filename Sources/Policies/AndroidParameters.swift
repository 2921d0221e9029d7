import PolicyAPI
import SimEngine

extension AndroidPolicy {
    /// Every number of the model, as scenario keys; a bucket's quota is a mapping
    /// (`quota_rare: {time: none, max_jobs: 5}`).
    static let parameters: [PolicyParameter<Self>] =
        [
            .flag(
                "doze", help: "model Doze, deep and light (false turns both off)", get: { $0.parameters.doze.deep },
                set: {
                    $0.parameters.doze.deep = $1
                    $0.parameters.doze.light = $1
                }),
            .flag("light_doze", \.parameters.doze.light, help: "model light Doze"),
            .duration("inactive_after", \.parameters.doze.inactive, help: "deep Doze: INACTIVE, from the screen off on battery to IDLE_PENDING"),
            .duration("idle_pending", \.parameters.doze.idlePending, help: "deep Doze: IDLE_PENDING"),
            .duration("sensing", \.parameters.doze.sensing, help: "deep Doze: SENSING (the motion check's timeout)"),
            .duration("locating", \.parameters.doze.locating, help: "deep Doze: LOCATING (0s: no location provider, SENSING goes to IDLE)"),
            .duration("first_idle", \.parameters.doze.firstIdle, in: .period, help: "deep Doze: the first IDLE"),
            .duration("max_idle", \.parameters.doze.maxIdle, in: .period, help: "deep Doze: the longest IDLE"),
            .number("idle_factor", \.parameters.doze.idleFactor, in: 1...100, unit: "a factor", help: "deep Doze: each IDLE is the last times this"),
            .duration("first_window", \.parameters.doze.firstWindow, in: .positive, help: "deep Doze: the first maintenance window"),
            .duration("max_window", \.parameters.doze.maxWindow, in: .positive, help: "deep Doze: the longest maintenance window"),
            .number(
                "window_factor", \.parameters.doze.windowFactor, in: 1...100, unit: "a factor",
                help: "deep Doze: each maintenance window is the last times this"),
            .duration(
                "min_window", \.parameters.doze.minDeepMaintenance,
                help: "deep Doze: a maintenance window lasts at least this, then ends once no job runs"),
            .duration("light_after", \.parameters.doze.lightInactive, help: "light Doze: from the screen off on battery to light IDLE"),
            .duration("light_first_idle", \.parameters.doze.lightFirstIdle, in: .period, help: "light Doze: the first IDLE"),
            .duration("light_max_idle", \.parameters.doze.lightMaxIdle, in: .period, help: "light Doze: the longest IDLE"),
            .number(
                "light_idle_factor", \.parameters.doze.lightIdleFactor, in: 1...100, unit: "a factor",
                help: "light Doze: each IDLE is the last times this"),
            .duration("light_min_budget", \.parameters.doze.lightMinBudget, help: "light Doze: the least maintenance budget"),
            .duration("light_max_budget", \.parameters.doze.lightMaxBudget, help: "light Doze: the most maintenance budget"),
            .duration(
                "light_min_window", \.parameters.doze.minLightMaintenance,
                help: "light Doze: a maintenance window lasts at least this, then ends once no job runs"),
            .duration("working_set_after", \.parameters.workingSetAfter, help: "an app unused this long leaves ACTIVE for WORKING_SET"),
            .duration("frequent_after", \.parameters.frequentAfter, help: "an app unused this long (and frequent_screen) is FREQUENT"),
            .duration("rare_after", \.parameters.rareAfter, help: "an app unused this long (and rare_screen) is RARE"),
            .duration("restricted_after", \.parameters.restrictedAfter, help: "an app unused this long (and restricted_screen) is RESTRICTED"),
            .duration("frequent_screen", \.parameters.frequentScreen, help: "screen-on time since last use before FREQUENT"),
            .duration("rare_screen", \.parameters.rareScreen, help: "screen-on time since last use before RARE"),
            .duration("restricted_screen", \.parameters.restrictedScreen, help: "screen-on time since last use before RESTRICTED"),
            .flag("restricted_bucket", \.parameters.restrictedBucket, help: "apps unused long enough become RESTRICTED (Android 12+)"),
            .flag(
                "android16_defaults", help: "Android 16's adjusted quotas (ACTIVE 20 min per 60 min, WORKING_SET per 4 h, FREQUENT per 12 h)",
                get: { $0.parameters.android16 },
                set: {
                    $0.parameters.android16 = $1
                    $0.parameters.quotas = $1 ? Parameters.android16Quotas : Parameters.legacyQuotas
                }),
        ]
        + [("active", 0), ("working_set", 1), ("frequent", 2), ("rare", 3), ("restricted", 4)].flatMap { name, b in
            quotaParameters(name, b)
        }
        + [
            .duration("daily_cap", \.parameters.common.maxExecution, in: .positive, help: "most job time per app in any 24 h, over every bucket"),
            .duration("in_quota_buffer", \.parameters.common.inQuotaBuffer, help: "quota comes back once this much of it is free"),
            .duration("session_coalescing", \.parameters.common.coalescing, help: "sessions closer than this count as one"),
            .duration("rate_window", \.parameters.common.rateWindow, in: .positive, help: "the window of the rate limits"),
            .integer(
                "rate_max_jobs", \.parameters.common.maxJobsPerRateWindow, in: 1...1_000_000, unit: "a whole number of jobs",
                help: "most jobs an app starts per rate_window"),
            .integer(
                "rate_max_sessions", \.parameters.common.maxSessionsPerRateWindow, in: 1...1_000_000, unit: "a whole number of sessions",
                help: "most sessions an app starts per rate_window"),
            .flag("battery_not_low", \.parameters.batteryNotLow, help: "jobs wait while the battery is low"),
            .number(
                "low_level_pct", in: NumberRange(0...100), unit: .percentPoints("a level"), help: "the level at or below which the battery is low",
                get: { 100 * $0.parameters.lowLevel }, set: { $0.parameters.lowLevel = $1 / 100 }),
            .number(
                "low_hysteresis_pct", in: NumberRange(0...100), unit: SettingUnit("percentage points", suffix: "_pct"),
                help: "how far above the low level the battery must climb to stop being low",
                get: { 100 * $0.parameters.lowHysteresis }, set: { $0.parameters.lowHysteresis = $1 / 100 }),
            .flag("require_unmetered", \.parameters.requireUnmetered, help: "jobs need an unmetered (Wi-Fi) connection"),
        ]

    /// A bucket's four quota keys, `quota_<name>.time` and the rest.
    static func quotaParameters(_ name: String, _ b: Int) -> [PolicyParameter<Self>] {
        let bucket = name.replacingOccurrences(of: "_", with: " ")
        return [
            .optionalDuration(
                "quota_\(name).time", \.parameters.quotas[b].time, in: .positive, help: "\(bucket) bucket: job time per window (none: unlimited)"),
            .duration("quota_\(name).window", \.parameters.quotas[b].window, in: .positive, help: "\(bucket) bucket: the window its quota counts over"),
            .integer(
                "quota_\(name).max_jobs", \.parameters.quotas[b].maxJobs, in: 1...1_000_000, unit: "a whole number of jobs",
                help: "\(bucket) bucket: most jobs per window"),
            .integer(
                "quota_\(name).max_sessions", \.parameters.quotas[b].maxSessions, in: 1...1_000_000, unit: "a whole number of sessions",
                help: "\(bucket) bucket: most sessions per window (jobs less than session_coalescing apart are one)"),
        ]
    }
}
