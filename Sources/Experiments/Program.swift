import ResultFiles
import ScenarioFiles
import Scheduling
import Synchronization

/// The executable that runs a study: `bgsim` itself, or a user's own program built on
/// `BGSimCommandLine` with its policies. A manifest names it, so a result says which program
/// (and which package's policies) made it, and its "reproduce" line calls that program.
package struct Program: Sendable, Equatable {
    /// The executable's name, as the reproduce line calls it.
    package var name: String
    /// The program's own version (bgsim's for bgsim).
    package var version: String

    /// A program called `name` at `version`.
    package init(name: String, version: String) {
        self.name = name
        self.version = version
    }

    /// bgsim itself.
    package static let bgsim = Program(name: "bgsim", version: Manifest.toolVersion)

    private static let running = Mutex(Program.bgsim)

    /// The program of this process: bgsim unless a user's executable said otherwise at start.
    package static var current: Program {
        get { running.withLock { $0 } }
        set {
            running.withLock { $0 = newValue }
            ProgramName.current = newValue.name
        }
    }

    /// Where each of `policies` comes from: its type's module, and the version of the package
    /// that supplied it (bgsim's for the built-in ones, the program's for the others).
    func origins(_ policies: [PolicySpec]) -> [(policy: String, rule: String, module: String, version: String)] {
        policies.map { p in
            let module = String(String(reflecting: p.rule.type).prefix { $0 != "." })
            let builtIn = PolicyRegistry.builtIn.contains { ObjectIdentifier($0) == ObjectIdentifier(p.rule.type) }
            return (p.name, p.rule.name, builtIn ? "bgsim" : module, builtIn ? Manifest.toolVersion : version)
        }
    }

    /// The manifest's `program` object, at `indent`; its policies one to a line.
    func json(_ policies: [PolicySpec], indent: Int) -> String {
        let pad = String(repeating: "  ", count: indent + 2)
        let list = origins(policies).map { o in
            pad + "{\"policy\": \(JSON.string(o.policy)), \"rule\": \(JSON.string(o.rule)), "
                + "\"package\": \(JSON.string(o.module)), \"version\": \(JSON.string(o.version))}"
        }
        return JSON.object(
            [
                ("name", JSON.string(name)), ("version", JSON.string(version)), ("bgsim_version", JSON.string(Manifest.toolVersion)),
                ("policies", "[\n" + list.joined(separator: ",\n") + "\n" + String(repeating: "  ", count: indent + 1) + "]"),
            ], indent: indent)
    }
}
