import SimEngine
import SimRandom

/// The gaps between consecutive starts of one app's requests under one identifier, in memory
/// that stops growing: every start while there are at most `exactLimit`, then a sketch of
/// the gaps (`QuantileSketch`, relative error 0.5%).
///
/// Starts come in the order their records do, which is end order: a request that runs long
/// comes after requests that started later. Past the limit the newest `window` starts are held
/// back and sorted before their gaps are taken, which orders them exactly unless a request
/// runs while `window` others of its identifier start and end; such a start (`late`) is left
/// out of the gaps.
package struct StartGaps: Sendable {
    /// Starts held back to be ordered before their gaps are sketched.
    static let window = 1024
    let exactLimit: Int
    /// Every start while exact; past the limit, those not yet sketched.
    var starts: [SimInstant] = []
    /// The gaps' sketch, once past the limit, and the last start whose gap it has.
    var sketch: QuantileSketch?
    var lastSketched: SimInstant?
    /// Starts that came after their gap was sketched, and were left out.
    package private(set) var late = 0

    init(exactLimit: Int = QuantileSketch.defaultExactLimit) {
        self.exactLimit = Swift.max(exactLimit, Self.window)
    }

    @inline(__always)
    mutating func add(_ start: SimInstant) {
        if sketch == nil {
            starts.append(start)
            if starts.count > exactLimit {
                sketch = QuantileSketch(exactLimit: 0)
                sketchOldest(keeping: Self.window)
            }
            return
        }
        guard start >= lastSketched! else {
            late += 1
            return
        }
        starts.append(start)
        if starts.count >= 2 * Self.window { sketchOldest(keeping: Self.window) }
    }

    /// Sketches the gaps of all but the newest `keeping` held starts.
    mutating func sketchOldest(keeping: Int) {
        starts.sort()
        let cut = starts.count - keeping
        Self.addGaps(of: starts[..<cut], after: &lastSketched, to: &sketch!)
        starts.removeFirst(cut)
    }

    static func addGaps(of sorted: ArraySlice<SimInstant>, after last: inout SimInstant?, to sketch: inout QuantileSketch) {
        for s in sorted {
            if let p = last { sketch.add((s - p).seconds) }
            last = s
        }
    }

    /// The gaps' mean, quantiles and maximum; `nil` with fewer than two starts.
    package func summary() -> QuantileSketch.Summary? {
        guard var sketch else {
            guard starts.count > 1 else { return nil }
            let sorted = starts.sorted()
            return QuantileSketch.Summary(sorted: zip(sorted.dropFirst(), sorted).map { ($0 - $1).seconds }.sorted())
        }
        var last = lastSketched
        Self.addGaps(of: starts.sorted()[...], after: &last, to: &sketch)
        return sketch.summary()
    }
}
