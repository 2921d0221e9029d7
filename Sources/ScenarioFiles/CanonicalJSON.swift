import Foundation

/// Minimal JSON text for the manifest: strings escaped per RFC 8259, keys in a fixed order.
package enum JSON {
    package static func string(_ s: String) -> String {
        var out = ""
        append(s, to: &out)
        return out
    }

    /// Appends `s` as a JSON string.
    static func append(_ s: String, to out: inout String) {
        var bytes: [UInt8] = []
        append(s, to: &bytes)
        out += String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `s` as a JSON string, in UTF-8. Text with nothing to escape (the usual case:
    /// names, numbers) is appended whole; in UTF-8 every byte of a multi-byte character is at
    /// least 0x80, so checking the bytes finds exactly the characters that need escaping, and
    /// the others are copied as they are.
    static func append(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out.append(contentsOf: s.utf8)
        } else {
            let hex = Array("0123456789abcdef".utf8)
            for b in s.utf8 {
                switch b {
                case UInt8(ascii: "\""): out.append(contentsOf: "\\\"".utf8)
                case UInt8(ascii: "\\"): out.append(contentsOf: "\\\\".utf8)
                case UInt8(ascii: "\n"): out.append(contentsOf: "\\n".utf8)
                case UInt8(ascii: "\r"): out.append(contentsOf: "\\r".utf8)
                case UInt8(ascii: "\t"): out.append(contentsOf: "\\t".utf8)
                case ..<0x20: out.append(contentsOf: "\\u00".utf8 + [hex[Int(b >> 4)], hex[Int(b & 15)]])
                default: out.append(b)
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// An object from (key, already-encoded value) pairs, one per line at `indent`.
    package static func object(_ pairs: [(String, String)], indent: Int = 0) -> String {
        guard !pairs.isEmpty else { return "{}" }
        let pad = String(repeating: "  ", count: indent + 1)
        return "{\n" + pairs.map { pad + string($0.0) + ": " + $0.1 }.joined(separator: ",\n")
            + "\n" + String(repeating: "  ", count: indent) + "}"
    }

    package static func array(_ items: [String]) -> String { "[" + items.joined(separator: ", ") + "]" }
}

extension ConfigNode {
    /// The tree as compact JSON, scalars as strings, keys in document order: the resolved
    /// scenario (profiles in place, overrides applied), whose SHA-256 identifies it.
    package var canonicalJSON: String {
        var out: [UInt8] = []
        appendCanonicalJSON(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Written into one byte buffer: built by concatenating each level's pieces, the resolved
    /// reference scenario took a sixth of a short run's start; appended to a `String`, it was
    /// still a seventh of planning a sweep of many points (one resolved scenario per point).
    func appendCanonicalJSON(to out: inout [UInt8]) {
        switch value {
        case .scalar(let text, _):
            JSON.append(text, to: &out)
        case .mapping(let pairs):
            out.append(UInt8(ascii: "{"))
            for (k, pair) in pairs.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                JSON.append(pair.key, to: &out)
                out.append(UInt8(ascii: ":"))
                pair.value.appendCanonicalJSON(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        case .sequence(let items):
            out.append(UInt8(ascii: "["))
            for (k, item) in items.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                item.appendCanonicalJSON(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        }
    }
}
