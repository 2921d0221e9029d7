import Foundation
import PhoneWorld
import Scheduling
import SimEngine
import Testing

@testable import Experiments
@testable import Policies
@testable import ResultFiles
@testable import ScenarioFiles

/// The bundled default scenario, found from this file's location.
let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let defaultScenario = repoRoot.appendingPathComponent("models/scenarios/default.yaml").path

/// The smallest complete scenario; the world comes from the repository's profiles. Tests
/// append keys after it, so keep `phone` last.
let minimal = """
    duration: 2d
    models: \(repoRoot.path)/models
    charging: nightly
    network: home-office
    people: median
    apps:
      - news
    policies: [eager]
    phone: iphone-15
    """

/// `minimal` with the phone written as a mapping, so a test can add `battery:` keys below.
let minimalPhone = String(minimal.dropLast("phone: iphone-15".count)) + "phone:\n  profile: iphone-15"

/// `minimal` with one piece of text replaced.
func minimalWith(_ old: String, _ new: String) -> String {
    precondition(minimal.contains(old), "minimal has no '\(old)'")
    return minimal.replacingOccurrences(of: old, with: new)
}

/// Bad scenarios and the exact message each must give.
let badScenarioInputs: [(yaml: String, message: String)] = [
    // (yaml, expected message)
    // A historical GSL generator: seeded with 64-bit stream seeds, ran1 crashed the run.
    (
        minimal + "\ngenerator: ran1\n",
        "s.yaml:10:12: generator: expected one of GSL's generators for simulation (mt19937, ranlxs0, ranlxs1, ranlxs2, "
            + "ranlxd1, ranlxd2, ranlux, ranlux389, cmrg, mrg, taus, taus2, taus113, gfsr4), not 'ran1'"
    ),
    (
        "duration: 2d\napps: [\n  {name: a\npolicies: [eager]\n",
        "s.yaml:4:9: duration: (after this key) invalid YAML: did not find expected ',' or '}' (while parsing a flow mapping at line 3)"
    ),
    (
        minimalPhone + "\n  battery:\n    capcity_wh: 10\n",
        "s.yaml:12: phone.battery.capcity_wh: unknown key 'capcity_wh'; did you mean 'capacity_wh'? Known keys: model, capacity_wh, initial_charge_pct, idle_drain_pct_per_hour, boot_charge_pct, kibam_c, kibam_k_per_s"
    ),
    (
        minimalPhone + "\n  battery:\n    voltage: 3.8\n",
        "s.yaml:12: phone.battery.voltage: unknown key 'voltage'; known keys: model, capacity_wh, initial_charge_pct, idle_drain_pct_per_hour, boot_charge_pct, kibam_c, kibam_k_per_s"
    ),
    (
        minimalPhone + "\n  battery:\n    capacity_wh: -5\n",
        "s.yaml:12:18: phone.battery.capacity_wh: expected a capacity in watt-hours from more than 0 to 1000000, got -5"
    ),
    (
        minimalPhone + "\n  battery:\n    model: lithium\n",
        "s.yaml:12:12: phone.battery.model: expected one of linear, kibam, got 'lithium'"
    ),
    (
        minimalPhone + "\n  battery:\n    kibam_c: 1\n",
        "s.yaml:12:14: phone.battery.kibam_c: expected a share of capacity from more than 0 to less than 1, got 1"
    ),
    (
        minimalPhone + "\n  power:\n    screen_w: -1\n",
        "s.yaml:12:15: phone.power.screen_w: expected a power in watts >= 0, got -1"
    ),
    (
        minimal + "\ncharger:\n  preset: wired-100w\n",
        "s.yaml:11:11: charger.preset: expected one of wired-5w, wired-20w, wired-27w, wireless-15w, magsafe-25w, got 'wired-100w'"
    ),
    (
        minimal + "\nsettings:\n  optimized_battery_charging: maybe\n",
        "s.yaml:11:31: settings.optimized_battery_charging: expected true or false, got 'maybe'"
    ),
    (
        minimal + "\nsettings:\n  background_app_refresh: cellular\n",
        "s.yaml:11:27: settings.background_app_refresh: expected one of off, wifi, wifi-and-cellular, got 'cellular'"
    ),
    (
        minimal + "\nsystem:\n  pushes_per_hour: 0\n",
        "s.yaml:11:20: system.pushes_per_hour: expected a whole number of pushes per hour from 1 to 3600, got '0'"
    ),
    (
        minimal + "\ncharger:\n  limit_pct: 0\n",
        "s.yaml:11:14: charger.limit_pct: expected a charge limit in percent from more than 0 to 100, got 0"
    ),
    (
        minimalPhone + "\n  battery:\n    capacity_wh: lots\n",
        "s.yaml:12:18: phone.battery.capacity_wh: expected a capacity in watt-hours from more than 0 to 1000000, got 'lots'"
    ),
    (
        "apps: [{name: a}]\npolicies: [eager]\n",
        "s.yaml:1:1: duration: missing; expected a duration such as 7d"
    ),
    (
        minimalWith("duration: 2d", "durration: 2d"),
        "s.yaml:1: durration: unknown key 'durration'; did you mean 'duration'?"
    ),
    (
        minimalWith("phone: iphone-15", "phnoe: iphone-15"),
        "s.yaml:9: phnoe: unknown key 'phnoe'; did you mean 'phone'?"
    ),
    (
        "duration: 2 days\napps: [{name: a}]\npolicies: [eager]\n",
        "s.yaml:1:11: duration: expected a duration: a number and a unit (us, ms, s, m, h, d), units joined as in 1h30m; such as 30s, 15m or 7d, got '2 days'; did you mean 2d?"
    ),
    (
        minimalWith("  - news", "  - name: a\n  - name: a"),
        "s.yaml:8:5: apps[1].name: another app is already named 'a'"
    ),
    (
        minimalWith("[eager]", "[eager, lazy]"),
        "s.yaml:8:19: policies[1].name: unknown policy 'lazy'; known policies: " + PolicyRegistry.builtIn.map { $0.policyName }.joined(separator: ", ")
            + " (a policy of your own is known only to the program built with it, not to bgsim: run the scenario with that program, the my-bgsim of docs/policies.md)"
    ),
    (
        minimalWith("policies: [eager]", "policies: [eager, {name: coalesce, max_dely: 30m}]"),
        "s.yaml:8: policies[1].max_dely: unknown key 'max_dely'; did you mean 'max_delay'? Known keys: name, label, max_delay, min_batch, ride_awake_radio, hold_on_wifi"
    ),
    (
        minimalWith("policies: [eager]", "policies: [coalesce, {name: coalesce, max_delay: 30m}]"),
        "s.yaml:8:22: policies[1]: policy label 'coalesce' is used twice; give each variant a distinct 'label'"
    ),
    (
        minimalWith("policies: [eager]", "policies: [{name: ios, threshold: -1}]"),
        "s.yaml:8:35: policies[0].threshold: expected a score threshold from 0 to 2, got -1"
    ),
    (
        minimalWith("policies: [eager]", "policies: [{name: android, quota_rare: {max_jobs: 0}}]"),
        "s.yaml:8:51: policies[0].quota_rare.max_jobs: expected a whole number of jobs from 1 to 1000000, got '0'"
    ),
    (
        minimalWith("apps:\n  - news", "apps: {name: a}"),
        "s.yaml:6:7: apps: expected a list, got a mapping"
    ),
    (
        minimalWith("charging: nightly", "charging:\n  profile: nightly\n  plug_in: '25:00'"),
        "s.yaml:5:12: charging.plug_in: expected a time of day such as 23:00 (HH:MM, 24-hour), got '25:00'"
    ),
    (
        minimalWith("charging: nightly", "charging:\n  profile: nightly\n  top_up_from: '18:00'\n  top_up_until: '09:00'"),
        "s.yaml:6:17: charging.top_up_until: expected a time of day after top_up_from"
    ),
    (
        minimal + "\nreplications: 0\n",
        "s.yaml:10:15: replications: expected a whole number of replications from 1 to 1000000, got '0'"
    ),
    (
        "name: ..\nduration: 2d\napps: [{name: a}]\npolicies: [eager]\n",
        "s.yaml:1:7: name: expected a name of letters, digits, '.', '_' or '-', not starting with '.', got '..'"
    ),
    (
        minimalWith("  - news", "  - name: a/b"),
        "s.yaml:7:11: apps[0].name: expected a name of letters, digits, '.', '_' or '-', not starting with '.', got 'a/b'"
    ),
    (
        minimalWith("  - news", "  - name: café"),
        "s.yaml:7:11: apps[0].name: expected a name of letters, digits, '.', '_' or '-', not starting with '.', got 'café'"
    ),
    (
        minimalWith("  - news", "  - name: ６"),
        "s.yaml:7:11: apps[0].name: expected a name of letters, digits, '.', '_' or '-', not starting with '.', got '６'"
    ),
    (
        "duration: 2d\nduration: 3d\napps: [{name: a}]\npolicies: [eager]\n",
        "s.yaml:1:1: invalid YAML: duplicate key 'duration'"
    ),
    (
        minimalWith("people: median", "people: average"),
        "s.yaml:5:9: people: no people profile named 'average' (looked for ./people/average.yaml, \(repoRoot.path)/models/people/average.yaml); known: heavy, light, median; a scenario's 'models' key names the folder that holds people/"
    ),
    (
        minimalWith("people: median", "people: {profile: median, sessions_per_day: -3}"),
        "s.yaml:5:45: people.sessions_per_day: expected a mean number of sessions per day from 0 to 10000, got -3"
    ),
    (
        minimalWith("people: median", "people: {profile: median, purges_per_hour: 2}"),
        "s.yaml:5: people.purges_per_hour: no longer read; purges now follow use: write purge_per_launch_pct, the chance that opening an app purges a suspended one"
    ),
    (
        minimalWith("people: median", "people: {profile: median, history: 400d}"),
        "s.yaml:5:36: people.history: expected a duration from 0s to 365d, got '400d'"
    ),
    (
        minimalWith("people: median", "people: {profile: median, hourly_weights: [1, 2]}"),
        "s.yaml:5:43: people.hourly_weights: expected 24 weights, one per hour from 00:00, got 2"
    ),
    (
        minimalWith("people: median", "people: {profile: median, session_tail_shape: 1}"),
        "s.yaml:5:47: people.session_tail_shape: expected a Pareto shape (the mean is infinite at 1 or less) from more than 1 to 100, got 1"
    ),
    (
        minimalWith("network: home-office", "network: {profile: home-office, cellular_radio: 4g}"),
        "s.yaml:4:49: network.cellular_radio: no radio profile named '4g' (looked for ./radios/4g.yaml, \(repoRoot.path)/models/radios/4g.yaml); known: 3g, 5g, lte, wifi; a scenario's 'models' key names the folder that holds radios/"
    ),
    (
        minimalWith("network: home-office", "network: {profile: home-office, weekday: [{at: '08:00', network: wifi, down_mbps: 5, up_mbps: 1}]}"),
        "s.yaml:4:48: network.weekday[0].at: the first segment must start at 00:00"
    ),
    (
        minimalWith("network: home-office", "network: {profile: home-office, weekday: [{at: '00:00', network: lan}]}"),
        "s.yaml:4:66: network.weekday[0].network: expected one of wifi, cellular, none, got 'lan'"
    ),
    (
        minimalWith("network: home-office", "network: {profile: home-office, weekday: [{at: '00:00', network: wifi, down_mbps: 0, up_mbps: 1}]}"),
        "s.yaml:4:83: network.weekday[0].down_mbps: expected a throughput in Mbit/s from 0.001 to 1000000, got 0"
    ),
    (
        minimalWith("  - news", "  - newz"),
        "s.yaml:7:5: apps[0]: no app model named 'newz' (looked for ./apps/newz.yaml, \(repoRoot.path)/models/apps/newz.yaml); known: cloud-backup, feed, fitness, game, legacy-reader, mail, maps, messenger, music, news, photos, podcasts, reminders, video-editor, weather; a scenario's 'models' key names the folder that holds apps/"
    ),
    (
        minimalWith("  - news", "  - {name: a, tasks: [{id: a.x, kind: urgent}]}"),
        "s.yaml:7:39: apps[0].tasks[0].kind: expected one of refresh, processing, got 'urgent'"
    ),
    (
        minimalWith("  - news", "  - {name: a, tasks: [{id: a.x, kind: refresh}, {id: a.x, kind: processing}]}"),
        "s.yaml:7:54: apps[0].tasks[1].id: the app already registers 'a.x'; identifiers are registered once"
    ),
    (
        minimalWith("  - news", "  - {name: a, tasks: [{id: a.x, kind: refresh, cpu: {poisson: 3s}}]}"),
        "s.yaml:7:63: apps[0].tasks[0].cpu.poisson: unknown distribution 'poisson'; expected a duration such as 3s or one of exponential, uniform or lognormal"
    ),
    (
        minimalWith("  - news", "  - {name: a, tasks: [{id: a.x, kind: refresh, down_kb: {uniform: [90, 10]}}]}"),
        "s.yaml:7:67: apps[0].tasks[0].down_kb.uniform: expected low <= high"
    ),
    (
        minimalWith("  - news", "  - {name: a, tasks: [{id: a.x, kind: refresh, submit_on: [wakeup]}]}"),
        "s.yaml:7:60: apps[0].tasks[0].submit_on[0]: expected one of start, launch, background, handler, extension, got 'wakeup'"
    ),
    (
        minimalWith("  - news", "  - {name: a, tasks: [{id: a.x, kind: refresh, requires_external_power: true}]}"),
        "s.yaml:7:73: apps[0].tasks[0].requires_external_power: only processing tasks have requirements (BGProcessingTaskRequest)"
    ),
    (
        minimal + "\nsystem:\n  background_time: ios5\n",
        "s.yaml:11:20: system.background_time: expected a duration from 1us to 36500d, or a preset: ios13 (30 s), ios7 (180 s), ios6 (600 s), got 'ios5'"
    ),
]

