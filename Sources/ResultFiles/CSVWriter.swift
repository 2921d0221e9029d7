import SimEngine

/// Writes RFC 4180 CSV text: fields with a comma, quote or line break are quoted and inner
/// quotes doubled; numbers use '.' and Swift's shortest round-trip form, whatever the
/// locale; a missing value is an empty field. Lines end in LF.
///
/// For single records and values (headers, a unit's values, the manifest's numbers); files are
/// built as bytes by `CSVBytes`, which this wraps, so both write the same text.
package enum CSVWriter {
    /// One record with its line break.
    package static func line(_ fields: [String]) -> String {
        let line = CSVBytes()
        for field in fields { line.field(field) }
        line.endRecord()
        return line.text
    }

    /// The field, quoted if it holds a comma, a quote or a line break (RFC 4180).
    package static func escape(_ field: String) -> String {
        let line = CSVBytes()
        line.field(field)
        return line.text
    }

    /// A number as text: integers without a decimal point when `count`, `nan` as empty.
    package static func number(_ x: Double, count: Bool = false) -> String {
        let line = CSVBytes()
        line.number(x, count: count)
        return line.text
    }
}

/// CSV records built straight into bytes, field by field, with the rules of `CSVWriter`.
///
/// The row files are most of what a run writes (tasks.csv: about 250 bytes for each of 400
/// tasks a phone-day on the reference scenario). Built as an array of strings per row, then
/// joined, rows took more than half of a run that wrote tasks.csv, and such a run took five
/// times as long as one without it. Appended byte by byte to a `[UInt8]`, each byte still
/// paid a uniqueness and a capacity check, and formatting rows was still more than a third of
/// such a run (perf, 20 x 30 days of eager): so a field reserves its room once and its bytes
/// are stored through a pointer, and a double's text is handed over by the standard library
/// without being made a String.
///
/// A class, not a struct: it owns the buffer it writes through, and a record is built in
/// place by whoever holds it.
package final class CSVBytes {
    // Unchecked: a class's stored properties are otherwise checked for overlapping access at
    // run time, on every byte (callgrind: more instructions than the formatting itself). The
    // buffer is written by one caller at a time, and nothing here hands out a reference to a
    // property while it is written.
    // Usable from inline code: the row writers of other targets inline `field(_:)`, as they
    // did when they shared its module (without it, +1.5% instructions writing a run's files).
    @usableFromInline @exclusivity(unchecked) var base: UnsafeMutablePointer<UInt8>
    @usableFromInline @exclusivity(unchecked) var capacity: Int
    @usableFromInline @exclusivity(unchecked) var length = 0
    /// Whether the next field is the first of its record (no comma before it).
    @usableFromInline @exclusivity(unchecked) var atRecordStart = true

    /// Bytes written so far.
    package var count: Int { length }

    /// An empty buffer with room for `capacity` bytes to start with.
    package init(capacity: Int = 256) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// A copy of the bytes.
    package var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }
    /// Whether nothing has been written.
    package var isEmpty: Bool { count == 0 }
    /// The bytes as text (valid UTF-8: every field came from a String or from digits).
    package var text: String { String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self) }

    /// The bytes written, in place (valid until the next change).
    package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Forgets what was written, keeping the storage.
    package func removeAll() { length = 0; atRecordStart = true }

    /// Room for `n` more bytes.
    @inlinable @inline(__always) func ensure(_ n: Int) {
        if length + n > capacity { grow(to: length + n) }
    }

    @usableFromInline @inline(never) func grow(to needed: Int) {
        let larger = max(needed, 2 * capacity)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.initialize(from: base, count: length)
        base.deallocate()
        base = moved
        capacity = larger
    }

    /// Stores a byte; the room was ensured.
    @inlinable @inline(__always) func put(_ b: UInt8) {
        base[length] = b
        length += 1
    }

    /// Stores bytes; the room was ensured.
    @inlinable @inline(__always) func put(_ b: UnsafeBufferPointer<UInt8>) {
        guard let from = b.baseAddress, !b.isEmpty else { return }
        (base + length).update(from: from, count: b.count)
        length += b.count
    }

    @inlinable @inline(__always) func separate() {
        if atRecordStart { atRecordStart = false } else { ensure(1); put(UInt8(ascii: ",")) }
    }

    /// Ends the record with its line break.
    @inlinable package func endRecord() {
        ensure(1)
        put(UInt8(ascii: "\n"))
        atRecordStart = true
    }

    /// Fields already written as CSV (a record's first fields, joined by commas, no line break).
    @inlinable package func fields(_ written: [UInt8]) {
        separate()
        ensure(written.count)
        written.withUnsafeBufferPointer { put($0) }
    }

    /// A missing value.
    @inlinable package func empty() { separate() }

    /// A text field, quoted if it holds a comma, a quote or a line break (RFC 4180).
    ///
    /// The bytes are scanned, not the characters: comparing each character (a grapheme
    /// cluster) with four others was half of a run's instructions when it writes tasks.csv and
    /// events.csv, and it missed a comma or a quote carrying a combining mark, and a CR LF pair,
    /// which are single characters. In UTF-8 those bytes never occur inside another character,
    /// so doubling each quote byte doubles each quote.
    package func field(_ text: String) { field { $0.write(text) } }

    @inlinable @inline(__always) static func needsQuotes(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        utf8.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }
    }

    /// Text fields joined by `;` into one field (a list in a cell).
    package func list(_ items: [String]) {
        field { text in
            for k in items.indices {
                if k > 0 { text.write(";") }
                text.write(items[k])
            }
        }
    }

    /// An integer in decimal.
    @inlinable package func integer<I: BinaryInteger>(_ value: I) {
        separate()
        appendDigits(Int64(value))
    }

    @usableFromInline func appendDigits(_ value: Int64) {
        ensure(20)
        if value < 0 { put(UInt8(ascii: "-")) }
        var m = value.magnitude
        var digits = 1
        var rest = m
        while rest >= 10 { rest /= 10; digits += 1 }
        var p = base + length + digits
        length += digits
        repeat {
            p -= 1
            p.pointee = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: m % 10)
            m /= 10
        } while m != 0
    }

    /// A number: integers without a decimal point when `count`, `nan` as empty, otherwise
    /// Swift's shortest round-trip form (`0.1`, `1234.5`, `1e-06`).
    package func number(_ x: Double, count: Bool = false) {
        separate()
        guard x.isFinite else {
            if !x.isNaN {
                var inf = x > 0 ? "inf" : "-inf";
                inf.withUTF8 {
                    ensure($0.count); put($0)
                }
            }
            return
        }
        // Whole is tested by converting to an integer and back (`rounded()` is a call to libm's
        // round on baseline x86-64); only below 9e15, where the conversion cannot overflow.
        let limit = count ? 9e15 : 1e15
        if abs(x) < limit, Double(Int64(x)) == x {
            if count { appendDigits(Int64(x)); return }
            // Whole numbers (most held times are 0, byte counts are whole) written as Swift
            // writes them, without formatting: digits, then ".0". Below 10^15 the digits are
            // exact and Swift does not switch to an exponent (it does from 2^53).
            if !(x == 0 && x.sign == .minus) {
                appendDigits(Int64(x))
                ensure(2)
                put(UInt8(ascii: "."))
                put(UInt8(ascii: "0"))
                return
            }
        }
        // `description`'s text, written without making it a String.
        var text = Text(out: self)
        x.write(to: &text)
    }

    /// A text field written in pieces by `build`, then quoted if it holds a comma, a quote or
    /// a line break (RFC 4180): the pieces are not joined first, and most fields need no quotes.
    @inlinable @inline(__always)
    package func field(_ build: (inout Text) -> Void) {
        separate()
        let start = length
        var text = Text(out: self)
        build(&text)
        let fieldLength = self.length - start
        let written = UnsafeBufferPointer(start: base + start, count: fieldLength)
        guard Self.needsQuotes(written) else { return }
        // Quoted in place, from the end: each quote doubled, one quote either side.
        let quotes = written.reduce(0) { $0 + ($1 == UInt8(ascii: "\"") ? 1 : 0) }
        ensure(quotes + 2)
        var to = start + fieldLength + quotes + 1
        base[to] = UInt8(ascii: "\"")
        for from in stride(from: start + fieldLength - 1, through: start, by: -1) {
            let b = base[from]
            to -= 1
            base[to] = b
            if b == UInt8(ascii: "\"") { to -= 1; base[to] = b }
        }
        base[start] = UInt8(ascii: "\"")
        self.length = start + fieldLength + quotes + 2
    }

    /// Text written straight into the buffer, unquoted: what `field(_ build:)` hands its
    /// builder, and where `Double.write(to:)` puts a double's text. The standard library hands
    /// a number's ASCII over through `_writeASCII` (the digits of `description`, without the
    /// String); another standard library that calls `write` instead writes the same text.
    package struct Text: TextOutputStream {
        @usableFromInline unowned(unsafe) let out: CSVBytes  // used only while `out` writes the field
        @usableFromInline init(out: CSVBytes) { self.out = out }
        /// Writes `string`'s UTF-8.
        package mutating func write(_ string: String) {
            // In place for a native string (all of bgsim's); a copy made contiguous otherwise.
            let written: Void? = string.utf8.withContiguousStorageIfAvailable { (utf8: UnsafeBufferPointer<UInt8>) in
                out.ensure(utf8.count)
                out.put(utf8)
            }
            if written != nil { return }
            var string = string
            string.withUTF8 {
                out.ensure($0.count); out.put($0)
            }
        }
        /// Writes ASCII digits the standard library formatted (a number's text, without a String).
        package mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) {
            out.ensure(buffer.count)
            out.put(buffer)
        }
    }

    /// An instant as seconds since the start, exact to the microsecond: the text
    /// `number(Double(microseconds) / 1e6)` writes, made from the integer.
    ///
    /// Swift writes a double as the shortest decimal that reads back as it. For
    /// microseconds / 10^6 with at most 15 significant digits, that decimal is the quotient
    /// itself: decimals of 15 digits or fewer are distinct as doubles, so no shorter one reads
    /// back the same. From 10^-4 seconds up Swift writes it without an exponent, with at least
    /// one digit after the point. Other values (below 100 µs, above 10^15 µs) go through
    /// `number`. A test compares both for every microsecond count up to two seconds and for
    /// random ones up to 10^15.
    package func seconds(microseconds k: Int64) {
        guard k >= 100, k < 1_000_000_000_000_000 else {
            number(Double(k) / 1e6)
            return
        }
        separate()
        appendDigits(k / 1_000_000)
        ensure(7)
        put(UInt8(ascii: "."))
        var fraction = k % 1_000_000
        var width = 6
        while width > 1, fraction % 10 == 0 { fraction /= 10; width -= 1 }
        var p = base + length + width
        length += width
        for _ in 0..<width {
            p -= 1
            p.pointee = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: fraction % 10)
            fraction /= 10
        }
    }

    /// An instant as seconds since the start, exact to the microsecond.
    package func seconds(_ t: SimInstant) { seconds(microseconds: t.microseconds) }
    /// A duration in seconds, exact to the microsecond.
    package func seconds(_ d: SimDuration) { seconds(microseconds: d.microseconds) }
    /// An optional instant or duration; empty when `nil`.
    package func seconds(_ t: SimInstant?) { if let t { seconds(t) } else { empty() } }
    /// An optional duration in seconds; empty when `nil`.
    package func seconds(_ d: SimDuration?) { if let d { seconds(d) } else { empty() } }
}
