import Foundation
@testable import Experiments
import SimEngine
import Testing

/// The bundled default scenario, found from this file's location.
let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let defaultScenario = repoRoot.appendingPathComponent("models/scenarios/default.yaml").path

let minimal = """
    duration: 2d
    apps:
      - name: news
    policies: [eager]
    """

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
    @Test func theDefaultScenarioLoads() throws {
        let s = try Scenario.load(file: defaultScenario)
        #expect(s.name == "default")
        #expect(s.seed == 42)
        #expect(s.replications == 10)
        #expect(s.setup.duration == .days(7))
        #expect(s.setup.apps.map(\.name) == ["news", "mail", "weather", "podcasts"])
        #expect(s.policies.map(\.name) == ["eager", "charge-only"])
        #expect(s.setup.battery.capacityWh == 12.98)
        #expect(s.setup.battery.model == .linear)
        #expect(try Scenario.load(file: defaultScenario, overrides: [Override(parsing: "battery.model=kibam")!]).setup.battery.model == .kibam)
        #expect(s.setup.charging.plugIn == .hours(23))
        #expect(s.setup.refreshBudget == .seconds(30))
    }

    @Test func defaultsFillWhatAFileLeavesOut() throws {
        let s = try Scenario.parse(yaml: minimal, file: "models/minimal.yaml")
        #expect(s.name == "minimal", "named after the file")
        #expect(s.seed == 1 && s.replications == 10)
        #expect(s.setup.apps[0].refreshInterval == .hours(1))
    }

    @Test func aMissingFileIsNamed() {
        #expect(throws: ScenarioError.self) { try Scenario.load(file: "/nonexistent/x.yaml") }
        do { _ = try Scenario.load(file: "/nonexistent/x.yaml") } catch {
            #expect(error.description == "/nonexistent/x.yaml: no such scenario file")
        }
    }

    @Test(arguments: [
        // (yaml, expected message)
        ("duration: 2d\napps: [\n  {name: a\npolicies: [eager]\n",
         "s.yaml:4:9: duration: (after this key) invalid YAML: did not find expected ',' or '}' (while parsing a flow mapping at line 3)"),
        (minimal + "\nbattery:\n  capcity_wh: 10\n",
         "s.yaml:6: battery.capcity_wh: unknown key 'capcity_wh'; did you mean 'capacity_wh'? Known keys: model, capacity_wh, initial_charge_pct, idle_drain_pct_per_hour, boot_charge_pct, kibam_c, kibam_k_per_s"),
        (minimal + "\nbattery:\n  capacity_wh: -5\n",
         "s.yaml:6:16: battery.capacity_wh: expected a capacity in watt-hours > 0, got -5"),
        (minimal + "\nbattery:\n  model: lithium\n",
         "s.yaml:6:10: battery.model: unknown battery model 'lithium'; known models: linear, kibam"),
        (minimal + "\nbattery:\n  kibam_c: 1\n",
         "s.yaml:6:12: battery.kibam_c: expected a share of capacity strictly between 0 and 1, got 1"),
        (minimal + "\ncharger:\n  preset: wired-100w\n",
         "s.yaml:6:11: charger.preset: unknown charger preset 'wired-100w'; known presets: wired-5w, wired-20w, wired-27w, wireless-15w, magsafe-25w"),
        (minimal + "\ncharger:\n  optimized: maybe\n",
         "s.yaml:6:14: charger.optimized: expected true or false, got 'maybe'"),
        (minimal + "\ncharger:\n  limit_pct: 0\n",
         "s.yaml:6:14: charger.limit_pct: expected a charge limit above 0 and at most 100 (percent), got 0"),
        (minimal + "\nbattery:\n  capacity_wh: lots\n",
         "s.yaml:6:16: battery.capacity_wh: expected a capacity in watt-hours > 0, got 'lots'"),
        ("apps: [{name: a}]\npolicies: [eager]\n",
         "s.yaml:1:1: duration: missing; expected a duration such as 7d"),
        ("duration: 2 days\napps: [{name: a}]\npolicies: [eager]\n",
         "s.yaml:1:11: duration: expected a duration such as 30s, 15m, 1h30m or 7d, got '2 days'"),
        ("duration: 2d\napps: [{name: a}, {name: a}]\npolicies: [eager]\n",
         "s.yaml:2:19: apps[1].name: another app is already named 'a'"),
        ("duration: 2d\napps: [{name: a}]\npolicies: [eager, lazy]\n",
         "s.yaml:3:19: policies[1]: unknown policy 'lazy'; known policies: eager, charge-only"),
        ("duration: 2d\napps: {name: a}\npolicies: [eager]\n",
         "s.yaml:2:7: apps: expected a list, got a mapping"),
        (minimal + "\ncharging:\n  plug_in: '25:00'\n",
         "s.yaml:6:12: charging.plug_in: expected a time of day such as 23:00 (HH:MM, 24-hour), got '25:00'"),
        (minimal + "\nreplications: 0\n",
         "s.yaml:5:15: replications: expected a whole number of replications from 1 to 1000000, got '0'"),
        ("name: ..\nduration: 2d\napps: [{name: a}]\npolicies: [eager]\n",
         "s.yaml:1:7: name: expected a name of letters, digits, '.', '_' or '-', not starting with '.', got '..'"),
        ("duration: 2d\napps: [{name: a/b}]\npolicies: [eager]\n",
         "s.yaml:2:15: apps[0].name: expected a name of letters, digits, '.', '_' or '-', not starting with '.', got 'a/b'"),
        ("duration: 2d\nduration: 3d\napps: [{name: a}]\npolicies: [eager]\n",
         "s.yaml:1:1: invalid YAML: duplicate key 'duration'"),
    ])
    func badInputNamesTheFileKeyPathAndLine(yaml: String, message: String) {
        #expect(parseError(yaml)?.description == message)
    }

    @Test func aChargerPresetSetsThePowerAndPowerWWins() throws {
        let preset = try Scenario.parse(yaml: minimal + "\ncharger:\n  preset: magsafe-25w\n", file: "s.yaml")
        #expect(preset.setup.charger.powerW == 25)
        let both = try Scenario.parse(yaml: minimal + "\ncharger:\n  preset: magsafe-25w\n", file: "s.yaml",
                                      overrides: [Override(parsing: "charger.power_w=7.5")!])
        #expect(both.setup.charger.powerW == 7.5)
        let off = try Scenario.parse(yaml: minimal, file: "s.yaml", overrides: [Override(parsing: "charger.optimized=false")!])
        #expect(!off.setup.charger.optimized)
    }

    @Test func overridesReplaceAddAndAreCheckedLikeTheFile() throws {
        let s = try Scenario.parse(yaml: minimal, file: "s.yaml", overrides: [
            Override(parsing: "apps[0].refresh_every=20m")!,
            Override(parsing: "battery.capacity_wh=17.11")!,
            Override(parsing: "policies=[charge-only, eager]")!,
            Override(parsing: "seed=7")!,
        ])
        #expect(s.setup.apps[0].refreshInterval == .minutes(20))
        #expect(s.setup.battery.capacityWh == 17.11, "a key the file left out is added")
        #expect(s.policies.map(\.name) == ["charge-only", "eager"])
        #expect(s.seed == 7)
        #expect(parseError(minimal, overrides: ["battery.capacity_wh=-1"])?.description
                == "s.yaml: --set battery.capacity_wh=-1: battery.capacity_wh: expected a capacity in watt-hours > 0, got -1")
        #expect(parseError(minimal, overrides: ["apps[3].name=x"])?.description
                == "s.yaml: --set apps[3].name=x: apps: index 3 is out of range: the list has 1 item")
        #expect(parseError(minimal, overrides: ["batery.capacity_wh=5"])?.description
                == "s.yaml: --set batery.capacity_wh=5: batery: unknown key 'batery'; did you mean 'battery'? Known keys: name, duration, seed, replications, generator, battery, charging, charger, system, apps, policies")
    }
}