func parseError(_ yaml: String, overrides: [String] = []) -> ScenarioError? {
    do {
        _ = try Scenario.parse(yaml: yaml, file: "s.yaml", overrides: overrides.map { Override(parsing: $0)! })
        return nil
    } catch {
        return error
    }
}

@Suite("Scenario files")
struct ScenarioTests {
    /// A value set on the command line that is a word or a number is read without the YAML
    /// parser, into the same node the parser makes; anything else still goes to the parser.
    @Test func aPlainWordIsReadAsTheParserReadsIt() throws {
        let words = ["3", "-0.5", "+2", ".5", "1e-3", "45m", "heavy", "3g", "true", "null", "a_b.c-d", "0x1F", "NaN"]
        for text in words {
            #expect(ConfigNode.isPlainWord(text), "\(text)")
            let quick = try ConfigNode.parse(yaml: text, file: "s.yaml", origin: "--set x=\(text)")
            let parsed = try ConfigNode.parseYAML(text, file: "s.yaml", origin: "--set x=\(text)")
            #expect(quick.isIdentical(to: parsed), "\(text)")
        }
        for text in ["", "-", "- 1", "---", "...", "-.", "a b", "a:b", "07:30", "[1, 2]", "{a: 1}", "'x'", "#c", "x#", "é", "?x", "!x", "&a", "*a", "|", "@x"] {
            #expect(!ConfigNode.isPlainWord(text), "\(text)")
        }
    }

