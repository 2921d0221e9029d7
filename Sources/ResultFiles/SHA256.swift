import CSHA256
import Foundation

/// SHA-256 (FIPS 180-4), for the manifest's file and scenario digests. Written here rather
/// than pulling in swift-crypto, whose BoringSSL build would add minutes to every fresh
/// build for one hash; checked against the standard's test vectors in the tests.
///
/// Where the processor has the x86 SHA extensions, blocks go through them (`CSHA256`):
/// hashing the result files was a seventh of a run that writes tasks.csv at about 150 MB/s in
/// Swift. Elsewhere, and in the tests that compare the two, the Swift rounds below.
public struct SHA256 {
    /// Whether blocks use the processor's SHA instructions.
    public static let usesHardware = bgsim_sha256_hardware_available() != 0
    private let hardware: Bool

    private var h: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
        (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)
    private var pending: [UInt8] = []
    private var length: UInt64 = 0

    /// A hasher that uses the SHA instructions where the processor has them.
    package init() { hardware = Self.usesHardware }

    /// A hasher that uses the Swift rounds even where the hardware ones exist, when
    /// `hardware` is false (for tests and benchmarks that compare the two).
    public init(hardware: Bool) { self.hardware = hardware && Self.usesHardware }

    /// Adds `bytes` to the message.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        length &+= UInt64(bytes.count)
        var i = 0
        if !pending.isEmpty {
            let take = min(64 - pending.count, bytes.count)
            pending.append(contentsOf: bytes[0..<take])
            i = take
            if pending.count == 64 {
                pending.withUnsafeBytes { compress(blocks: UnsafeRawBufferPointer($0)) }
                pending.removeAll(keepingCapacity: true)
            }
        }
        let whole = (bytes.count - i) / 64 * 64
        if whole > 0 {
            compress(blocks: UnsafeRawBufferPointer(rebasing: bytes[i..<(i + whole)]))
            i += whole
        }
        pending.append(contentsOf: bytes[i...])
    }

    /// Whole 64-byte blocks.
    private mutating func compress(blocks: UnsafeRawBufferPointer) {
        guard hardware else {
            for start in stride(from: 0, to: blocks.count, by: 64) {
                compress(UnsafeRawBufferPointer(rebasing: blocks[start..<(start + 64)]))
            }
            return
        }
        withUnsafeMutableBytes(of: &h) { state in
            bgsim_sha256_hardware_blocks(
                state.baseAddress!.assumingMemoryBound(to: UInt32.self),
                blocks.baseAddress!.assumingMemoryBound(to: UInt8.self), blocks.count / 64)
        }
    }

    /// Adds `bytes` to the message.
    public mutating func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }
    /// Adds `data` to the message.
    package mutating func update(_ data: Data) { data.withUnsafeBytes { update($0) } }

    /// The digest as 64 lowercase hex digits. Ends this hasher's use.
    public mutating func hexDigest() -> String {
        let bits = length &* 8
        update([0x80])
        while pending.count != 56 { update([0]) }
        update((0..<8).reversed().map { UInt8(truncatingIfNeeded: bits >> (8 * UInt64($0))) })
        length = 0
        return [h.0, h.1, h.2, h.3, h.4, h.5, h.6, h.7].map { word in
            let s = String(word, radix: 16)
            return String(repeating: "0", count: 8 - s.count) + s
        }.joined()
    }

    /// The SHA-256 of `text`'s UTF-8, as 64 lowercase hex digits.
    package static func hex(_ text: String) -> String {
        var s = SHA256()
        s.update(Array(text.utf8))
        return s.hexDigest()
    }

    /// The size and SHA-256 of the file at `path`, read a megabyte at a time; nil if it
    /// cannot be opened.
    package static func file(at path: String) -> (bytes: Int, hex: String)? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var hash = SHA256()
        var bytes = 0
        while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            hash.update(chunk)
            bytes += chunk.count
        }
        return (bytes, hash.hexDigest())
    }

    /// One 64-byte block. The schedule lives on the stack and the round constants are read
    /// through a buffer pointer: with both in arrays (bounds and uniqueness checks on every
    /// access) and an array built per block to add the state, hashing ran at about 90
    /// instructions a byte, and the manifest hashes every output file.
    private mutating func compress(_ block: UnsafeRawBufferPointer) {
        @inline(__always) func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }
        // The round constants, from the C target whose SHA instructions read them too.
        let k = UnsafeBufferPointer(start: bgsim_sha256_round_constants(), count: 64)
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            for i in 0..<16 { w[i] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self)) }
            for i in 16..<64 {
                let s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
                let s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
                w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
            }
            var (a, b, c, d, e, f, g, hh) = h
            for i in 0..<64 {
                let s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
                let ch = (e & f) ^ (~e & g)
                let t1 = hh &+ s1 &+ ch &+ k[i] &+ w[i]
                let s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
                let maj = (a & b) ^ (a & c) ^ (b & c)
                let t2 = s0 &+ maj
                (hh, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
            }
            h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e, h.5 &+ f, h.6 &+ g, h.7 &+ hh)
        }
    }
}
