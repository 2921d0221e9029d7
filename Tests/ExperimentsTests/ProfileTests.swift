import Foundation
import PhoneWorld
import SimEngine
import Testing

@testable import Experiments
@testable import ResultFiles
@testable import ScenarioFiles

let modelsDir = repoRoot.appendingPathComponent("models").path

func profiles(_ folder: String) -> [String] { Profiles.available(in: modelsDir + "/" + folder) }

@Suite("Profiles under models/")
struct ProfileTests {
    @Test func theRequiredProfilesExist() {
        #expect(profiles("phones").count >= 3)
        #expect(Set(["lte", "wifi", "3g", "5g"]).isSubset(of: profiles("radios")))
        #expect(Set(["light", "median", "heavy"]).isSubset(of: profiles("people")))
        #expect(Set(["nightly", "top-up", "erratic"]).isSubset(of: profiles("charging")))
        #expect(Set(["home-office", "commuter", "poor-coverage"]).isSubset(of: profiles("networks")))
    }

    /// Every profile of every kind loads in a scenario and is valid.
    @Test(arguments: [
        "phone:phones", "charging:charging", "network:networks", "people:people",
        "network.cellular_radio:radios",
    ])
    func everyProfileLoads(kind: String) throws {
        let parts = kind.split(separator: ":").map(String.init)
        for name in profiles(parts[1]) {
            let s = try Scenario.parse(yaml: minimal, file: "s.yaml", overrides: [Override(parsing: "\(parts[0])=\(name)")!])
            #expect(s.setup.apps.count == 1, "\(name)")
        }
    }