    @Test func policiesTakeParametersAndLabelsFromTheFileAndFromSet() throws {
        let yaml = minimalWith(
            "policies: [eager]",
            """
            policies:
              - eager
              - {name: coalesce, label: coalesce-30m, max_delay: 30m, min_batch: 2, hold_on_wifi: true}
              - coalesce
              - {name: ios, threshold: 0.4, max_wait: 6h, data_budget_mb_per_day: 20, refresh_battery_floor_pct: 15}
              - {name: android, doze: false, quota_rare: {time: none, max_jobs: 5}, low_level_pct: 10}
              - {name: oracle, finish_margin: 1m, ride_foreground: false}
            """)
        let s = try Scenario.parse(
            yaml: yaml, file: "s.yaml",
            overrides: [
                Override(parsing: "policies[2].max_delay=5m")!, Override(parsing: "policies[0].label=baseline")!,
            ])
        #expect(s.policies.map(\.name) == ["baseline", "coalesce-30m", "coalesce", "ios", "android", "oracle"])
        var c = CoalescePolicy.Parameters()
        c.maxDelay = .minutes(30)
        c.minBatch = 2
        c.holdOnWiFi = true
        #expect(s.policies[1].rule.type == CoalescePolicy.self && CoalescePolicy.make(s.policies[1].rule.values).parameters == c)
        var c5 = CoalescePolicy.Parameters()
        c5.maxDelay = .minutes(5)
        #expect(
            s.policies[2].rule.type == CoalescePolicy.self && CoalescePolicy.make(s.policies[2].rule.values).parameters == c5,
            "--set reaches a policy given by name alone")
        var d = DuetPolicy.Parameters()
        d.threshold = 0.4
        d.maxWait = .hours(6)
        d.dataBudgetPerDay = 20e6
        d.refreshBattery.floor = 15
        #expect(s.policies[3].rule.type == DuetPolicy.self && DuetPolicy.make(s.policies[3].rule.values).parameters == d)
        var a = AndroidPolicy.Parameters()
        a.doze.deep = false
        a.doze.light = false
        a.quotas[3] = QuotaTracker.Limits(time: nil, window: .hours(24), maxJobs: 5, maxSessions: 3)
        a.lowLevel = 0.1
        #expect(s.policies[4].rule.type == AndroidPolicy.self && AndroidPolicy.make(s.policies[4].rule.values).parameters == a)
        var o = OraclePolicy.Parameters()
        o.finishMargin = .minutes(1)
        o.rideForeground = false
        #expect(s.policies[5].rule.type == OraclePolicy.self && OraclePolicy.make(s.policies[5].rule.values).parameters == o)
        #expect(s.policies[5].isBound && !s.policies[4].isBound)
    }

    @Test func theDefaultScenarioLoads() throws {
        let s = try Scenario.load(file: defaultScenario)
        #expect(s.name == "default")
        #expect(s.seed == 42)
        #expect(s.replications == 10)
        #expect(s.setup.duration == .days(7))
        #expect(
            s.setup.apps.map(\.name) == [
                "news", "mail", "weather", "podcasts", "photos", "music", "maps", "messenger",
                "fitness", "reminders", "legacy-reader", "cloud-backup", "game",
            ])
        // One app for each way into the background (issue 9).
        let a = s.setup.apps
        #expect(
            Set(a.compactMap { if case .text(let k) = $0.mechanisms[BackgroundModes.name]?["kind"] { k } else { nil } })
                == Set(BackgroundModeKind.allCases.map(\.rawValue)))
        #expect(a.contains { $0.mechanisms[LegacyFetch.name] != nil } && a.contains { $0.mechanisms[SilentPushes.name] != nil })
        #expect(a.contains { $0.mechanisms[BackgroundTransfers.name] != nil } && a.contains { $0.mechanisms[Regions.name] != nil })
        #expect(a.contains(where: \.exitsOnSuspend) && a.contains { $0.mechanisms[StatePreservation.name]?["archive_pct"].map { $0 != .number(100) } == true })
        #expect(s.policies.map(\.name) == ["eager", "charge-only", "coalesce", "ios", "android", "oracle"])
        #expect(s.setup.battery.capacityWh == 12.98)
        #expect(s.setup.battery.model == .linear)
        #expect(try Scenario.load(file: defaultScenario, overrides: [Override(parsing: "phone.battery.model=kibam")!]).setup.battery.model == .kibam)
        #expect(s.setup.charging.plugIn == .hours(23))
        #expect(s.setup.system.refreshBudget == .seconds(30))
        #expect(s.setup.system.backgroundTime == .seconds(30), "the ios13 preset")
        #expect(s.setup.apps[4].tasks[0].requiresExternalPower)
    }

    @Test func defaultsFillWhatAFileLeavesOut() throws {
        let s = try Scenario.parse(yaml: minimal, file: "scenarios/minimal.yaml")
        #expect(s.name == "minimal", "named after the file")
        #expect(s.seed == 1 && s.replications == 10)
        #expect(s.setup.apps[0].tasks[0].interval == .hours(1), "from models/apps/news.yaml")
        #expect(s.setup.system.processingBudget == .minutes(5))
    }

    @Test func aMissingFileIsNamed() {
        #expect(throws: ScenarioError.self) { try Scenario.load(file: "/nonexistent/x.yaml") }
        do { _ = try Scenario.load(file: "/nonexistent/x.yaml") } catch {
            #expect(error.description == "/nonexistent/x.yaml: no such scenario file")
        }
    }

    @Test(arguments: badScenarioInputs)
    func badInputNamesTheFileKeyPathAndLine(yaml: String, message: String) {
        // The policy registry is one per process: RegisteredPolicyTests' test policies join
        // the known policies when that suite ran first.
        let testPolicies = [ThresholdPolicy.policyName, PeekingPolicy.policyName].map { ", \($0)" }
        let said = testPolicies.reduce(parseError(yaml)?.description ?? "") { $0.replacingOccurrences(of: $1, with: "") }
        #expect(said == message)
    }

    @Test func aChargerPresetSetsThePowerAndPowerWWins() throws {
        let preset = try Scenario.parse(yaml: minimal + "\ncharger:\n  preset: magsafe-25w\n", file: "s.yaml")
        #expect(preset.setup.charger.powerW == 25)
        let both = try Scenario.parse(
            yaml: minimal + "\ncharger:\n  preset: magsafe-25w\n", file: "s.yaml",
            overrides: [Override(parsing: "charger.power_w=7.5")!])
        #expect(both.setup.charger.powerW == 7.5)
        let off = try Scenario.parse(yaml: minimal, file: "s.yaml", overrides: [Override(parsing: "settings.optimized_battery_charging=false")!])
        #expect(!off.setup.charger.optimized)
    }

    @Test func overridesReplaceAddAndAreCheckedLikeTheFile() throws {
        let s = try Scenario.parse(
            yaml: minimal, file: "s.yaml",
            overrides: [
                Override(parsing: "apps[0].tasks[0].interval=20m")!,
                Override(parsing: "phone.battery.capacity_wh=17.11")!,
                Override(parsing: "policies=[charge-only, eager]")!,
                Override(parsing: "seed=7")!,
            ])
        #expect(s.setup.apps[0].tasks[0].interval == .minutes(20), "a key inside an app profile's list")
        #expect(s.setup.battery.capacityWh == 17.11, "a key under a profile name overrides the profile")
        #expect(s.policies.map(\.name) == ["charge-only", "eager"])
        #expect(s.seed == 7)
        #expect(
            parseError(minimal, overrides: ["phone.battery.capacity_wh=-1"])?.description
                == "s.yaml: --set phone.battery.capacity_wh=-1: phone.battery.capacity_wh: expected a capacity in watt-hours from more than 0 to 1000000, got -1"
        )
        #expect(
            parseError(minimal, overrides: ["apps[3].name=x"])?.description
                == "s.yaml: --set apps[3].name=x: apps: index 3 is out of range: the list has 1 item")
        #expect(
            parseError(minimal, overrides: ["phnoe.battery.capacity_wh=5"])?.description
                == "s.yaml: --set phnoe.battery.capacity_wh=5: phnoe: unknown key 'phnoe'; did you mean 'phone'? Known keys: name, duration, seed, replications, generator, models, phone, charging, charger, network, settings, system, apps, people, policies, metrics, load, fleet"
        )
    }
}

