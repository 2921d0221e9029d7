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
            BGTaskScheduler's tasks come first: their keys are declared alike, though every \
            policy decides them. A mechanism is a door into background time declared in one file: an app profile \
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
        // BGTaskScheduler's own requests first: declared alike, though every policy decides them.
        Self.show(
            RegisteredTasks.name, RegisteredTasks.summary, [("app profile", "each entry of the list tasks", RegisteredTasks.parameters)],
            streams: RegisteredTasks.streams, kinds: RegisteredTasks.kinds)
        for type in MechanismRegistry.builtIn {
            let app = type.isList ? "each entry of the list \(type.name)" : type.name
            Self.show(
                type.name, type.summary, [("app profile", app, type.parameters), ("system", "system.\(type.name)", type.systemParameters)],
                streams: type.streams.isEmpty ? "none of its own" : type.streams.map { "app.<name>.\($0)" }.joined(separator: ", "),
                kinds: type.kinds.map(\.name))
        }
    }

    static func show(_ name: String, _ summary: String, _ sections: [(String, String, [PolicyParameterInfo])], streams: String, kinds: [String]) {
        print("\(name == RegisteredTasks.name ? "" : "\n")\(name): \(summary)")
        for (title, section, keys) in sections where !keys.isEmpty {
            print("  \(title) keys (\(section)):")
            for p in keys {
                print("    \(p.name): \(p.kind.expected), \(p.isRequired ? "required" : "default \(Policies.describe(p.defaultValue, p.kind))"); \(p.help)")
            }
        }
        print("  streams: \(streams)")
        print("  task kinds: \(kinds.isEmpty ? "none of its own" : kinds.joined(separator: ", "))")
    }
}