@Suite("Key paths, durations, overrides")
struct ConfigValueTests {
    @Test(arguments: [
        ("battery.capacity_wh", "battery.capacity_wh"), ("apps[0].name", "apps[0].name"),
        ("apps.0.name", "apps[0].name"), ("a[1][2].b", "a[1][2].b"),
    ])
    func keyPathsParse(text: String, canonical: String) {
        #expect(KeyPath(parsing: text)?.description == canonical)
    }

    @Test(arguments: ["", "a..b", ".a", "a.", "a[x]", "a[-1]", "a[1"])
    func badKeyPathsAreRejected(text: String) {
        #expect(KeyPath(parsing: text) == nil)
    }

    @Test(arguments: [
        ("30s", SimDuration.seconds(30)), ("15m", .minutes(15)), ("1h30m", .minutes(90)), ("7d", .days(7)),
        ("250ms", .milliseconds(250)), ("1.5h", .minutes(90)), ("0", .zero), ("0s", .zero), ("2d12h", .hours(60)),
    ])
    func durationsParse(text: String, value: SimDuration) {
        #expect(ConfigReader.parseDuration(text) == value)
    }

    @Test(arguments: ["", "30", "s", "3x", "1h 30m", "-5m", "h1"])
    func badDurationsAreRejected(text: String) {
        #expect(ConfigReader.parseDuration(text) == nil)
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
