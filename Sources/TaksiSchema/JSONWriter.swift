/// Writes JSON deterministically: object keys sorted by their UTF-8 bytes, no insignificant
/// whitespace (or a fixed two-space indentation when pretty), `/` not escaped, integral numbers
/// without a fraction. The same value always gives the same bytes, so golden files and ETags are stable.
///
/// ```swift
/// JSONWriter.string(["b": 1, "a": [true, nil]]) // {"a":[true,null],"b":1}
/// ```
public enum JSONWriter {
    /// The value as UTF-8 bytes.
    public static func bytes(_ value: JSONValue, pretty: Bool = false) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        write(value, into: &output, pretty: pretty, indent: 0)
        if pretty { output.append(UInt8(ascii: "\n")) }
        return output
    }

    /// Appends the value's compact bytes to `output`, as ``bytes(_:pretty:)`` writes them.
    public static func write(_ value: JSONValue, into output: inout [UInt8]) {
        write(value, into: &output, pretty: false, indent: 0)
    }

    /// The value as a `String`.
    public static func string(_ value: JSONValue, pretty: Bool = false) -> String {
        String(decoding: bytes(value, pretty: pretty), as: UTF8.self)
    }

    private static func write(_ value: JSONValue, into output: inout [UInt8], pretty: Bool, indent: Int) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number): writeNumber(number, into: &output)
        case .string(let string): writeString(string, into: &output)
        case .array(let elements):
            if elements.isEmpty {
                output.append(contentsOf: "[]".utf8)
                return
            }
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                newline(into: &output, pretty: pretty, indent: indent + 1)
                write(element, into: &output, pretty: pretty, indent: indent + 1)
            }
            newline(into: &output, pretty: pretty, indent: indent)
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            if members.isEmpty {
                output.append(contentsOf: "{}".utf8)
                return
            }
            output.append(UInt8(ascii: "{"))
            let sorted = members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            for (index, (key, member)) in sorted.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                newline(into: &output, pretty: pretty, indent: indent + 1)
                writeString(key, into: &output)
                output.append(UInt8(ascii: ":"))
                if pretty { output.append(UInt8(ascii: " ")) }
                write(member, into: &output, pretty: pretty, indent: indent + 1)
            }
            newline(into: &output, pretty: pretty, indent: indent)
            output.append(UInt8(ascii: "}"))
        }
    }

    private static func newline(into output: inout [UInt8], pretty: Bool, indent: Int) {
        guard pretty else { return }
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * 2))
    }

    private static func writeNumber(_ number: Double, into output: inout [UInt8]) {
        if let integer = JSONValue.number(number).exactInteger {
            output.append(contentsOf: String(integer).utf8)
        } else if number.isFinite {
            output.append(contentsOf: "\(number)".utf8)
        } else {
            // JSON has no NaN or infinity; the parser never produces them, so this is a guard only.
            output.append(contentsOf: "null".utf8)
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends `string` as a JSON string, quoted and escaped.
    public static func writeString(_ string: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        writeEscaped(string, into: &output)
        output.append(UInt8(ascii: "\""))
    }

    /// Writes `string`'s characters as a JSON string holds them, without the quotes: the runs
    /// that need no escape copied at once, the rest escaped (a template's hole is written in pieces).
    public static func writeEscaped(_ string: String, into output: inout [UInt8]) {
        var string = string
        string.withUTF8 { bytes in
            var run = 0
            for index in bytes.indices {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<index]))
                run = index + 1
                switch byte {
                case UInt8(ascii: "\""): output.append(contentsOf: "\\\"".utf8)
                case UInt8(ascii: "\\"): output.append(contentsOf: "\\\\".utf8)
                case 0x0A: output.append(contentsOf: "\\n".utf8)
                case 0x0D: output.append(contentsOf: "\\r".utf8)
                case 0x09: output.append(contentsOf: "\\t".utf8)
                case 0x08: output.append(contentsOf: "\\b".utf8)
                case 0x0C: output.append(contentsOf: "\\f".utf8)
                default:
                    output.append(contentsOf: "\\u00".utf8)
                    output.append(hexDigits[Int(byte >> 4)])
                    output.append(hexDigits[Int(byte & 0x0F)])
                }
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run...]))
        }
    }
}
