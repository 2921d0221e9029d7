import Foundation
import SimEngine
import SimRandom
import Testing

@testable import PhoneWorld

@Suite("Kinetic battery model")
struct KiBaMTests {
    func kibam(wh: Double = 13, charge: Double = 1, c: Double = 0.625, k: Double = 4.5e-5) -> Battery {
        var p = BatteryParameters()
        p.model = .kibam
        p.capacityWh = wh
        p.initialCharge = charge
        p.kibamC = c
        p.kibamK = k
        return Battery(p)
    }

    /// From full under constant current I, KiBaM empties at the T solving
    /// I T = qmax k c T / (1 - e^(-kT) + c (kT - 1 + e^(-kT))) (Manwell & McGowan; docs/sources.md §7).
    @Test(arguments: [0.5, 2, 5, 10, 20, 40])
    func emptiesWhenTheClosedFormSaysSo(watts: Double) throws {
        for (c, k) in [(0.625, 4.5e-5), (0.3, 1e-3), (0.9, 2e-6)] {
            let b = kibam(c: c, k: k)
            let t = try #require(b.timeToEmpty(netPowerW: -watts)).seconds
            let qmax = b.capacityJ
            let e = exp(-k * t)
            let current = qmax * k * c / (1 - e + c * (k * t - 1 + e))
            #expect(abs(current - watts) / watts < 0.001, "c \(c), k \(k): I = \(watts) W but T = \(t) s solves for \(current) W")
            // And the model itself agrees: one microsecond earlier it is not yet empty.
            var before = b
            _ = before.advance(by: SimDuration(seconds: t) - .microseconds(2), loadW: watts, chargerW: 0)
            #expect(before.availableJ > 0)
        }
    }

