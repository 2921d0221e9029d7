import PhoneWorld
import SimEngine

/// Region monitoring (`regions: {places}`): crossing a geofence wakes each app that monitors
/// the place, exits before entries. The system relaunches even an app the person swiped away
/// for a region event (Apple, Location and Maps Programming Guide, [secondary]), unlike for
/// pushes and refreshes.
extension PhoneSimulation {
    /// The person left one place of the network model and/or arrived at another.
    mutating func crossRegions(left: String?, entered: String?) {
        for app in setup.apps.indices {
            guard let regions = setup.apps[app].regions, let stream = streams.appRegion[app] else { continue }
            for (crossing, place) in [(0, left), (1, entered)] {
                guard let place, let p = regions.places.firstIndex(of: place) else { continue }
                // Drawn for every crossing, delivered or not, so later draws stay aligned.
                let work = SimDuration(seconds: regions.cpu.draw(stream))
                let up = regions.upBytes.draw(stream).rounded(), down = regions.downBytes.draw(stream).rounded()
                let id = newTask(app: app, kind: .region, source: 2 * p + crossing, work: work, upBytes: up, downBytes: down)
                if !books.isOn || draining || model.apps[app].exitsOnSuspend {
                    finish(id, .dropped, at: sim.now)
                } else {
                    wake(id)
                }
            }
        }
    }
}
