import PolicyAPI
import SimEngine

extension DuetPolicy {
    /// A dasd priority class's battery curve.
    struct BatteryCurve: Equatable, Sendable {
        /// B, in percent: the score is zero here, and at or below B - 1 the class is constrained.
        var floor: Double
        /// k: the curve's exponent.
        var exponent: Double
        /// Maintenance work (processing): B 20, k 0.5.
        static let maintenance = BatteryCurve(floor: 20, exponent: 0.5)
        /// Utility work (refresh): B 10, k 0.4.
        static let utility = BatteryCurve(floor: 10, exponent: 0.4)
        /// User-initiated work: B 5, k 0.25.
        static let userInitiated = BatteryCurve(floor: 5, exponent: 0.25)
    }

    /// Every number of the model; each is a scenario key of the `ios` policy. Defaults come
    /// from docs/sources.md §4 where it has one and are assumptions (§12) where it does not.
    struct Parameters: Equatable, Sendable {
        // Battery (docs/sources.md §4).
        /// On battery at or below this level (percent), discretionary work must not run
        /// (WWDC20 10063: "critically low battery", about 20%).
        var criticalBattery = 20.0
        /// The battery curve of refresh requests (utility work).
        var refreshBattery = BatteryCurve.utility
        /// The battery curve of processing requests (maintenance work).
        var processingBattery = BatteryCurve.maintenance
        /// Factor on the battery score while plugged in.
        var pluggedInBonus = 1.2
        /// Level changes smaller than this (percentage points) do not rescore.
        var rescoreStep = 5.0
        /// Whether processing must not run on battery.
        var processingNeedsPower = true
        /// Weight of the battery score in the weighted mean.
        var batteryWeight = 1.0
        // Device activity.
        /// Processing runs only once the phone has been unused this long: "about 5 minutes
        /// after locking" (docs/sources.md §4 [secondary]).
        var processingIdleAfter: SimDuration = .minutes(5)
        // App usage: an app's background launches follow its use (docs/sources.md §4).
        /// Refresh launches a day an app earns per launch a day of its own, over `usageWindow`.
        var refreshesPerLaunch = 2.0
        /// The fewest refresh launches a day an app in use earns (an app not opened daily still
        /// gets about one a day until it pauses).
        var minRefreshesPerDay = 1.0
        /// The most refresh launches a day an app earns, however much it is used.
        var maxRefreshesPerDay = 8.0
        /// An app's refresh launches are at least this share of a day over its allowance apart
        /// (0.5: an app earning two a day gets them at least 6 hours apart), so that a night on
        /// the charger does not spend a day's allowance before the morning's predicted use.
        var allowanceSpread = 0.5
        /// A refresh whose application score reaches this may come sooner than that spacing
        /// (the count a day still holds): the allowance is a budget spent in bursts when use is
        /// likely, as logs show refreshes 15-21 min apart (docs/sources.md §4); `nil`: the
        /// spacing always holds.
        var burstScore: Double? = 0.5
        /// The span over which an app's launches a day are counted.
        var usageWindow: SimDuration = .days(7)
        /// An app not opened for this long gets no refresh until it is opened again.
        var pauseAfter: SimDuration = .days(2)
        /// No refresh in this span after an app's first use: the predictor has nothing to go
        /// on (a new install waits more than a day).
        var learningPeriod: SimDuration = .days(1)
        /// An app whose last background task the system had to terminate (it did not end it
        /// in time) waits this many times its usual spacing for its next refresh.
        var misbehaviourFactor = 3.0
        /// Whether a processing request waits for its app to be opened again after a
        /// processing launch (processing follows use too).
        var processingFollowsUse = true
        /// How often dasd rescores the requests it holds, counted from midnight: it rescores its
        /// list periodically (docs/sources.md §4), at a period not published. The default is
        /// the predictor's bin, over which predictions stay the same. `nil`: only when
        /// something the rules read changes, and at the times the rules name.
        var rescoreEvery: SimDuration? = .seconds(450)
        // Application rule: predicted use.
        /// How far ahead the application rule looks for predicted launches.
        var launchLookahead: SimDuration = .seconds(450)
        /// A bin's launch probability before any history.
        var defaultLaunchProbability = 0.0025
        /// A predicted probability above this counts as 1.
        var certainLaunchProbability = 0.25
        /// Weight of the application score in the weighted mean.
        var applicationWeight = 50.0
        /// Idle this long on a charger and Wi-Fi, the phone is in the window practitioners
        /// report iOS spends background time in (overnight): the application rule gives way for
        /// refresh and fetch until the app has had `idleWindowShare` of its day's allowance (at
        /// least one) in the window, deciding when, not whether, it is spent; the rest waits for
        /// predicted use.
        /// `nil`: no such window.
        var idleWindowAfter: SimDuration? = .minutes(30)
        /// The share of an app's daily allowance (at least one refresh) an idle window may spend.
        var idleWindowShare = 0.5
        // Network quality.
        /// Weight of the network quality score in the weighted mean.
        var networkWeight = 8.4
        /// Below this connection quality (0-100) work must not run: a connection too poor to
        /// use (10 is about 0.6 Mbit/s down); above it the score falls gradually with quality.
        var minNetworkQuality = 10.0
        // Budgets and rate limit: assumptions (dasd's values are not published).
        /// Energy background work may take from the battery per day, in joules (about 1% of a
        /// 12.4 Wh battery).
        var energyBudgetPerDay = 450.0
        /// Cellular bytes background work may use per day.
        var dataBudgetPerDay = 50e6
        /// Shortest time between two background launches of one app, of any kind.
        var minLaunchSpacing: SimDuration = .minutes(10)
        /// A request waiting this long must proceed; `nil`: never.
        var maxWait: SimDuration?
        /// A processing request eligible this long must proceed (when nothing absolutely
        /// forbids it) if its app was used within `processingUsedWithin`; `nil`: never. A day,
        /// so that the night after it comes due runs it within the two days the SDK names.
        var processingDueAfter: SimDuration? = .days(1)
        /// How recently the app must have been used for `processingDueAfter` to apply.
        var processingUsedWithin: SimDuration = .days(7)
        /// The weighted mean a request's scores must reach. dasd's value is unknown: 0.4 lets a
        /// refresh by day pass only near a predicted launch once the predictor knows two weeks
        /// of the person (docs/sources.md §12).
        var threshold = 0.4
        /// dasd's values where known (docs/sources.md §4), the assumptions of docs/sources.md §12 elsewhere.
        init() {}
    }

