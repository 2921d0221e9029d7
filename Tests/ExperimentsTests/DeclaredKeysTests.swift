import Foundation
import Mechanisms
import PhoneWorld
import Policies
import PolicyAPI
import ScenarioFiles
import Scheduling
import SimEngine
import Testing

/// Every key a scenario may set is declared once, typed by key path; these check what the
/// declarations promise across all of them: a key's unit suffix and its unit agree, and each
/// default written back reads as itself.
@Suite("Declared keys")
struct DeclaredKeysTests {
    /// Every declared key, by its path, from the world's and apps' sections, the tasks, the
    /// mechanisms' sections and the built-in policies.
    static var every: [(String, PolicyParameterInfo)] {
        var out: [(String, PolicyParameterInfo)] = []
        func walk(_ prefix: String, _ keys: [PolicyParameterInfo]) {
            for k in keys {
                out.append((prefix + k.name, k))
                nested(prefix + k.name + ".", k.kind)
            }
        }
        func nested(_ prefix: String, _ kind: PolicyParameterKind) {
            switch kind {
            case .orNone(let inner), .orFlag(let inner), .presets(_, let inner), .list(let inner, _, _): nested(prefix, inner)
            case .section(let keys): walk(prefix, keys)
            default: break
            }
        }
        for (section, keys) in Scenario.declaredSections { walk(section + ".", keys) }
        for type in MechanismRegistry.builtIn { walk("system.\(type.name).", type.systemParameters) }
        for type in PolicyRegistry.builtIn { walk("policies[\(type.policyName)].", type.parameterInfo) }
        return out
    }

    /// The unit a key's kind declares, by its suffix.
    static func suffix(of kind: PolicyParameterKind) -> String? {
        switch kind {
        case .number(_, let unit), .optionalNumber(_, let unit), .integer(_, let unit): unit.suffix
        case .distribution(.kilobytes): "_kb"
        case .orNone(let inner): suffix(of: inner)
        default: nil
        }
    }

    /// A key ending in a unit's suffix (`_pct`, `_w`, `_kb`...) is of that unit, and a key of a
    /// unit with a suffix ends in it: the key's name cannot say one unit and its reading
    /// another (`initial_charge_pct` read as a fraction, `launch_down_kb` in bytes).
    @Test func aKeysSuffixAndItsUnitAgree() {
        let all = Self.every
        #expect(all.count > 300, "\(all.count) keys")
        for (path, key) in all {
            let named = SettingUnit.suffixes.filter { key.name.hasSuffix($0) }.max { $0.count < $1.count }
            #expect(named == Self.suffix(of: key.kind), "\(path): named \(named ?? "without a unit"), declared \(Self.suffix(of: key.kind) ?? "without one")")
        }
    }

    /// Every section key's help says what it is, and no section declares a key twice.
    @Test func everyKeyHasHelpAndOneDeclaration() {
        for (section, keys) in Scenario.declaredSections {
            #expect(Set(keys.map(\.name)).count == keys.count, "\(section)")
            for k in keys { #expect(!k.help.isEmpty, "\(section).\(k.name)") }
        }
    }

    /// A percentage stored as a fraction reads back as written: 7 percent is 0.07, shown as 7.
    @Test func aUnitConvertsBothWays() {
        let percent = SettingUnit.percent("a share")
        #expect(percent.stored(7) == 0.07 && percent.written(0.07) == 7)
        let kb = SettingUnit.kilobytes()
        #expect(kb.stored(100) == 100_000 && kb.written(100_000) == 100)
        #expect(SettingUnit("a probability").stored(0.3) == 0.3)
    }
}

extension DeclaredKeysTests {
    /// docs/scenarios.md's block under "Every key of the world's and apps' sections" is what
    /// the declarations say (`BGSIM_WRITE_KEYS=1 swift test --filter DeclaredKeysTests` writes
    /// it): a key added, renamed or with a new default or range changes the page with it.
    @Test func theScenarioPageListsEveryDeclaredKey() throws {
        let url = repoRoot.appendingPathComponent("docs/scenarios.md")
        let doc = try String(contentsOf: url, encoding: .utf8)
        let marker = "### Every key of the world's and apps' sections"
        let parts = doc.components(separatedBy: marker)
        try #require(parts.count == 2, "docs/scenarios.md has no '\(marker)'")
        let open = try #require(parts[1].range(of: "```text\n"))
        let close = try #require(parts[1].range(of: "```", range: open.upperBound..<parts[1].endIndex))
        let block = String(parts[1][open.upperBound..<close.lowerBound])
        let want = Scenario.keyReference
        if ProcessInfo.processInfo.environment["BGSIM_WRITE_KEYS"] == "1", block != want {
            let rewritten = parts[0] + marker + parts[1][..<open.upperBound] + want + parts[1][close.lowerBound...]
            try rewritten.write(to: url, atomically: true, encoding: .utf8)
        } else {
            #expect(block == want, "docs/scenarios.md's key reference is not the declarations': BGSIM_WRITE_KEYS=1 rewrites it")
        }
        #expect(want.contains("phone.battery.capacity_wh: a capacity in watt-hours from more than 0 to 1000000, default 12.98; capacity\n"))
    }
}

extension DeclaredKeysTests {
    /// Every registered mechanism made from a section giving each key its default: decoding
    /// checks (in debug builds) that each key reads back what it was given, so two keys on
    /// one field, or a key converted one way and read another, stop here.
    @Test(arguments: MechanismRegistry.builtIn.map { $0.name })
    func everyMechanismsKeysReadBackTheirValues(name: String) throws {
        let type = try #require(MechanismRegistry.builtIn.first { $0.name == name })
        func full(_ keys: [PolicyParameterInfo]) -> [String: ParameterValue] {
            Dictionary(uniqueKeysWithValues: keys.map { ($0.name, $0.defaultValue) })
        }
        let section = type.isList ? MechanismValues(entries: [full(type.parameters)]) : MechanismValues(given: full(type.parameters))
        _ = type.init(apps: [section, nil], system: MechanismValues(given: full(type.systemParameters)))
    }
}
