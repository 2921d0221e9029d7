import Foundation
import Testing

/// A task's state (`TaskStore`) has owners: each field, and each flag, is written by the part
/// of the phone's run that owns it, and read by the others. docs/architecture.md has the
/// table; this test reads the run's source and fails when a file writes what another part owns,
/// so that moving a write is a decision, not a drift.
@Suite("Who writes the run's state")
struct RunStateOwnersTests {
    /// Per file, the fields and flags it may write.
    static let owners: [String: Set<String>] = [
        // BGTaskScheduler and the requests of mechanisms: a task's making, what it needs, its
        // wait for its earliest begin.
        "Submission.swift": [
            "earliestBegin", "status", "timer", "flags.success", "flags.forgetsCompletion", "flags.requiresExternalPower",
            "flags.requiresNetworkConnectivity",
        ],
        // Execution: starting, the budget and grant, the CPU, phases, expiration, the monitor.
        "Execution.swift": [
            "chargerJ", "cpuJ", "cpuSegmentSince", "cpuSince", "cpuTime", "deadline", "expiration", "expiresAt", "monitorEvent", "phase", "started", "status",
            "timer",
            "transferEnd", "workEnd", "work", "flags.policyLimit", "flags.started", "flags.startedCharging", "flags.startedOnWifi",
            "flags.startedOnCellular", "flags.holdsApp", "flags.overran", "flags.success", "flags.killOnExpiry",
        ],
        // Ends: the outcome, the record, the radio tail it waits for.
        "TaskEnds.swift": ["endedAt", "monitorEvent", "outcome", "rejection", "status", "timer", "flags.awaitingTail"],
        // The radios: a transfer's progress as its link serves it, and its energy.
        "Network.swift": ["leftUpBits", "leftDownBits", "transferEnd", "workEnd"],
        "Power.swift": ["chargerJ", "radioJ", "tailJ"],
        // The gates and the policy: what holds a request, and since when.
        "Decisions.swift": ["held", "heldBy", "heldSince", "policyRule"],
    ]

    /// Every write to `tasks[...]` in the run's parts (the files that extend `PhoneSimulation`):
    /// `file: field` or `file: flags.<flag>`; a field's mutating call (`held.add`) is a write.
    static func writes() throws -> [(file: String, what: String)] {
        let root = repoRoot.appendingPathComponent("Sources/Scheduling")
        var out: [(String, String)] = []
        let files = FileManager.default.enumerator(atPath: root.path)!.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        for path in files {
            let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
            let file = (path as NSString).lastPathComponent
            guard text.contains("extension PhoneSimulation") || text.contains("struct PhoneSimulation") else { continue }
            for m in text.matches(of: /(?m)(?:^|[^\w.])tasks\[[^\]\n]*\]\.(\w+)\s*(?:=(?!=)|\+=|-=)/) { out.append((file, String(m.1))) }
            for m in text.matches(of: /(?m)(?:^|[^\w.])tasks\[[^\]\n]*\]\.(\w+)\.(?:add|append|removeAll|formUnion)\(/) {
                out.append((file, String(m.1)))
            }
            for m in text.matches(of: /(?m)(?:^|[^\w.])tasks\[[^\]\n]*\]\.flags\.(?:insert|remove)\(\.(\w+)\)/) { out.append((file, "flags.\(m.1)")) }
            // A new state is made, and stored, only by submission.
            if text.contains("TaskState(") && file != "TaskState.swift" { out.append((file, "a new TaskState")) }
            if text.contains("tasks.append(") { out.append((file, "tasks.append")) }
        }
        return out
    }

    @Test func eachFieldIsWrittenOnlyByItsOwner() throws {
        let writes = try Self.writes()
        #expect(writes.count > 60, "the scan found the run's writes (\(writes.count))")
        var owners = Self.owners
        owners["Submission.swift", default: []].formUnion(["a new TaskState", "tasks.append"])
        for w in writes {
            #expect(owners[w.file]?.contains(w.what) == true, "\(w.file) writes a task's \(w.what), which it does not own")
        }
        // Every owner listed still writes what it owns: the table is the code's.
        for (file, fields) in Self.owners {
            for f in fields { #expect(writes.contains { $0.file == file && $0.what == f }, "\(file) no longer writes \(f): update the table") }
        }
    }

    /// The run's other shared state, likewise: each field written directly only by its part
    /// (a part's own methods, such as the energy books' `setScreen`, are its interface).
    static let stateOwners: [String: Set<String>] = [
        // The app life cycle: which app is in front, when each entered the background.
        "person.frontApp": ["AppLife.swift"],
        "apps[].enteredBackground": ["AppLife.swift"],
        // The person: what they are doing.
        "person.foreground": ["Person.swift"], "person.inCall": ["Person.swift"], "person.lastInUse": ["Person.swift"],
        "person.swipingAway": ["Person.swift"],
        // Execution and ends: the tasks running, and how many hold each app.
        "running": ["Execution.swift", "TaskEnds.swift"], "apps[].running": ["Execution.swift", "TaskEnds.swift"],
        // The battery, the charger and shutdown.
        "levels": ["Power.swift"], "offSince": ["Power.swift"], "optimizedRelease": ["Power.swift"], "powerChangedAt": ["Power.swift"],
        // The loop itself.
        "draining": ["PhoneSimulation.swift"], "eventStorm": ["PhoneSimulation.swift"],
        "activeMechanism": ["MechanismHosting.swift"],
    ]

    @Test func theRunsOtherStateIsWrittenOnlyByItsOwner() throws {
        let root = repoRoot.appendingPathComponent("Sources/Scheduling/Phone")
        var writes: [(file: String, what: String)] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: root.path) where file.hasSuffix(".swift") {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            guard text.contains("extension PhoneSimulation") || text.contains("struct PhoneSimulation") else { continue }
            let write =
                /(?m)^([^\n]*?)(?:^|[^\w.])(person|running|levels|offSince|optimizedRelease|powerChangedAt|draining|eventStorm|activeMechanism|apps\[[^\]\n]*\])((?:\.\w+)*)\s*(?:[-+]?=(?!=)|\.(?:append|remove\w*|insert)\()/
            for m in text.matches(of: write) {
                // A declaration is not a write.
                if m.1.hasSuffix("var") || m.1.hasSuffix("let") { continue }
                let name = m.2.hasPrefix("apps[") ? "apps[]" : String(m.2)
                let field = m.3.split(separator: ".").first.map { ".\($0)" } ?? ""
                writes.append((file, name == "person" || name == "apps[]" ? name + field : name))
            }
        }
        #expect(writes.count > 20, "the scan found the run's writes (\(writes.count))")
        for w in writes where w.what != "apps[].life" && w.what != "apps[].scheduler" {
            #expect(Self.stateOwners[w.what]?.contains(w.file) == true, "\(w.file) writes the run's \(w.what), which it does not own")
        }
    }
}
