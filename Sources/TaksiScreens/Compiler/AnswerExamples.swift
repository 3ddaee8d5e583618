import Foundation
import TaksiSchema

/// The configured upstreams as the screens see them: their names, and for those that answer from
/// files (`file:DIR`), the folder, so a source's path is checked against the files there and its
/// bindings against what they hold.
struct ConfiguredUpstreams: Sendable {
    var names: Set<String>
    /// Folders of `file:` upstreams, by name.
    var directories: [String: String]
}

/// Examples of a value a binding reads into: what a source answers (the files of a `file:`
/// upstream, a fixture), or an element of such an answer (a `$each` loop variable). A binding's
/// keys are checked against them: a key none of them has is a mistake the server would otherwise
/// answer with an empty value and a `200`.
struct AnswerExamples: Sendable {
    /// One value per example (a file, an element): a key is known when any of them has it.
    var values: [JSONValue]
    /// Where they come from, for messages: `upstreams/shop/products.json`.
    var origin: String

    /// The examples of the elements of the arrays at `steps` (what `$each` iterates).
    func elements(at steps: JSONPath) -> AnswerExamples? {
        guard case .found(let found) = walk(steps) else { return nil }
        let elements = found.flatMap { $0.arrayValue ?? [] }
        return elements.isEmpty ? nil : AnswerExamples(values: elements, origin: origin)
    }

    /// What walking `steps` finds.
    enum Walk {
        /// The values at the end (possibly none known: then nothing more is checked).
        case found([JSONValue])
        /// No example has `key` after `before` (the steps walked before it); `keys` are the ones there are.
        case missing(key: String, before: JSONPath, keys: [String])
    }

    func walk(_ steps: JSONPath) -> Walk {
        var current = values
        var walked: [JSONPath.Segment] = []
        for segment in steps.segments {
            switch segment {
            case .key(let key):
                let objects = current.compactMap(\.objectValue)
                // Only objects can be checked; anything else (null, a value the API varies) is not judged.
                guard !objects.isEmpty, objects.count == current.count else { return .found([]) }
                let next = objects.compactMap { $0[key] }
                guard !next.isEmpty else {
                    let keys = Set(objects.flatMap(\.keys)).sorted()
                    return .missing(key: key, before: JSONPath(segments: walked), keys: keys)
                }
                current = next
            case .index:
                let arrays = current.compactMap(\.arrayValue)
                guard !arrays.isEmpty else { return .found([]) }
                current = arrays.flatMap { $0 }
            }
            walked.append(segment)
        }
        return .found(current)
    }
}

extension HTTPSourceReader {
    /// The files of a `file:` upstream that answer the source's path (a `GET /products` reads
    /// `DIR/products.json`; a `{parameter}` segment any file or folder there), read as examples of
    /// the answer. A folder that does not exist, or a path no file answers, is reported with the fix.
    mutating func readFiles(
        of upstream: String, in directory: String, path parts: [HTTPSource.Part], _ reader: inout DefinitionReader
    ) -> AnswerExamples? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            if let node = member("upstream") {
                reader.report(
                    .missingFixture, at: node, path: path.appending("upstream"),
                    "upstream \"\(upstream)\" answers from the files of \(ScreenDirectory.shown(directory)), which is not a folder; "
                        + "create it with one JSON file per path (GET /products reads \(ScreenDirectory.shown(directory))/products.json), "
                        + "or point config.json's upstream at a folder that exists"
                )
            }
            markInvalid()
            return nil
        }
        let written = parts.map { part in
            switch part {
            case .text(let text): text
            case .parameter(let name): "{\(name)}"
            }
        }.joined()
        // Segments as the file upstream reads them: literal text, or a whole-segment parameter.
        let segments = written.split(separator: "/").map(String.init)
        let files = Self.files(matching: segments, in: directory)
        guard !files.isEmpty else {
            let known = Self.paths(in: directory)
            let target = ScreenDirectory.shown(directory) + "/" + segments.joined(separator: "/") + ".json"
            if let node = member("path") {
                reader.report(
                    .missingFixture, at: node, path: path.appending("path"),
                    "upstream \"\(upstream)\" answers GET \(written) from \(target), which does not exist; "
                        + "write the API's answer there, or fix the path"
                        + (known.isEmpty ? "" : " (its files answer \(known.prefix(8).joined(separator: ", ")))")
                        + NameSuggestion.hint(for: written, among: known)
                )
            }
            markInvalid()
            return nil
        }
        // A file that is not JSON is the server's to report when it reads it; it is no example.
        let values = files.compactMap { file in
            FileManager.default.contents(atPath: file).flatMap { try? JSONParser.parse(Array($0)).value }
        }
        let origin =
            files.count == 1 ? ScreenDirectory.shown(files[0]) : "\(ScreenDirectory.shown(directory)) (\(files.count) files for \(written))"
        return values.isEmpty ? nil : AnswerExamples(values: values, origin: origin)
    }

    /// The `.json` files a path's segments reach, a `{parameter}` in a segment matching any text
    /// (`{id}`, `p-{id}`).
    static func files(matching segments: [String], in directory: String) -> [String] {
        guard let first = segments.first else { return [] }
        let last = segments.count == 1
        var names: [String]
        if let pattern = segmentPattern(first) {
            let entries = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
            names = entries.filter { entry in
                guard !entry.hasPrefix(".") else { return false }
                let name = last ? (entry.hasSuffix(".json") ? String(entry.dropLast(5)) : nil) : entry
                // `x.POST.json` answers an action, not a GET.
                guard let name, !(last && name.contains(".")) else { return false }
                return name.range(of: pattern, options: .regularExpression) != nil
            }.map { last ? String($0.dropLast(5)) : $0 }
        } else {
            names = [first]
        }
        var found: [String] = []
        for name in names {
            let next = directory + "/" + name
            if last {
                if FileManager.default.fileExists(atPath: next + ".json") { found.append(next + ".json") }
            } else {
                found += files(matching: Array(segments.dropFirst()), in: next)
            }
        }
        return found
    }

    /// A segment with parameters as a regular expression over a file name; nil for a literal one.
    static func segmentPattern(_ segment: String) -> String? {
        guard segment.contains("{") else { return nil }
        var pattern = "^"
        var rest = segment[...]
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            pattern += NSRegularExpression.escapedPattern(for: String(rest[..<open])) + ".+"
            rest = rest[rest.index(after: close)...]
        }
        return pattern + NSRegularExpression.escapedPattern(for: String(rest)) + "$"
    }

    /// The GET paths a folder's files answer: `/products`, `/products/espresso-cups`.
    static func paths(in directory: String) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: directory)
        var paths: [String] = []
        while let relative = enumerator?.nextObject() as? String {
            // `x.json` answers GET /x; `x.POST.json` answers an action's POST, not a source.
            let stem = relative.dropLast(5).split(separator: "/").last ?? ""
            guard relative.hasSuffix(".json"), !stem.isEmpty, !stem.contains(".") else { continue }
            paths.append("/" + relative.dropLast(5))
        }
        return paths.sorted()
    }
}