@Suite("Key paths, durations, overrides")
struct ConfigValueTests {
    @Test(arguments: [
        ("battery.capacity_wh", "battery.capacity_wh"), ("apps[0].name", "apps[0].name"),
        ("apps.0.name", "apps[0].name"), ("a[1][2].b", "a[1][2].b"), ("policies[ios].threshold", "policies.ios.threshold"),
    ])
    func keyPathsParse(text: String, canonical: String) {
        #expect(ConfigKeyPath(parsing: text)?.description == canonical)
    }

    @Test(arguments: ["", "a..b", ".a", "a.", "a[]", "a[-1]", "a[1", "a[[x]]"])
    func badKeyPathsAreRejected(text: String) {
        #expect(ConfigKeyPath(parsing: text) == nil)
    }

    @Test(arguments: [
        ("30s", SimDuration.seconds(30)), ("15m", .minutes(15)), ("1h30m", .minutes(90)), ("7d", .days(7)),
        ("250ms", .milliseconds(250)), ("1.5h", .minutes(90)), ("0", .zero), ("0s", .zero), ("2d12h", .hours(60)),
        ("1us", .microseconds(1)), ("0.5ms", .microseconds(500)), ("1m30s", .seconds(90)), ("1h1ms", .microseconds(3_600_001_000)),
        (" 30s\t", .seconds(30)), ("\u{3000}7d", .days(7)),
    ])
    func durationsParse(text: String, value: SimDuration) {
        #expect(ConfigReader.parseDuration(text) == value)
    }

