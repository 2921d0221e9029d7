import SimRandom
import Testing

@testable import PhoneWorld
@testable import SimEngine

@Suite("Linear battery")
struct BatteryTests {
    func battery(wh: Double = 10, charge: Double = 0.5) -> Battery {
        var p = BatteryParameters()
        p.capacityWh = wh
        p.initialCharge = charge
        return Battery(p)
    }

    @Test func dischargesLinearly() {
        var b = battery(wh: 10, charge: 1)
        let flow = b.advance(by: .hours(1), loadW: 1, chargerW: 0)
        #expect(abs(b.energyJ - 9 * 3600) < 1e-9)
        #expect(abs(flow.consumedJ - 3600) < 1e-9)
        #expect(abs(flow.fromBatteryJ - 3600) < 1e-9)
        #expect(flow.fromChargerJ == 0)
    }

    @Test func chargerPowersTheLoadFirstAndStoresTheRestUntilFull() {
        var b = battery(wh: 10, charge: 0.9)  // 1 Wh of room
        let flow = b.advance(by: .hours(1), loadW: 1, chargerW: 3)  // 2 W surplus for 1 h
        #expect(b.isFull)
        #expect(abs(flow.intoBatteryJ - 3600) < 1e-9, "only 1 Wh fits")
        #expect(abs(flow.fromChargerJ - (3600 + 3600)) < 1e-9, "load 1 Wh plus 1 Wh stored")
        #expect(flow.fromBatteryJ == 0)
        #expect(b.netPowerW(loadW: 1, chargerW: 3) == 0, "a full battery takes no more")
    }

    @Test func batteryCoversWhatAWeakChargerCannot() {
        var b = battery(wh: 10, charge: 0.5)
        let flow = b.advance(by: .hours(1), loadW: 3, chargerW: 1)
        #expect(abs(flow.fromChargerJ - 3600) < 1e-9)
        #expect(abs(flow.fromBatteryJ - 2 * 3600) < 1e-9)
        #expect(abs(b.energyJ - 3 * 3600) < 1e-9)
    }

    @Test func neverGoesBelowEmpty() {
        var b = battery(wh: 1, charge: 0.5)
        let flow = b.advance(by: .hours(10), loadW: 1, chargerW: 0)
        #expect(b.energyJ == 0)
        #expect(abs(flow.fromBatteryJ - 1800) < 1e-9, "only what was stored can be drawn")
        #expect(abs(flow.imbalanceJ) < 1e-9)
    }

    @Test func timeToReachIsExactAndRoundsUp() {
        let b = battery(wh: 1, charge: 0.5)  // 1800 J
        #expect(b.timeToReach(0, netPowerW: -1) == .seconds(1800))
        #expect(b.timeToEmpty(netPowerW: -1) == .seconds(1800))
        #expect(b.timeToEmpty(netPowerW: 1) == nil)
        #expect(b.timeToReach(0, netPowerW: -7)! >= SimDuration(seconds: 1800.0 / 7))
        #expect(b.timeToReach(0, netPowerW: -7)! - SimDuration(seconds: 1800.0 / 7) <= .microseconds(1))
        #expect(b.timeToReach(0, netPowerW: 1) == nil, "charging never empties")
        #expect(b.timeToReach(3600, netPowerW: 0) == nil)
        #expect(b.timeToReach(1800, netPowerW: 5) == .zero)
    }

    /// Random sequences of load and charger power: the books balance at every step and the
    /// stored energy stays within [0, capacity] and equals initial + in - out.
    @Test(arguments: 1...10)
    func booksBalance(seed: UInt64) throws {
        let rng = try RandomStream(seed: seed)
        var b = battery(wh: 5, charge: 0.5)
        let initial = b.energyJ
        var total = EnergyFlow()
        for _ in 0..<1000 {
            let dt = SimDuration.seconds(Int64(rng.next() % 3600))
            let load = Double(rng.next() % 3000) / 1000
            let charger = rng.next() % 3 == 0 ? Double(rng.next() % 20_000) / 1000 : 0
            let flow = b.advance(by: dt, loadW: load, chargerW: charger)
            #expect(abs(flow.imbalanceJ) <= 1e-9 * max(1, flow.consumedJ))
            #expect(b.energyJ >= 0 && b.energyJ <= b.capacityJ)
            total += flow
        }
        #expect(abs(b.energyJ - (initial + total.intoBatteryJ - total.fromBatteryJ)) < 1e-6)
    }
}
