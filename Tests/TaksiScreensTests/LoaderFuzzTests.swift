import TaksiSchema
import TaksiScreens
import TaksiTestSupport
import Testing

/// The loader never stops the process, whatever a file holds: a live reload of one bad file must
/// leave the server serving its last good set. Seeded mutations of every kind of file of a small
/// set that uses every feature (components, actions, links, fixtures, fragments, string tables and
/// the locales file), each loaded whole. A crash here (a trap, an exclusivity violation, an
/// unbounded expansion) fails the suite; so does a set with errors that would still be served, or
/// an error that names no file.
@Suite("Loader fuzz")
struct LoaderFuzzTests {
    static let seed: [String: String] = [
        "home.yaml": """
        name: home
        entry: true
        sources:
          q: {type: request, parameters: {name: {default: Ada}, n: {type: integer, default: 2}}}
          feed: {type: fixture, file: fixtures/feed.json}
        components:
          - {$fragment: greeting, with: {name: q.name}}
          - name: label_component
            identifier: count
            content: {value: {$text: count, with: {count: q.n}}}
          - name: collection_component
            identifier: cards
            content:
              component_name: card_component
              values: {$each: feed.items, as: item, template: {title: {$bind: item.title}, action: {identifier: navigation, content: {interface_identifier: {$template: "items/{item.id}"}}}}}
          - name: button_component
            content: {title: {$text: done}, action: {identifier: done_action, content: {}}}
        """,
        "items/item.json": """
        {"name": "items/{id}", "parameters": {"id": {"type": "integer"}},
         "components": [{"name": "label_component", "identifier": "id", "content": {"value": {"$template": "Item {path.id}"}}}]}
        """,
        "components/card_component.json": """
        {"name": "card_component", "fields": [
          {"name": "title", "type": "string", "required": true, "dynamic": true},
          {"name": "action", "type": "action", "required": false}]}
        """,
        "actions.json": #"{"custom_actions": [{"identifier": "done_action"}]}"#,
        "links.yaml": """
        links:
          - url: https://example.com/i/{id}
            screen: items/{id}
        """,
        "fixtures/feed.json": #"{"items": [{"id": 1, "title": "One"}, {"id": 2, "title": "Two"}]}"#,
        "fragments/greeting.yaml": """
        parameters:
          name: {type: data}
        components:
          - name: label_component
            identifier: greeting
            content: {value: {$text: greeting, with: {name: name}}, kind: title}
        """,
        "strings/en.yaml": """
        greeting: "Hello, {name}!"
        count:
          one: "{count} item"
          other: "{count} items"
        done: Done
        """,
        "strings/pt.yaml": """
        greeting: "Olá, {name}!"
        count:
          one: "{count} item"
          other: "{count} itens"
        done: Pronto
        """,
        "strings/locales.yaml": "default: en\npseudo: en-XA\n",
    ]

    static func bytes(_ files: [String: String]) -> [String: [UInt8]] { files.mapValues { Array($0.utf8) } }

    @Test("the seed set is valid, so every mutation starts from a set that serves")
    func seedIsValid() throws {
        let load = ScreenSetLoader.load(files: Self.bytes(Self.seed))
        #expect(load.screenSet != nil, "\(load.diagnostics.report)")
    }

    @Test("the reported crash: a duplicate key appended to a string table is a located error")
    func duplicateKeyInStringTable() throws {
        var files = Self.seed
        files["strings/pt.yaml"]! += "\ndone: Pronto de novo\n"
        let load = ScreenSetLoader.load(files: Self.bytes(files))
        #expect(load.screenSet == nil)
        let error = try #require(load.diagnostics.first { $0.severity == .error })
        #expect(error.file == "Screens/strings/pt.yaml")
        #expect(error.message.contains(#"duplicate key "done""#), "\(load.diagnostics.report)")
        #expect(error.location != nil)
    }