    @Test(arguments: ["", "30", "s", "3x", "1h 30m", "-5m", "h1", "5u", "1.2.3s", "\u{663}s", "３0s", "1e3s", "30s\n", " "])
    func badDurationsAreRejected(text: String) {
        #expect(ConfigReader.parseDuration(text) == nil)
    }

    @Test func numbersMayGroupDigitsWithUnderscores() throws {
        #expect(ConfigReader.withoutUnderscores("1_000_000.5") == "1000000.5")
        #expect(ConfigReader.withoutUnderscores("250") == "250")
        #expect(ConfigReader.withoutUnderscores("_é_") == "é")
        let s = try Scenario.parse(yaml: minimal + "\nseed: 1_000\nreplications: 1_0\n", file: "s.yaml")
        #expect(s.seed == 1000 && s.replications == 10)
    }

    @Test func overridesNeedAnEqualsSignAndAPath() {
        #expect(Override(parsing: "seed=3")?.value == "3")
        #expect(Override(parsing: "a.b=x=y")?.value == "x=y")
        #expect(Override(parsing: "seed") == nil)
        #expect(Override(parsing: "=3") == nil)
    }

    @Test func editDistanceCountsEdits() {
        #expect(editDistance("capacity_wh", "capcity_wh") == 1)
        #expect(editDistance("", "abc") == 3)
        #expect(editDistance("kitten", "sitting") == 3)
    }
}
