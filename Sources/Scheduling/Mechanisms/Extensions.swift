import PhoneWorld
import SimEngine

/// Tasks an app's extensions submit (`submit_on: extension`): they run in the main app, which
/// the system launches for them (docs/sources.md §2).
extension PhoneSimulation {
    /// The app's extensions' next run, drawn as the run goes (a Poisson process), before the horizon.
    mutating func scheduleExtensionRun(_ app: Int) {
        guard let stream = streams.appExtension[app] else { return }
        let next = sim.now + SimDuration(seconds: stream.exponential(mean: 86_400 / model.apps[app].extensionRunsPerDay))
        if next < .after(setup.duration) { sim.schedule(.extensionRun(app), at: next, priority: PhoneEvent.worldPriority) }
    }

    /// An extension of the app runs and submits the tasks it schedules.
    mutating func extensionRan(_ app: Int) {
        scheduleExtensionRun(app)
        guard books.isOn, !draining else { return }
        for m in model.apps[app].tasks where model.tasks[m].submitsFromExtension {
            submit(task: m, earliestBegin: sim.now + model.tasks[m].earliestBegin)
        }
    }
}
