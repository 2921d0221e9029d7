import ArgumentParser
import Experiments
import Scheduling

/// Lists the declared mechanisms: each one's keys in an app profile and in `system`, its
/// random streams and the task kinds it adds, from its own declaration.
struct Mechanisms: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mechanisms",
        abstract: "List the declared mechanisms, with every key of their sections.",
        discussion: """
            A mechanism is a door into background time declared in one file: an app profile \
            uses it with a section named after it, continued_processing: {per_open_pct: 10}, \
            and its phone-wide rules go in system: {continued_processing: {max_running: 2}}. \
            A section that is a list (background_work) has these keys in each entry. \
            Keys are set like any other: --set 'apps[0].continued_processing.per_open_pct=20' \
            or a sweep's axis. Each key is listed with what it accepts, its default and its \
            meaning; then the random streams (per app that has the section) and the task kinds \
            it adds to tasks.csv and runs.csv.
            """
    )

    func run() throws {
        for (i, type) in MechanismRegistry.builtIn.enumerated() {
            print("\(i == 0 ? "" : "\n")\(type.name): \(type.summary)")
            for (title, keys) in [("app profile", type.parameters), ("system", type.systemParameters)] where !keys.isEmpty {
                let section = title == "system" ? "system.\(type.name)" : type.isList ? "each entry of the list \(type.name)" : type.name
                print("  \(title) keys (\(section)):")
                for p in keys {
                    print("    \(p.name): \(p.kind.expected), \(p.isRequired ? "required" : "default \(Policies.describe(p.defaultValue, p.kind))"); \(p.help)")
                }
            }
            print("  streams: \(type.streams.isEmpty ? "none of its own" : type.streams.map { "app.<name>.\($0)" }.joined(separator: ", "))")
            print("  task kinds: \(type.kinds.isEmpty ? "none of its own" : type.kinds.map(\.name).joined(separator: ", "))")
        }
    }
}
