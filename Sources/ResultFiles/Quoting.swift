/// Text written into a generated file, quoted for the place it goes: every path, option or
/// value bgsim writes into a shell script, a Slurm directive, a comment, HTML or Markdown
/// goes through the one function here for its context, so no value can end a line, open a
/// substitution or start markup. Where a context cannot hold a control character (a
/// directive or a comment ends at a line break), the function refuses it.
package enum Quoting {
    /// A value a context cannot hold: it names the value and the character.
    package struct Refused: Error, CustomStringConvertible {
        /// The message, naming what was refused and why.
        package let description: String
    }

    /// The first control character in `s` (C0, DEL or C1), if any.
    package static func controlCharacter(in s: String) -> Unicode.Scalar? {
        s.unicodeScalars.first { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }

    /// Throws when `s` holds a control character; `what` names it in the message
    /// (`the --emit-slurm folder`).
    package static func refuseControlCharacters(_ s: String, what: String) throws(Refused) {
        if let c = controlCharacter(in: s) {
            throw Refused(
                description: "\(what) contains a control character (U+\(String(c.value, radix: 16, uppercase: true).leftPadded(4))); "
                    + "bgsim writes it into scripts and reports, where a line break or escape would change their meaning")
        }
    }

    /// Text for an error message on a terminal, on one line: control characters a hostile input may carry (line breaks, a
    /// carriage return, escape sequences) written as escapes, and at most 2,000 characters of it.
    package static func message(_ text: String) -> String {
        var out = ""
        var count = 0
        for scalar in text.unicodeScalars {
            count += 1
            if count > 2000 {
                out += "..."
                break
            }
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || (0x80..<0xA0).contains(scalar.value) {
                    out += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    /// One word for bash: bare when it holds only characters no shell treats specially,
    /// single-quoted otherwise, and as `$'...'` with escapes when it holds a control character
    /// (a line break inside single quotes is safe to run but not to paste or read).
    package static func shell(_ s: String) -> String {
        if !s.isEmpty, s.unicodeScalars.allSatisfy({ isShellSafe($0) }) { return s }
        guard controlCharacter(in: s) != nil else { return "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        var out = "$'"
        for u in s.unicodeScalars {
            switch u {
            case "\\": out += "\\\\"
            case "'": out += "\\'"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if isControl(u) {
                    out += "\\u" + String(u.value, radix: 16).leftPadded(4)
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out + "'"
    }

    /// A command line for bash, each word quoted by `shell`.
    package static func shellCommand(_ words: [String]) -> String { words.map(shell).joined(separator: " ") }

    static func isShellSafe(_ u: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(u) || ("A"..."Z").contains(u) || ("0"..."9").contains(u) || "/._-=:,+@%".unicodeScalars.contains(u)
    }

    /// One argument of an `#SBATCH` line, as sbatch reads it: double quotes group, a backslash
    /// escapes the next character, and an unquoted `#` starts a comment; bare when it holds
    /// none of these, spaces or quotes. Refuses control
    /// characters: a line break would end the directive and run the rest as a command.
    package static func sbatchArgument(_ s: String, what: String) throws(Refused) -> String {
        try refuseControlCharacters(s, what: what)
        if !s.isEmpty, s.unicodeScalars.allSatisfy({ isShellSafe($0) }) { return s }
        return "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// A path as an sbatch filename pattern (`--output`): `%` is a replacement symbol there,
    /// written `%%` for itself.
    package static func slurmFilename(_ path: String) -> String { path.replacingOccurrences(of: "%", with: "%%") }

    /// Text for a `#` comment line of a script. Refuses control characters: a line break
    /// would end the comment and run the rest.
    package static func comment(_ s: String, what: String) throws(Refused) -> String {
        try refuseControlCharacters(s, what: what)
        return s
    }

    /// Text for HTML, in an element or a double-quoted attribute. Control characters other
    /// than HTML's white space (tab, line feed, form feed, carriage return), which HTML does
    /// not allow, become U+FFFD.
    package static func html(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for u in s.unicodeScalars {
            switch u {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t", "\n", "\u{0C}", "\r": out.unicodeScalars.append(u)
            default: out.unicodeScalars.append(isControl(u) ? "\u{FFFD}" : u)
            }
        }
        return out
    }

    /// Text for Markdown, in a paragraph, a heading or a table cell: every character with a
    /// meaning in CommonMark or GitHub's tables (emphasis, links, code, raw HTML, cells) is
    /// escaped, but for a `_` inside a word (`default_duration`), which CommonMark never reads
    /// as emphasis; control characters become U+FFFD.
    package static func markdown(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        let scalars = Array(s.unicodeScalars)
        let inWord = { (k: Int) in k >= 0 && k < scalars.count && (scalars[k].properties.isAlphabetic || ("0"..."9").contains(scalars[k])) }
        for (k, u) in scalars.enumerated() {
            if u == "_" && inWord(k - 1) && inWord(k + 1) {
                out.unicodeScalars.append(u)
            } else if "\\`*_[]<>|~&#!".unicodeScalars.contains(u) {
                out += "\\"
                out.unicodeScalars.append(u)
            } else {
                out.unicodeScalars.append(isControl(u) ? "\u{FFFD}" : u)
            }
        }
        return out
    }

    /// Text as a Markdown code span: fenced by more backticks than any run inside it, so
    /// nothing in it ends the span; control characters become U+FFFD. In a table cell, a
    /// `|` would still end the cell, so it is not for cells.
    package static func markdownCode(_ s: String) -> String {
        let text = String(String.UnicodeScalarView(s.unicodeScalars.map { isControl($0) ? "\u{FFFD}" : $0 }))
        let fence = String(repeating: "`", count: longestBacktickRun(text) + 1)
        let pad = text.hasPrefix("`") || text.hasSuffix("`") ? " " : ""
        return fence + pad + text + pad + fence
    }

    /// Lines as a fenced Markdown code block, fenced by more backticks than any run inside
    /// them; control characters other than line breaks become U+FFFD.
    package static func markdownBlock(_ text: String, info: String) -> String {
        let clean = String(String.UnicodeScalarView(text.unicodeScalars.map { isControl($0) && $0 != "\n" ? "\u{FFFD}" : $0 }))
        let fence = String(repeating: "`", count: max(3, longestBacktickRun(clean) + 1))
        return fence + info + "\n" + clean + "\n" + fence + "\n"
    }

    static func longestBacktickRun(_ s: String) -> Int {
        var longest = 0, run = 0
        for c in s.unicodeScalars {
            run = c == "`" ? run + 1 : 0
            longest = max(longest, run)
        }
        return longest
    }

    static func isControl(_ u: Unicode.Scalar) -> Bool { u.value < 0x20 || (0x7F...0x9F).contains(u.value) }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
