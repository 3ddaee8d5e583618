import Foundation
import TaksiSchema

/// The configured upstreams as the screens see them: their names; for those that answer from
/// files (`file:DIR`), the folder, so a source's path is checked against the files there and its
/// bindings against what they hold; for those with an OpenAPI document, the document, which a
/// source's path and bindings are checked against instead.
struct ConfiguredUpstreams: Sendable {
    var names: Set<String>
    /// Folders of `file:` upstreams, by name.
    var directories: [String: String]
    /// OpenAPI documents, by upstream name.
    var documents: [String: OpenAPIDocument] = [:]
}

extension HTTPSource {
    /// What a `file:` upstream's file for `method` ends with: `x.json` answers `GET /x`,
    /// `x.POST.json` a `POST /x` (the server's file upstream reads them so; `validate` checks by it).
    public static func answerFileSuffix(_ method: String) -> String {
        method == "GET" ? ".json" : ".\(method).json"
    }
}

extension HTTPSourceReader {
    /// The files of a `file:` upstream that answer the source's path (a `GET /products` reads
    /// `DIR/products.json`; a `{parameter}` segment any file or folder there), read as examples of
    /// the answer. A folder that does not exist, or a path no file answers, is reported with the fix.
    mutating func readFiles(
        of upstream: String, in directory: String, path parts: [HTTPSource.Part], _ reader: inout DefinitionReader
    ) -> KnownAnswer? {
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
        let written = HTTPSource.written(parts)
        // Segments as the file upstream reads them: literal text, or a whole-segment parameter.
        let segments = written.split(separator: "/").map(String.init)
        let files = Self.files(matching: segments, in: directory)
        guard !files.isEmpty else {
            if let node = member("path") {
                reader.report(
                    .missingFixture, at: node, path: path.appending("path"),
                    Self.missingFile(of: upstream, in: directory, method: "GET", path: written))
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
        return values.isEmpty
            ? nil : KnownAnswer(shape: AnswerShape(examples: values), origin: origin, fix: "if the API answers it, add it to that file")
    }

    /// Why no file of a `file:` upstream answers `method` `path` (a source's or a call's), with the
    /// file to write and the paths its files do answer.
    static func missingFile(of upstream: String, in directory: String, method: String, path written: String) -> String {
        let segments = written.split(separator: "/").map(String.init)
        let known = paths(in: directory, method: method)
        let target = ScreenDirectory.shown(directory) + "/" + segments.joined(separator: "/") + HTTPSource.answerFileSuffix(method)
        // A GET's file holds the answer; another method's, a list of answers.
        return "upstream \"\(upstream)\" answers \(method) \(written) from \(target), which does not exist; "
            + "write the API's \(method == "GET" ? "answer" : "answers") there, or fix the path"
            + (known.isEmpty ? "" : " (its files answer \(method == "GET" ? "" : method + " ")\(known.prefix(8).joined(separator: ", ")))")
            + NameSuggestion.hint(for: written, among: known)
    }

    /// The files a path's segments reach for `method`, a `{parameter}` in a segment matching any
    /// text (`{id}`, `p-{id}`): `x.json` answers a GET, `x.POST.json` a POST (as the server's
    /// file upstream reads them).
    static func files(matching segments: [String], in directory: String, method: String = "GET") -> [String] {
        guard let first = segments.first else { return [] }
        let last = segments.count == 1
        let suffix = HTTPSource.answerFileSuffix(method)
        var names: [String]
        if let pattern = segmentPattern(first) {
            let entries = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
            names = entries.filter { entry in
                guard !entry.hasPrefix(".") else { return false }
                let name = last ? (entry.hasSuffix(suffix) ? String(entry.dropLast(suffix.count)) : nil) : entry
                // `x.POST.json` answers an action, not a GET.
                guard let name, !(last && name.contains(".")) else { return false }
                return name.range(of: pattern, options: .regularExpression) != nil
            }.map { last ? String($0.dropLast(suffix.count)) : $0 }
        } else {
            names = [first]
        }
        var found: [String] = []
        for name in names {
            let next = directory + "/" + name
            if last {
                if FileManager.default.fileExists(atPath: next + suffix) { found.append(next + suffix) }
            } else {
                found += files(matching: Array(segments.dropFirst()), in: next, method: method)
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

    /// The paths a folder's files answer for `method`: `/products`, `/products/espresso-cups`.
    static func paths(in directory: String, method: String = "GET") -> [String] {
        let suffix = HTTPSource.answerFileSuffix(method)
        let enumerator = FileManager.default.enumerator(atPath: directory)
        var paths: [String] = []
        while let relative = enumerator?.nextObject() as? String {
            // `x.json` answers GET /x; `x.POST.json` answers an action's POST, not a source.
            guard relative.hasSuffix(suffix) else { continue }
            let path = relative.dropLast(suffix.count)
            let stem = path.split(separator: "/").last ?? ""
            guard !stem.isEmpty, !stem.contains(".") else { continue }
            paths.append("/" + path)
        }
        return paths.sorted()
    }
}