    @Test func higherLoadsDeliverLessEnergyBeforeEmpty() throws {
        // Rate-capacity effect: the available well empties before the bound well can refill it.
        let b = kibam()
        // What is stranded scales with I / k: at k = 4.5e-5 /s (a 6 h time constant) an idle
        // phone's tens of milliwatts strand about 1%, tens of watts most of the bound well.
        let delivered = try [0.05, 5, 50].map { w in w * (try #require(b.timeToEmpty(netPowerW: -w))).seconds }
        #expect(delivered[0] > delivered[1] && delivered[1] > delivered[2])
        #expect(delivered[2] < 0.8 * b.capacityJ, "at 50 W much of the charge is stranded in the bound well")
        #expect(delivered[0] > 0.95 * b.capacityJ, "at 0.05 W nearly all of it comes out")
    }

    @Test func restRefillsTheAvailableWell() throws {
        var b = kibam()
        let t = try #require(b.timeToEmpty(netPowerW: -30))
        _ = b.advance(by: t, loadW: 30, chargerW: 0)
        #expect(b.availableJ < 1e-6 * b.capacityJ)
        let stranded = b.energyJ
        #expect(stranded > 0.1 * b.capacityJ)
        _ = b.advance(by: .minutes(30), loadW: 0, chargerW: 0)
        #expect(b.availableJ > 0.01 * b.capacityJ, "recovery: bound charge flowed back")
        #expect(abs(b.energyJ - stranded) < 1e-6, "rest moves energy between wells, it creates none")
        #expect(b.timeToEmpty(netPowerW: -1)! > .minutes(1), "after rest the phone can run again")
    }

    @Test func theTotalChangesByExactlyTheNetEnergy() {
        var b = kibam(charge: 0.5)
        let before = b.energyJ
        let flow = b.advance(by: .hours(2), loadW: 1.5, chargerW: 0)
        #expect(abs(before - b.energyJ - 1.5 * 7200) < 1e-6)
        #expect(abs(flow.fromBatteryJ - 1.5 * 7200) < 1e-6)
    }

    @Test func chargingStopsAtFullAndTheWellsAddUpToCapacity() {
        var b = kibam(charge: 0.9)
        let flow = b.advance(by: .hours(5), loadW: 0.5, chargerW: 20)
        #expect(abs(b.energyJ - b.capacityJ) < 1e-6)
        #expect(abs(flow.intoBatteryJ - 0.1 * b.capacityJ) < 1e-6)
        #expect(abs(flow.imbalanceJ) < 1e-6)
    }

    @Test func bootLevelIsReachedAtTheFirstMicrosecondWhileCharging() throws {
        var b = kibam()
        _ = b.advance(by: try #require(b.timeToEmpty(netPowerW: -40)), loadW: 40, chargerW: 0)
        let target = 0.03 * b.availableCapacityJ
        let t = try #require(b.timeUntilAvailable(reaches: target, netPowerW: 5))
        var early = b, onTime = b
        _ = early.advance(by: t - .microseconds(1), loadW: 0, chargerW: 5)
        _ = onTime.advance(by: t, loadW: 0, chargerW: 5)
        #expect(early.availableJ < target)
        #expect(onTime.availableJ >= target)
        #expect(b.timeUntilAvailable(reaches: target, netPowerW: -1) == nil || b.availableJ <= target)
    }

    /// At rest the available well recovers towards its share c of the total: a target below
    /// that share is reached at the first microsecond the model itself is there, at the closed
    /// form's instant q1(t) = c q0 + (q1 - c q0) e^(-k t); one above it never is. A full
    /// battery on a charger is at rest too. Linear batteries do not move at rest.
    @Test func restReachesATargetBelowTheShareAtItsFirstMicrosecond() throws {
        var b = kibam(c: 0.3)
        _ = b.advance(by: try #require(b.timeToEmpty(netPowerW: -40)), loadW: 40, chargerW: 0)
        let share = b.c * b.energyJ, q1 = b.availableJ
        let target = 0.5 * share
        let t = try #require(b.timeUntilAvailable(reaches: target, netPowerW: 0))
        let closedForm = log((share - q1) / (share - target)) / b.k
        #expect(abs(t.seconds - closedForm) < 1e-3, "\(t) against \(closedForm) s")
        var early = b, onTime = b
        _ = early.advance(by: t - .microseconds(1), loadW: 0, chargerW: 0)
        _ = onTime.advance(by: t, loadW: 0, chargerW: 0)
        #expect(early.availableJ < target && onTime.availableJ >= target)
        #expect(b.timeUntilAvailable(reaches: 1.01 * share, netPowerW: 0) == nil)

        // Full, with the available well low (set directly): a charger's power is rest.
        var full = kibam(c: 0.3)
        full.state = .kibam(availableJ: 0.1 * full.capacityJ, boundJ: 0.9 * full.capacityJ)
        #expect(full.isFull)
        let rest = full.timeUntilAvailable(reaches: 0.2 * full.capacityJ, netPowerW: 0)
        #expect(rest != nil && full.timeUntilAvailable(reaches: 0.2 * full.capacityJ, netPowerW: 5) == rest)

        var p = BatteryParameters()
        p.initialCharge = 0.2
        #expect(Battery(p).timeUntilAvailable(reaches: 0.3 * Battery(p).capacityJ, netPowerW: 0) == nil)
    }

    /// Random loads and chargers, both models: books balance, energy stays in [0, capacity].
    @Test(arguments: BatteryModelKind.allCases)
    func booksBalanceUnderRandomUse(model: BatteryModelKind) throws {
        let rng = try RandomStream(seed: 77)
        var p = BatteryParameters()
        p.model = model
        p.capacityWh = 3
        var b = Battery(p)
        var total = EnergyFlow()
        let initial = b.energyJ
        for _ in 0..<2000 {
            let load = rng.uniform(0, 4)
            let charger = rng.bernoulli(0.3) ? rng.uniform(0, 20) : 0
            // Never step past empty, as the simulation never does.
            var dt = SimDuration.seconds(Int64(rng.next() % 1800))
            if let empty = b.timeToEmpty(netPowerW: b.netPowerW(loadW: load, chargerW: charger)) { dt = min(dt, empty) }
            let flow = b.advance(by: dt, loadW: load, chargerW: charger)
            #expect(abs(flow.imbalanceJ) <= 1e-9 * max(1, flow.consumedJ))
            #expect(b.energyJ >= -1e-6 && b.energyJ <= b.capacityJ + 1e-6)
            #expect(b.availableJ >= 0)
            total += flow
        }
        #expect(abs(b.energyJ - (initial + total.intoBatteryJ - total.fromBatteryJ)) < 1e-6)
    }
}
