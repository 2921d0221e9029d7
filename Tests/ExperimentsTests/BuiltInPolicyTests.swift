import Foundation
import SimEngine
import Testing

@testable import Policies
@testable import ScenarioFiles
@testable import Scheduling

/// A built-in policy is a file in Sources/Policies and a line in
/// `PolicyRegistry.builtIn`; these fail when a step is forgotten or a declaration is wrong.
/// (`NewcomerTests` checks that docs/policies.md lists every parameter `bgsim policies` does.)
@Suite("Built-in policies")
struct BuiltInPolicyTests {
    /// Every `RegisteredPolicy` declared in the policies' folder is on the built-in list.
    @Test func everyPolicyInTheFolderIsRegistered() throws {
        let folder = repoRoot.appendingPathComponent("Sources/Policies")
        var declared: [String] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) where file.hasSuffix(".swift") {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            let pattern = /(?m)^(?:public )?(?:struct|extension) (\w+)\s*:[^{\n]*\bRegisteredPolicy\b/
            declared += text.matches(of: pattern).map { String($0.1) }
        }
        let listed = PolicyRegistry.builtIn.map { String(describing: $0) }
        // What registering a user's policy checks (names scenario files can write, no
        // parameter twice), which the registry skips for the built-in ones.
        for type in PolicyRegistry.builtIn { #expect(PolicyRegistry.checked(type) == type.policyName) }
        #expect(Set(declared) == Set(listed), "declared \(declared.sorted()), listed in PolicyRegistry.builtIn \(listed.sorted())")
        #expect(declared.count >= 6)
    }

    /// Each parameter's default, written back into a scenario, reads as the default (its kind,
    /// range and accessors agree), and a value past a finite bound is refused with the range.
    @Test(arguments: PolicyRegistry.builtIn.map { $0.policyName })
    func declarationsReadTheirDefaultsAndRefuseTheirBounds(name: String) throws {
        let type = try #require(PolicyRegistry.type(named: name))
        for p in type.parameterInfo {
            let path = "policies[0].\(p.name)"
            let written: String
            switch p.defaultValue {
            case .duration(let d): written = "\(d)"
            case .number(let x): written = "\(x)"
            case .integer(let n): written = "\(n)"
            case .flag(let b): written = "\(b)"
            case .off: written = "none"
            case .text(let t): written = t
            case .distribution, .names, .file, .section, .list:
                Issue.record("\(name).\(p.name): a policy's parameter is a single value")
                continue
            }
            let s = try Scenario.parse(
                yaml: minimalWith("policies: [eager]", "policies: [\(name)]"), file: "s.yaml",
                overrides: [Override(parsing: "\(path)=\(written)")!])
            #expect(s.policies[0] == PolicySpec(type), "\(name).\(p.name): its default \(written) reads as another value")
            let outside: String?
            switch p.kind {
            case .number(let r, _) where r.upper.isFinite: outside = "\(r.upper + 1)"
            case .integer(let r, _): outside = "\(r.upperBound + 1)"
            case .duration(let r, _): outside = "\(r.upperBound + .days(1))"
            default: outside = nil
            }
            if let outside {
                let error = parseError(minimalWith("policies: [eager]", "policies: [\(name)]"), overrides: ["\(path)=\(outside)"])
                #expect(
                    error?.description.contains("\(path): expected \(p.kind.expected)") == true,
                    "\(name).\(p.name): \(error?.description ?? "accepted \(outside)")")
            }
        }
    }
}