    /// The bundled scenarios take any profile of each kind: `--set network=poor-coverage` on the
    /// default scenario failed, since its reminders app watches home and work and that network
    /// named no places.
    @Test(arguments: ["default", "reference"])
    func theBundledScenariosTakeEveryProfile(scenario: String) throws {
        let file = modelsDir + "/scenarios/\(scenario).yaml"
        for (key, folder) in [
            ("phone", "phones"), ("charging", "charging"), ("network", "networks"), ("people", "people"),
            ("network.cellular_radio", "radios"),
        ] {
            for name in profiles(folder) {
                #expect(throws: Never.self, "\(scenario) with \(key)=\(name)") {
                    try Scenario.load(file: file, overrides: [Override(parsing: "\(key)=\(name)")!])
                }
            }
        }
    }

    @Test func theShippedProfilesCarryTheSourcedNumbers() throws {
        let s = try Scenario.parse(yaml: minimal, file: "s.yaml")
        let lte = s.setup.network.cellularRadio
        #expect(lte.promotion == .milliseconds(260) && lte.promotionW == 1.21)
        #expect(lte.activeW == 1.2 && lte.upWPerMbps == 0.43839 && lte.downWPerMbps == 0.05197)
        #expect(lte.tail == [TailStage(duration: .milliseconds(10_100), powerW: 1.06)])
        #expect(s.setup.network.wifiRadio.activeW == 0.403)
        let threeG = try Scenario.parse(yaml: minimal, file: "s.yaml", overrides: [Override(parsing: "network.cellular_radio=3g")!])
        #expect(threeG.setup.network.cellularRadio.tail.map(\.powerW) == [1.02, 0.40])
        #expect(s.setup.battery.capacityWh == 12.98)
        #expect(s.setup.power.screenW == 0.58)
        let proMax = try Scenario.parse(yaml: minimal, file: "s.yaml", overrides: [Override(parsing: "phone=iphone-15-pro-max")!])
        #expect(proMax.setup.battery.capacityWh == 17.11)
    }

    @Test func fieldsOverrideAProfileInPlaceOrFromTheCommandLine() throws {
        let inPlace = try Scenario.parse(yaml: minimalWith("people: median", "people: {profile: heavy, sessions_per_day: 7}"), file: "s.yaml")
        #expect(inPlace.setup.people.sessionsPerDay == 7)
        #expect(inPlace.setup.people.sessionBodyMean == .seconds(60), "the rest is heavy's")
        let set = try Scenario.parse(
            yaml: minimal, file: "s.yaml",
            overrides: [
                Override(parsing: "people.sessions_per_day=80")!,
                Override(parsing: "network.cellular_radio.active_w=2")!,
                Override(parsing: "charging=top-up")!,
            ])
        #expect(set.setup.people.sessionsPerDay == 80)
        #expect(set.setup.people.sessionBodyMean == .seconds(40), "the rest is median's")
        #expect(set.setup.network.cellularRadio.activeW == 2)
        #expect(set.setup.network.cellularRadio.promotionW == 1.21, "the rest is LTE's")
        #expect(set.setup.charging.topUpsPerDay == 1.5)
    }

    /// A value that names profiles below its key path (a whole list of apps, a network that
    /// names its radios) is resolved like the scenario's own, whatever the options' order:
    /// a sweep axis over `apps` compares phones with more or fewer apps.
    /// A sweep reads its base scenario at every point through one cache of parsed files:
    /// each file is parsed once, and a scenario read through the cache is the one read
    /// without it, whatever was read before (the cache hands out copies).
    @Test func scenariosReadThroughOneCacheParseEachFileOnce() throws {
        let text = try String(contentsOfFile: defaultScenario, encoding: .utf8)
        let documents = DocumentCache()
        let points = [["charging=top-up", "people.sessions_per_day=80"], ["charging=nightly"], ["charging=top-up"], []]
        var parsesAfterFirst = 0
        for (i, point) in points.enumerated() {
            let overrides = point.map { Override(parsing: $0)! }
            let cached = try Scenario.parse(yaml: text, file: defaultScenario, overrides: overrides, documents: documents)
            let alone = try Scenario.parse(yaml: text, file: defaultScenario, overrides: overrides)
            #expect(cached.resolvedJSON == alone.resolvedJSON, "point \(i)")
            if i == 0 { parsesAfterFirst = documents.parses }
        }
        // The scenario, its phone, charging habits, network, radios, people and apps: the
        // nightly habit is the only file the later points add.
        #expect(documents.parses == parsesAfterFirst + 1, "\(documents.parses) parses, \(parsesAfterFirst) after the first point")
    }

    @Test func aSetValueThatNamesProfilesIsResolved() throws {
        let two = try Scenario.parse(
            yaml: minimal, file: "s.yaml",
            overrides: [
                Override(parsing: "apps[1].usage_weight=3")!,
                Override(parsing: "apps=[news, {profile: mail, name: work-mail}]")!,
            ])
        #expect(two.setup.apps.map(\.name) == ["news", "work-mail"])
        #expect(two.setup.apps[1].tasks.map(\.identifier) == ["com.example.mail.fetch"], "mail's tasks")
        #expect(two.setup.apps[1].usageWeight == 3, "a field set after the list replaced it, though given before")
        let radios = try Scenario.parse(
            yaml: minimal, file: "s.yaml",
            overrides: [
                Override(parsing: "network={profile: commuter, cellular_radio: 3g}")!
            ])
        #expect(radios.setup.network.cellularRadio.tail.map(\.powerW) == [1.02, 0.40], "3g's tail")
        let message = parseError(minimal, overrides: ["apps=[news, nosuch]"])?.description ?? ""
        #expect(message.contains("apps[1]: no app model named 'nosuch'"), "\(message)")
    }

    @Test func aProfileErrorNamesTheProfileFile() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-profiles-\(getpid())")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("people"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try "sessions_per_day: 20\ncalls_per_day: lots\n".write(to: dir.appendingPathComponent("people/odd.yaml"), atomically: true, encoding: .utf8)
        try "profile: odd\n".write(to: dir.appendingPathComponent("people/loop.yaml"), atomically: true, encoding: .utf8)
        let yaml = minimalWith("people: median", "people: odd").replacingOccurrences(of: "models: \(modelsDir)", with: "models: \(dir.path)")
            .replacingOccurrences(of: "charging: nightly", with: "charging: {}")
            .replacingOccurrences(
                of: "network: home-office",
                with: "network: {wifi_radio: {name: w, active_w: 0.4}, cellular_radio: {name: c, active_w: 1}, weekday: [{at: '00:00', network: none}]}"
            )
            .replacingOccurrences(of: "phone: iphone-15", with: "phone: {}")
            .replacingOccurrences(of: "  - news", with: "  - name: news")
        #expect(
            parseError(yaml)?.description
                == "\(dir.path)/people/odd.yaml:2:16: people.calls_per_day: expected a mean number of calls per day from 0 to 1000, got 'lots'")
        #expect(
            parseError(yaml.replacingOccurrences(of: "people: odd", with: "people: loop"))?.description
                == "\(dir.path)/people/loop.yaml:1: people.profile: a people profile cannot refer to another people profile")
    }

    /// Every value of the default scenario, once its profiles are resolved, can be set from
    /// the command line and is checked: a nonsense value gives an error naming its key path.
    @Test func everyParameterIsReachableWithSetAndValidated() throws {
        let text = try String(contentsOfFile: defaultScenario, encoding: .utf8)
        let tree = try Scenario.tree(yaml: text, file: defaultScenario)
        var leaves: [ConfigKeyPath] = []
        func walk(_ n: ConfigNode, _ p: ConfigKeyPath) {
            switch n.value {
            case .scalar: leaves.append(p)
            case .mapping(let pairs): for pair in pairs { walk(pair.value, p.appending(pair.key)) }
            case .sequence(let items): for (i, item) in items.enumerated() { walk(item, p.appending(index: i)) }
            }
        }
        walk(tree, .root)
        // Free text: names, task identifiers, places and descriptions accept any name; `models` is a folder.
        let freeText: Set<String> = ["name", "description", "models", "id", "place"]
        var checked = 0
        for leaf in leaves {
            guard case .key(let last) = leaf.components.last ?? .index(0), !freeText.contains(last) else { continue }
            if leaf.components.first == .key("policies") { continue }
            let o = Override(path: leaf, value: "-7x", origin: "--set \(leaf)=-7x")
            let e = try #require(parseError(text, file: defaultScenario, overrides: [o]), "\(leaf) accepted -7x")
            #expect(e.keyPath == leaf.description, "\(leaf): \(e)")
            #expect(e.description.contains("expected") || e.description.contains("unknown"), "\(e)")
            checked += 1
        }
        #expect(checked >= 80, "checked \(checked) parameters")
    }
}

func parseError(_ yaml: String, file: String, overrides: [Override]) -> ScenarioError? {
    do {
        _ = try Scenario.parse(yaml: yaml, file: file, overrides: overrides)
        return nil
    } catch {
        return error
    }
}
