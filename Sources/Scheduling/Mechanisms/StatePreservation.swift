import PhoneWorld
import SimEngine

/// A result of background work the app holds in memory only.
struct LostWork {
    var task: Int
    var work: SimDuration
    var upBytes, downBytes: Double
    var energyJ: Double
}

/// Per app, results of completed background work not yet archived, and those lost with the
/// process, to redo at the next launch.
struct UnsavedWork {
    var unsaved: [[LostWork]]
    var lost: [[LostWork]]

    init(apps: Int) {
        unsaved = Array(repeating: [], count: apps)
        lost = Array(repeating: [], count: apps)
    }

    /// The app archived everything it held.
    mutating func clear(_ app: Int) { if !unsaved[app].isEmpty { unsaved[app].removeAll() } }
}

/// State preservation (`state_preservation`): an app that does not archive what its background
/// work produced loses it with its process, and redoes the work at its next launch.
extension PhoneSimulation {
    /// Whether a completed task of this kind leaves a result the app must archive.
    @inline(__always)
    static func producesResult(_ kind: TaskKind) -> Bool { kind.producesResult }

    /// Draws whether the app archives this task's result, and adds the archiving's CPU time
    /// to its work.
    mutating func drawArchive(_ id: TaskID) {
        let i = id.rawValue, app = tasks[i].appIndex
        guard Self.producesResult(tasks[i].kind) else { return }
        let p = model.apps[app].archiveProbability
        let archives = streams.appArchive[app]?.bernoulli(p) ?? (p > 0)
        if archives {
            tasks[i].flags.insert(.archives)
            tasks[i].work += model.apps[app].archiveCPU
        } else {
            tasks[i].flags.remove(.archives)
        }
    }

    /// A task completed: its result is archived (and with it everything the app held), or
    /// held in memory only.
    mutating func keepResult(_ i: Int) {
        let app = tasks[i].appIndex
        guard Self.producesResult(tasks[i].kind) else { return }
        if tasks[i].flags.contains(.archives) {
            unsaved.clear(app)
        } else {
            unsaved.unsaved[app].append(
                LostWork(
                    task: i, work: tasks[i].work, upBytes: tasks[i].upBytes, downBytes: tasks[i].downBytes,
                    energyJ: tasks[i].cpuJ + tasks[i].radioJ))
        }
    }

    /// The process ends: what it held unarchived is lost, to be redone at the next launch.
    /// An app that opted out saves in `applicationWillTerminate`, which it always gets.
    mutating func loseUnsaved(_ app: Int, cause: LifecycleCause) {
        guard !unsaved.unsaved[app].isEmpty, cause != .exitsOnSuspend else { return }
        for w in unsaved.unsaved[app] {
            sink.taskEvent(.lost(TaskID(w.task), app: app, energyJ: w.energyJ), at: sim.now)
        }
        unsaved.lost[app] += unsaved.unsaved[app]
        unsaved.unsaved[app].removeAll()
    }

    /// At a launch, the app redoes the work it lost, as finite-length work: unlimited in the
    /// foreground, the background grant otherwise.
    mutating func redoLost(_ app: Int) {
        guard !unsaved.lost[app].isEmpty, !draining else { return }
        let lost = unsaved.lost[app]
        unsaved.lost[app].removeAll()
        for w in lost {
            let id = newTask(app: app, kind: .redo, source: w.task, work: w.work, upBytes: w.upBytes, downBytes: w.downBytes)
            tasks[id.rawValue].deadline = apps[app].life.state.isForeground ? .distantFuture : sim.now + setup.system.backgroundTime
            begin(id)
        }
    }
}
