import Yams

/// Reads a YAML screen file into the same ``JSONNode``s as JSON, with the position of every
/// value, so YAML and JSON files get identical checks and diagnostics.
///
/// YAML 1.2 core scalars only: `true`/`false` (not `yes`/`no`, so a country code `NO` stays a
/// string), decimal numbers, `null`/`~`; everything else is a string. Anchors and aliases are
/// refused: they can make a small file expand enormously, and screen files do not need them.
enum YAMLReader {
    /// - Parameter refusingAliases: what an anchor or alias is told: screen files repeat the value;
    ///   an OpenAPI document is converted to JSON.
    static func parse(_ file: SourceFile, refusingAliases: String = aliasesInScreenFiles) throws(JSONParser.SyntaxError) -> JSONNode {
        guard let text = String(validating: file.bytes, as: UTF8.self) else {
            throw JSONParser.SyntaxError(offset: 0, message: "the file is not valid UTF-8; save it as UTF-8")
        }
        try checkNesting(file, refusingAliases: refusingAliases)
        let root: Node?
        do {
            root = try Yams.compose(yaml: text, resolver)
        } catch let error as YamlError {
            throw syntaxError(error, in: file)
        } catch {
            throw JSONParser.SyntaxError(offset: 0, message: "the YAML cannot be read: \(error)")
        }
        guard let root else {
            throw JSONParser.SyntaxError(offset: 0, message: "the file is empty; a YAML document was expected")
        }
        return try convert(root, in: file, depth: 0, refusingAliases: refusingAliases)
    }

    // These patterns are constants; a failure here is a programming error caught by every test run.
    private static let resolver = Resolver.basic
        .appending(try! Resolver.Rule(.bool, "^(?:true|True|TRUE|false|False|FALSE)$"))
        .appending(try! Resolver.Rule(.int, "^[-+]?[0-9]+$"))
        .appending(try! Resolver.Rule(.float, "^[-+]?(?:\\.[0-9]+|[0-9]+(?:\\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$"))
        .appending(try! Resolver.Rule(.null, "^(?:~|null|Null|NULL|)$"))

    private static func offset(_ mark: Mark?, in file: SourceFile) -> Int {
        guard let mark else { return 0 }
        return file.offset(ofLine: mark.line, column: mark.column)
    }

    static let aliasesInScreenFiles = "YAML anchors and aliases (&name, *name) are not supported in screen files; repeat the value instead"

    private static func convert(
        _ node: Node, in file: SourceFile, depth: Int, refusingAliases: String
    ) throws(JSONParser.SyntaxError) -> JSONNode {
        let start = offset(node.mark, in: file)
        guard depth < JSONParser.maximumDepth else {
            throw JSONParser.SyntaxError(
                offset: start, message: "nesting is deeper than \(JSONParser.maximumDepth) levels; flatten the document")
        }
        switch node {
        case .scalar(let scalar):
            let text = scalar.string
            // Quoted scalars are always strings.
            let plain = scalar.style == .plain || scalar.style == .any
            switch plain ? node.tag.rawValue : Tag.Name.str.rawValue {
            case Tag.Name.null.rawValue: return JSONNode(kind: .null, offset: start)
            case Tag.Name.bool.rawValue: return JSONNode(kind: .bool(text.lowercased() == "true"), offset: start)
            case Tag.Name.int.rawValue, Tag.Name.float.rawValue:
                guard let number = Double(text), number.isFinite else {
                    throw JSONParser.SyntaxError(offset: start, message: "the number \(text) is too large to represent")
                }
                return JSONNode(kind: .number(number), offset: start)
            default: return JSONNode(kind: .string(text), offset: start)
            }
        case .sequence(let sequence):
            var elements: [JSONNode] = []
            for element in sequence { elements.append(try convert(element, in: file, depth: depth + 1, refusingAliases: refusingAliases)) }
            return JSONNode(kind: .array(elements), offset: start)
        case .mapping(let mapping):
            var members: [JSONNode.Member] = []
            var seen: Set<String> = []
            for (key, value) in mapping {
                let keyOffset = offset(key.mark, in: file)
                guard case .scalar(let scalar) = key else {
                    throw JSONParser.SyntaxError(offset: keyOffset, message: "a key must be plain text, not a list or a mapping")
                }
                guard seen.insert(scalar.string).inserted else {
                    throw JSONParser.SyntaxError(offset: keyOffset, message: "duplicate key \"\(scalar.string)\"; keep one of them")
                }
                members.append(
                    JSONNode.Member(
                        key: scalar.string, keyOffset: keyOffset,
                        value: try convert(value, in: file, depth: depth + 1, refusingAliases: refusingAliases)))
            }
            return JSONNode(kind: .object(members), offset: start)
        case .alias:
            throw JSONParser.SyntaxError(
                offset: start,
                message: refusingAliases
            )
        }
    }