    /// Every number of the model, as scenario keys.
    static let parameters: [PolicyParameter<Self>] = [
        .number("threshold", \.parameters.threshold, in: 0...2, unit: "a score threshold", help: "the weighted mean a request's scores must reach")
            .assumption(
                0.3, 0.5,
                why:
                    "at 0.25 a by-day refresh passed at any hour with two weeks of history; above 0.5 a refresh near a predicted launch needs a near-certain one"
            ),
        .number(
            "critical_battery_pct", \.parameters.criticalBattery, in: 0...100, unit: .percentPoints("a level"),
            help: "on battery at or below this level, refresh and processing must not run"
        ).sourced("§4"),
        .number(
            "refresh_battery_floor_pct", \.parameters.refreshBattery.floor, in: NumberRange(0..<100), unit: .percentPoints("a level"),
            help: "B of refresh (utility) work: its battery score is 0 here, and at or below B - 1 it must not run"
        ).sourced("§4"),
        .number(
            "refresh_battery_exponent", \.parameters.refreshBattery.exponent, in: .above(0), unit: "an exponent",
            help: "k of refresh work's battery curve"
        ).sourced("§4"),
        .number(
            "processing_battery_floor_pct", \.parameters.processingBattery.floor, in: NumberRange(0..<100), unit: .percentPoints("a level"),
            help: "B of processing (maintenance) work"
        ).sourced("§4"),
        .number(
            "processing_battery_exponent", \.parameters.processingBattery.exponent, in: .above(0), unit: "an exponent",
            help: "k of processing work's battery curve"
        ).sourced("§4"),
        .number("plugged_in_bonus", \.parameters.pluggedInBonus, in: NumberRange(1...), unit: "a factor", help: "factor on the battery score while plugged in")
            .sourced("§4"),
        .number(
            "rescore_step_pct", \.parameters.rescoreStep, in: 0...100, unit: SettingUnit("percentage points", suffix: "_pct"),
            help: "level changes smaller than this do not rescore the battery"
        ).sourced("§4"),
        .flag("processing_needs_power", \.parameters.processingNeedsPower, help: "processing must not run on battery").sourced("§4"),
        .duration(
            "processing_idle_after", \.parameters.processingIdleAfter,
            help: "processing runs only once the phone has been unused this long"
        ).sourced("§4"),
        .number(
            "refreshes_per_launch", \.parameters.refreshesPerLaunch, in: NumberRange(0...), unit: "refreshes a day per launch a day",
            help: "refresh launches a day an app earns per launch a day of its own, over usage_window"
        )
        .assumption(1, 4, why: "from 1 to about 4 the app opened daily stays in the 1-4 refreshes a day developers see"),
        .number(
            "min_refreshes_per_day", \.parameters.minRefreshesPerDay, in: NumberRange(0...), unit: .perDay("refreshes"),
            help: "the fewest refresh launches a day an app in use earns"
        )
        .assumption(0.5, 1, why: "an app not opened daily gets one a day at most; below a half it would look paused"),
        .number(
            "max_refreshes_per_day", \.parameters.maxRefreshesPerDay, in: NumberRange(0...), unit: .perDay("refreshes"),
            help: "the most refresh launches a day an app earns"
        )
        .assumption(4, 12, why: "developers see 1-4 a day for daily use and up to 9-10 a day on older iOS; the cap binds for the most used apps only"),
        .number(
            "allowance_spread", \.parameters.allowanceSpread, in: 0...1, unit: "a share of a day per refresh",
            help: "an app's refresh launches are at least this share of a day over its allowance apart"
        )
        .assumption(0.25, 0.75, why: "no source says how evenly an allowance is spread; above 0, a night on the charger cannot spend a whole day's"),
        .optionalNumber(
            "burst_score", \.parameters.burstScore, in: NumberRange(0...1), unit: "an application score",
            help: "a refresh whose application score reaches this may come sooner than allowance_spread (none: never)"
        )
        .assumption(
            0.3, 0.8,
            why:
                "0.5 is the score of a launch as likely as dasd's certain bin; 0.3 lets bursts come in most predicted hours, 0.8 only before near-certain launches"
        ),
        .duration("usage_window", \.parameters.usageWindow, in: .positive, help: "the span over which an app's launches a day are counted")
            .assumption(.days(3), .days(14), why: "an app's use counted over days to weeks; the system keeps about two weeks of history"),
        .duration("pause_after", \.parameters.pauseAfter, in: .positive, help: "an app not opened for this long gets no refresh until opened")
            .assumption(.days(1), .days(4), why: "maintainers: refreshes pause if the app is not opened daily, and the less it is opened the fewer"),
        .duration("learning_period", \.parameters.learningPeriod, help: "no refresh in this span after an app's first use")
            .assumption(.hours(12), .days(3), why: "a new install waits more than 24 h for its first refresh, and days before refreshes come regularly"),
        .number(
            "misbehaviour_factor", \.parameters.misbehaviourFactor, in: NumberRange(1...), unit: "a factor",
            help: "an app whose last task the system terminated for overrunning waits this many times its spacing"
        )
        .assumption(1.5, 5, why: "Apple says an app that overruns is launched less, with no figure"),
        .flag(
            "processing_follows_use", \.parameters.processingFollowsUse,
            help: "after a processing launch, an app's processing waits until the app is opened again"
        ).assumption(0, 1, why: "processing follows use as refresh does; whether a processing launch waits for the next use is not published"),
        .optionalDuration(
            "rescore_every", \.parameters.rescoreEvery, in: .microseconds(1)...(.days(1)),
            help: "how often the requests held are scored again, from midnight (none: only when an input changes and at the times the rules name)"
        )
        .assumption(.minutes(2), .minutes(30), why: "dasd rescores its list periodically, at a period not published; 7.5 min is the predictor's bin"),
        .duration(
            "launch_lookahead", \.parameters.launchLookahead, in: .microseconds(1)...(.days(1)),
            help: "how far ahead the application rule looks for predicted launches (at most a day: each request's score reads every 7.5-minute bin in it)"
        ).sourced("§4"),
        .number(
            "default_launch_probability", \.parameters.defaultLaunchProbability, in: 0...1, unit: "a probability",
            help: "a bin's launch probability before any history"
        ).sourced("§4"),
        .number(
            "certain_launch_probability", \.parameters.certainLaunchProbability, in: 0...1, unit: "a probability",
            help: "a predicted probability above this counts as 1"
        ).sourced("§4"),
        .number("battery_weight", \.parameters.batteryWeight, in: NumberRange(0...), unit: "a weight", help: "weight of the battery score").sourced("§4"),
        .number("application_weight", \.parameters.applicationWeight, in: NumberRange(0...), unit: "a weight", help: "weight of the application score").sourced(
            "§4"),
        .number("network_weight", \.parameters.networkWeight, in: NumberRange(0...), unit: "a weight", help: "weight of the network quality score").sourced(
            "§4"),
        .number(
            "min_network_quality", \.parameters.minNetworkQuality, in: 0...100, unit: "a quality",
            help: "below this connection quality (0-100) work must not run"
        )
        .assumption(5, 30, why: "a log showed a Wi-Fi quality of 50 required, which blacks out ordinary connections where developers see refreshes"),
        .number(
            "energy_budget_j_per_day", \.parameters.energyBudgetPerDay, in: NumberRange(0...), unit: .perDay("joules"),
            help: "battery energy background work may take per day"
        )
        .assumption(150, 1500, why: "WWDC names an energy budget handed out over the day, with no size: from a third of a percent to 3% of a 12.4 Wh battery"),
        .number(
            "data_budget_mb_per_day", in: NumberRange(0...), unit: .perDay("megabytes"), help: "cellular data background work may use per day",
            get: { $0.parameters.dataBudgetPerDay / 1e6 }, set: { $0.parameters.dataBudgetPerDay = $1 * 1e6 }
        )
        .assumption(10, 200, why: "WWDC names a data budget, with no size; Apple asks for refreshes under 100 KB"),
        .duration("min_launch_spacing", \.parameters.minLaunchSpacing, help: "shortest time between two background launches of one app")
            .assumption(.minutes(5), .minutes(30), why: "WWDC names rate limiting with no period; apps ask for refreshes 15 min apart at the most"),
        .optionalDuration(
            "max_wait", \.parameters.maxWait, in: .positive, help: "a request waiting this long must run (none: never)"
        ).sourced("a what-if, off by default"),
        .optionalDuration(
            "processing_due_after", \.parameters.processingDueAfter, in: .positive,
            help: "a processing request waiting this long must run, if its app was used recently (none: never)"
        )
        .assumption(.hours(12), .days(2), why: "the SDK tries to run a request within two days of its app's use"),
        .duration(
            "processing_used_within", \.parameters.processingUsedWithin, in: .positive,
            help: "how recently the app must have been used for processing_due_after"
        ).sourced("§2"),
        .optionalDuration(
            "idle_window_after", \.parameters.idleWindowAfter,
            help: "idle this long on a charger and Wi-Fi, refresh and fetch skip the application rule (none: never)"
        )
        .assumption(
            .minutes(10), .hours(2),
            why: "practitioners see background time overnight on the charger with the phone idle, with no figure; processing waits about 5 min after locking"),
        .number(
            "idle_window_share", \.parameters.idleWindowShare, in: 0...1, unit: "a share of the allowance",
            help: "the share of an app's daily allowance (at least one) an idle window may spend"
        )
        .assumption(0.25, 1, why: "how much of an app's day the night may spend is not published"),
    ]
}
