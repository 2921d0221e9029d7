import Foundation
import Testing

@testable import ResultFiles

/// Each context's quoting, on the characters that mean something there.
@Suite("Quoting for where a value goes")
struct QuotingTests {
    @Test func shellWordsAreBareSingleQuotedOrEscaped() {
        #expect(Quoting.shell("models/scenarios/default.yaml") == "models/scenarios/default.yaml")
        #expect(Quoting.shell("") == "''")
        #expect(Quoting.shell("a b") == "'a b'")
        #expect(Quoting.shell("it's $(x) `y`") == "'it'\\''s $(x) `y`'")
        #expect(Quoting.shell("a\nb\t'c'\\") == "$'a\\nb\\t\\'c\\'\\\\'")
        #expect(Quoting.shell("\u{1B}[2J") == "$'\\u001b[2J'")
        #expect(Quoting.shellCommand(["bgsim", "run", "a b"]) == "bgsim run 'a b'")
    }

    @Test func sbatchArgumentsAndCommentsRefuseLineBreaks() throws {
        #expect(try Quoting.sbatchArgument("--partition=short", what: "x") == "--partition=short")
        #expect(try Quoting.sbatchArgument("--output=/a b/\"q\"\\#", what: "x") == "\"--output=/a b/\\\"q\\\"\\\\#\"")
        #expect(Quoting.slurmFilename("/r/%a/") == "/r/%%a/")
        #expect(throws: Quoting.Refused.self) { try Quoting.sbatchArgument("--comment=a\nrm -rf /", what: "x") }
        #expect(throws: Quoting.Refused.self) { try Quoting.comment("a\rb", what: "x") }
        #expect(try Quoting.comment("a # b", what: "x") == "a # b")
    }

    @Test func htmlEscapesMarkupAndKeepsWhiteSpace() {
        #expect(Quoting.html("<script>\"a\" & 'b'</script>") == "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;")
        // A resolved scenario's JSON is shown in <pre>: its line breaks and tabs stay.
        #expect(Quoting.html("{\n\t\"a\": 1\r\n}") == "{\n\t&quot;a&quot;: 1\r\n}")
        #expect(Quoting.html("a\u{0}b\u{1B}c") == "a\u{FFFD}b\u{FFFD}c")
    }

    @Test func markdownEscapesWhatCommonMarkReads() {
        #expect(Quoting.markdown("<b>*x* [l](u) | `c` ~s~ #h &amp;") == "\\<b\\>\\*x\\* \\[l\\](u) \\| \\`c\\` \\~s\\~ \\#h \\&amp;")
        #expect(Quoting.markdown("default_duration-1d") == "default_duration-1d", "a word's inner _ is no emphasis")
        #expect(Quoting.markdown("_x_ a_") == "\\_x\\_ a\\_")
        #expect(Quoting.markdown("a\nb") == "a\u{FFFD}b")
        #expect(Quoting.markdownCode("a`b") == "``a`b``")
        #expect(Quoting.markdownCode("`a") == "`` `a ``")
        #expect(Quoting.markdownBlock("x ``` y", info: "sh") == "````sh\nx ``` y\n````\n")
    }

    @Test func messagesAreOneLine() {
        #expect(Quoting.message("a\nb\r\tc\u{1B}") == "a\\nb\\r\\tc\\u{1b}")
        #expect(Quoting.message(String(repeating: "x", count: 3000)).count == 2003)
    }
}