    @Test(
        "a string table or locales file that does not parse (BOM, UTF-16, invalid UTF-8, control character, bad YAML) is an error, not a crash"
    )
    func unparsableTables() throws {
        let broken: [(String, [UInt8])] = [
            ("UTF-16", [0xFF, 0xFE] + Array("done: x".utf8).flatMap { [$0, 0] }),
            ("invalid UTF-8", Array("done: ".utf8) + [0xC3, 0x28] + Array("\n".utf8)),
            ("control character", Array("done: a\u{07}b\n".utf8)),
            ("YAML syntax", Array("done: [unclosed\n".utf8)),
        ]
        for file in ["strings/pt.yaml", "strings/en.yaml", "strings/locales.yaml"] {
            for (what, bytes) in broken {
                var files = Self.bytes(Self.seed)
                files[file] = bytes
                let load = ScreenSetLoader.load(files: files)
                #expect(load.screenSet == nil, "\(file), \(what): served")
                #expect(
                    load.diagnostics.contains { $0.severity == .error && $0.file == "Screens/\(file)" },
                    "\(file), \(what): \(load.diagnostics.report)")
            }
        }
    }

    @Test("a UTF-8 byte order mark, as some editors write, is read as the start of the file, not as part of its first key")
    func byteOrderMark() throws {
        var files = Self.bytes(Self.seed)
        for path in ["strings/pt.yaml", "home.yaml", "items/item.json", "fixtures/feed.json"] {
            files[path] = [0xEF, 0xBB, 0xBF] + files[path]!
        }
        let load = ScreenSetLoader.load(files: files)
        #expect(load.screenSet != nil, "\(load.diagnostics.report)")
        #expect(load.diagnostics.isEmpty, "\(load.diagnostics.report)")
    }

    @Test("seeded mutations of every file kind load without a crash; a set with errors is never served", arguments: 0..<8)
    func mutations(batch: Int) throws {
        let paths = Self.seed.keys.sorted()
        var generator = SplitMix64(seed: UInt64(batch) &* 0x9E37_79B9 &+ 1)
        // 8 batches of 50: 400 sets, every file mutated about 40 times.
        for round in 0..<50 {
            var files = Self.bytes(Self.seed)
            let path = paths[(batch * 50 + round) % paths.count]
            let mutation = Mutation.allCases[Int(generator.next() % UInt64(Mutation.allCases.count))]
            files[path] = mutation.apply(to: files[path]!, using: &generator)
            if generator.next() % 4 == 0 {
                // Now and then a second file breaks too, so errors from two phases meet.
                let other = paths[Int(generator.next() % UInt64(paths.count))]
                files[other] = Mutation.allCases[Int(generator.next() % UInt64(Mutation.allCases.count))].apply(
                    to: files[other]!, using: &generator)
            }
            let load = ScreenSetLoader.load(files: files)
            let errors = load.diagnostics.filter { $0.severity == .error }
            if !errors.isEmpty { #expect(load.screenSet == nil, "\(path), \(mutation): a set with errors was served") }
            for error in errors {
                #expect(error.file.hasPrefix("Screens"), "\(path), \(mutation): an error names no file: \(error)")
                #expect(!error.message.isEmpty)
            }
        }
    }

    /// Ways a person, an editor or a broken pipeline damages a file.
    enum Mutation: CaseIterable {
        case flipByte, insertByte, deleteRange, duplicateLine, swapLines, truncate, insertControl, prependBOM, utf16, invalidUTF8,
            duplicateFirstKey, indentLine, dropQuote, repeatBrace

        func apply(to bytes: [UInt8], using generator: inout SplitMix64) -> [UInt8] {
            var bytes = bytes
            func index(_ count: Int) -> Int { count == 0 ? 0 : Int(generator.next() % UInt64(count)) }
            var lines: [[UInt8]] { bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init) }
            func joined(_ lines: [[UInt8]]) -> [UInt8] { Array(lines.joined(separator: [UInt8(ascii: "\n")])) }
            switch self {
            case .flipByte:
                if !bytes.isEmpty { bytes[index(bytes.count)] = UInt8(truncatingIfNeeded: generator.next()) }
            case .insertByte:
                let characters = Array("{}[]:,\"'#-&*!|>%@` \t\n\\".utf8)
                bytes.insert(characters[index(characters.count)], at: index(bytes.count + 1))
            case .deleteRange:
                let start = index(bytes.count)
                bytes.removeSubrange(start..<min(bytes.count, start + 1 + index(12)))
            case .duplicateLine:
                var all = lines
                let line = index(all.count)
                all.insert(all[line], at: line)
                bytes = joined(all)
            case .swapLines:
                var all = lines
                if all.count > 1 { all.swapAt(index(all.count), index(all.count)) }
                bytes = joined(all)
            case .truncate:
                bytes = Array(bytes.prefix(index(bytes.count)))
            case .insertControl:
                bytes.insert(UInt8(index(32)), at: index(bytes.count + 1))
            case .prependBOM:
                bytes = [0xEF, 0xBB, 0xBF] + bytes
            case .utf16:
                bytes = [0xFF, 0xFE] + bytes.flatMap { [$0, 0] }
            case .invalidUTF8:
                bytes.insert(contentsOf: [[0xC3, 0x28], [0xFF], [0xE2, 0x82], [0xED, 0xA0, 0x80]][index(4)], at: index(bytes.count + 1))
            case .duplicateFirstKey:
                if let first = lines.first { bytes = bytes + [UInt8(ascii: "\n")] + first + [UInt8(ascii: "\n")] }
            case .indentLine:
                var all = lines
                let line = index(all.count)
                all[line] = Array("   ".utf8.prefix(1 + index(3))) + all[line]
                bytes = joined(all)
            case .dropQuote:
                if let quote = bytes.firstIndex(of: UInt8(ascii: "\"")) { bytes.remove(at: quote) }
            case .repeatBrace:
                bytes.insert(contentsOf: Array(repeating: UInt8(ascii: "["), count: 1 + index(200)), at: index(bytes.count + 1))
            }
            return bytes
        }
    }
}