    /// Refuses absurd nesting before the YAML library recurses into it: flow brackets deeper than
    /// the limit, or indentation deeper than any sane screen.
    private static func checkNesting(_ file: SourceFile, refusingAliases: String) throws(JSONParser.SyntaxError) {
        var depth = 0
        var quote: UInt8?
        var indentation = 0
        var atLineStart = true
        var inComment = false
        for (offset, byte) in file.bytes.enumerated() {
            if byte == UInt8(ascii: "\n") {
                atLineStart = true
                indentation = 0
                inComment = false
                continue
            }
            if atLineStart {
                if byte == UInt8(ascii: " ") {
                    indentation += 1
                    if indentation > 4 * JSONParser.maximumDepth {
                        throw JSONParser.SyntaxError(
                            offset: offset,
                            message: "indentation is deeper than \(4 * JSONParser.maximumDepth) spaces; flatten the document")
                    }
                    continue
                }
                atLineStart = false
            }
            if inComment { continue }
            if let open = quote {
                if byte == open { quote = nil }
                continue
            }
            // An anchor (&name) at the start of a token: aliases to it could expand a small file
            // exponentially (the "billion laughs"), so they are refused before parsing.
            if byte == UInt8(ascii: "&") || byte == UInt8(ascii: "*"), offset + 1 < file.bytes.count,
                isAnchorNameByte(file.bytes[offset + 1]),
                offset == 0 || " \t[{,-:\n".utf8.contains(file.bytes[offset - 1])
            {
                throw JSONParser.SyntaxError(
                    offset: offset,
                    message: refusingAliases
                )
            }
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "'"): quote = byte
            case UInt8(ascii: "#"): inComment = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > JSONParser.maximumDepth {
                    throw JSONParser.SyntaxError(
                        offset: offset, message: "nesting is deeper than \(JSONParser.maximumDepth) levels; flatten the document")
                }
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth = max(0, depth - 1)
            default: break
            }
        }
    }

    private static func isAnchorNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }

    /// What to do about libyaml's commonest complaints, in words an author acts on; `opened` is
    /// where the construct the problem is in began (a `{` not closed), when libyaml says.
    static func fix(for problem: String, openedAt opened: Mark?) -> String? {
        let since = opened.map { " (opened on line \($0.line))" } ?? ""
        return switch problem {
        case "did not find expected ',' or '}'":
            "a { ... }\(since) is not closed before this point: close it with '}', separate its entries with ', ', or write the mapping as indented lines"
        case "did not find expected ',' or ']'":
            "a [ ... ]\(since) is not closed before this point: close it with ']', or separate its items with ', '"
        case "mapping values are not allowed in this context":
            "a 'key: value' where none can start: indent this line like the keys beside it, or quote a value that holds ': '"
        case "did not find expected key":
            "this line is indented unlike the keys of its mapping\(since): align it with them"
        case "could not find expected ':'":
            "a key needs ': ' after it, or a quoted string above is not closed"
        case "found character that cannot start any token":
            "YAML indents with spaces, never tabs, and a value starting with '@' or '`' must be quoted"
        case "found unexpected end of stream":
            "a quoted string, '[' or '{'\(since) is not closed before the end of the file"
        case "did not find expected '-' indicator":
            "the items of a list each start with '- ', at the same indentation"
        case "block sequence entries are not allowed in this context":
            "a '- ' item on the line of its key: put the list on the lines below the key, indented"
        default: nil
        }
    }

    private static func syntaxError(_ error: YamlError, in file: SourceFile) -> JSONParser.SyntaxError {
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _):
            return JSONParser.SyntaxError(
                offset: offset(mark, in: file),
                message: "YAML: \(problem)" + (fix(for: problem, openedAt: context?.mark).map { "; \($0)" } ?? ""))
        case .composer(_, let problem, let mark, _):
            return JSONParser.SyntaxError(offset: offset(mark, in: file), message: "YAML: \(problem)")
        case .reader(let problem, let characterOffset, let value, let yaml):
            // libyaml refuses control characters (and invalid text) before parsing; it gives a
            // character offset, which becomes the byte offset diagnostics need.
            let byteOffset =
                characterOffset.flatMap { yaml.index(yaml.startIndex, offsetBy: $0, limitedBy: yaml.endIndex) }
                .map { yaml.utf8.distance(from: yaml.utf8.startIndex, to: $0) } ?? 0
            let hex = String(value, radix: 16, uppercase: true)
            let character = value >= 0 ? " (U+\(String(repeating: "0", count: max(0, 4 - hex.count)) + hex))" : ""
            return JSONParser.SyntaxError(
                offset: byteOffset,
                message: "YAML: \(problem)\(character); remove it, or write it as an escape in a double-quoted string, like \"\\u0007\""
            )
        case .duplicatedKeysInMapping(let duplicates, let context):
            return JSONParser.SyntaxError(
                offset: offset(context.mark, in: file),
                message: "duplicate key \(duplicates.map { "\"\($0)\"" }.joined(separator: ", ")); keep one of them"
            )
        default:
            return JSONParser.SyntaxError(offset: 0, message: "the YAML cannot be read: \(error)")
        }
    }
}
