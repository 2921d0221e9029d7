import Testing

@testable import PhoneWorld

@Suite("Charging curve")
struct ChargingCurveTests {
    let curve = ChargingCurve()

    @Test func fullPowerBelowTheKneeThenALinearTaperToTheFloor() {
        #expect(curve.peakW == 13)
        #expect(curve.acceptedW(charge: 0.2, holding: false) == 13)
        #expect(curve.acceptedW(charge: 0.799, holding: false) == 13)
        #expect(abs(curve.acceptedW(charge: 0.8, holding: false) - 13) < 1e-9)
        // Halfway through the CV phase: floor + (1 - floor) / 2 of the peak.
        #expect(abs(curve.acceptedW(charge: 0.9, holding: false) - 13 * (0.03 + 0.97 * 0.5)) < 1e-9)
        #expect(abs(curve.acceptedW(charge: 0.995, holding: false) - 13 * (0.03 + 0.97 * 0.05)) < 1e-9, "the power of the step's start")
        #expect(curve.acceptedW(charge: 1, holding: false) == 0)
    }

    @Test func levelsAreTheKneeEachStepAndTheCap() {
        #expect(curve.nextLevel(after: 0.3, holding: false) == 0.8)
        #expect(abs(curve.nextLevel(after: 0.8, holding: false)! - 0.81) < 1e-9)
        #expect(abs(curve.nextLevel(after: 0.8149, holding: false)! - 0.82) < 1e-9)
        #expect(curve.nextLevel(after: 0.3, holding: true) == 0.8, "the optimized hold")
        #expect(curve.nextLevel(after: 0.8, holding: true) == nil)
        #expect(curve.nextLevel(after: 1, holding: false) == nil)
        var limited = curve
        limited.limit = 0.85
        #expect(abs(limited.nextLevel(after: 0.845, holding: false)! - 0.85) < 1e-9)
        #expect(limited.acceptedW(charge: 0.85, holding: false) == 0)
    }
}
