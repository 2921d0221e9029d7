import PhoneWorld
import SimEngine
import Testing

@testable import Scheduling

/// Drives a link through `sends` (time, transfer) until it is idle again, integrating its
/// power exactly between transitions. Returns the energy and the finished owners with times.
func drive(
    _ profile: RadioProfile, down: Double = 20, up: Double = 5,
    _ sends: [(SimInstant, Transfer)]
) -> (energyJ: Double, finished: [(TransferOwner, SimInstant)], link: RadioLink) {
    var link = RadioLink(profile: profile)
    link.setThroughput(upMbps: up, downMbps: down, at: .start)
    var pending = sends
    var now = SimInstant.start
    var energy = 0.0
    var finished: [(TransferOwner, SimInstant)] = []
    while true {
        let next = [link.nextEvent, pending.first?.0].compactMap { $0 }.min()
        guard let t = next else { break }
        energy += link.powerW * (t - now).seconds
        now = t
        link.advance(to: t) { finished.append(($0, t)) }
        while let p = pending.first, p.0 == t {
            link.enqueue(p.1, at: t)
            pending.removeFirst()
        }
    }
    return (energy, finished, link)
}

@Suite("Radio state machines")
struct RadioTests {
    @Test func aTenKilobyteLTEFetchCostsPromotionTransferAndTail() {
        let fetch = Transfer(owner: .task(0), upBytes: 0, downBytes: 10_000)
        let r = drive(lteRadio, [(.start, fetch)])
        let transferS = 80_000 / 20e6  // 10 KB at 20 Mbit/s
        let formula = 0.26 * 1.21 + transferS * (1.2 + 0.05197 * 20) + 10.1 * 1.06
        #expect(abs(r.energyJ - formula) / formula < 0.01)
        #expect(abs(r.energyJ - formula) < 1e-9, "exact to the microsecond: \(r.energyJ) vs \(formula)")
        #expect(r.energyJ > 10 && r.energyJ < 12, "on the order of 10 J, almost all tail (docs/sources.md §6)")
        #expect(r.finished.map(\.1) == [.after(.microseconds(260_000 + 4_000))])
        #expect(r.link.state == .idle)
    }

    @Test func twoFetchesTwoSecondsApartShareOnePromotionAndOneTail() {
        let a = Transfer(owner: .task(0), upBytes: 0, downBytes: 10_000)
        let b = Transfer(owner: .task(1), upBytes: 0, downBytes: 10_000)
        let single = drive(lteRadio, [(.start, a)]).energyJ
        let both = drive(lteRadio, [(.start, a), (.after(.seconds(2)), b)])
        #expect(both.energyJ < 2 * single)
        // The second rides the first's tail: no promotion, its transfer, and the tail restarts.
        let transfer = 0.004 * (1.2 + 0.05197 * 20)
        let tailBetween = (2 - 0.264) * 1.06
        #expect(abs(both.energyJ - (single + transfer + tailBetween)) < 1e-9)
        #expect(both.finished.map(\.1) == [.after(.microseconds(264_000)), .after(.microseconds(2_004_000))])
    }

    @Test func overlappingFetchesQueueBehindOnePromotion() {
        let a = Transfer(owner: .task(0), upBytes: 0, downBytes: 100_000)
        let b = Transfer(owner: .task(1), upBytes: 0, downBytes: 100_000)
        let r = drive(lteRadio, [(.start, a), (.after(.milliseconds(100)), b)])
        // 100 KB at 20 Mbit/s is 40 ms each, served one after the other after the promotion.
        #expect(r.finished.map(\.1) == [.after(.milliseconds(300)), .after(.milliseconds(340))])
        let expected = 0.26 * 1.21 + 0.08 * (1.2 + 0.05197 * 20) + 10.1 * 1.06
        #expect(abs(r.energyJ - expected) < 1e-9)
    }

    @Test func uploadThenDownloadAtEachDirectionsPower() {
        let t = Transfer(owner: .task(0), upBytes: 5_000, downBytes: 20_000)
        let r = drive(lteRadio, down: 10, up: 2, [(.start, t)])
        let up = 40_000 / 2e6, down = 160_000 / 10e6
        let expected = 0.26 * 1.21 + up * (1.2 + 0.43839 * 2) + down * (1.2 + 0.05197 * 10) + 10.1 * 1.06
        #expect(abs(r.energyJ - expected) < 1e-9)
    }

    @Test func threeGsTailHasTwoStages() {
        var umts = RadioProfile(name: "3g")
        umts.promotion = .seconds(2)
        umts.promotionW = 0.51
        umts.activeW = 1.02
        umts.tail = [TailStage(duration: .seconds(4), powerW: 1.02), TailStage(duration: .seconds(10), powerW: 0.40)]
        let r = drive(umts, down: 1, up: 0.3, [(.start, Transfer(owner: .foreground, upBytes: 0, downBytes: 1_000))])
        let expected = 2 * 0.51 + 0.008 * 1.02 + 4 * 1.02 + 10 * 0.40
        #expect(abs(r.energyJ - expected) < 1e-9)
    }

    @Test func aSlowerNetworkStretchesTheRestOfTheTransfer() {
        var link = RadioLink(profile: lteRadio)
        link.setThroughput(upMbps: 5, downMbps: 20, at: .start)
        link.enqueue(Transfer(owner: .task(0), upBytes: 0, downBytes: 100_000), at: .start)  // 40 ms once active
        link.advance(to: .after(.milliseconds(260)))
        link.advance(to: .after(.milliseconds(280)))  // half done
        link.setThroughput(upMbps: 5, downMbps: 10, at: .after(.milliseconds(280)))
        #expect(link.nextEvent == .after(.milliseconds(320)), "the other 400 kbit at 10 Mbit/s take 40 ms")
    }

    @Test func disconnectingHandsBackWhatIsLeftAndEntersTheTail() throws {
        var link = RadioLink(profile: lteRadio)
        link.setThroughput(upMbps: 5, downMbps: 20, at: .start)
        link.enqueue(Transfer(owner: .task(3), upBytes: 0, downBytes: 100_000), at: .start)
        link.advance(to: .after(.milliseconds(280)))
        let left = link.disconnect(at: .after(.milliseconds(280)))
        try #require(left.count == 1)
        #expect(left[0].owner == .task(3))
        #expect(abs(left[0].downBits - 400_000) < 1e-6)
        #expect(link.state == .tail(stage: 0, until: .after(.milliseconds(280)) + .milliseconds(10_100)))
        #expect(!link.isConnected)
    }

    @Test func cancellingTheOnlyTransferEndsActivityInTheTail() {
        var link = RadioLink(profile: lteRadio)
        link.setThroughput(upMbps: 5, downMbps: 20, at: .start)
        link.enqueue(Transfer(owner: .task(1), upBytes: 0, downBytes: 10_000_000), at: .start)  // 4 s of data
        link.advance(to: .after(.seconds(1)))
        link.cancel(.task(1), at: .after(.seconds(1)))
        #expect(link.queue.isEmpty)
        #expect(link.state == .tail(stage: 0, until: .after(.seconds(1)) + .milliseconds(10_100)))
        #expect(link.chargedTo == nil, "the tail is charged to nobody")
    }
}
