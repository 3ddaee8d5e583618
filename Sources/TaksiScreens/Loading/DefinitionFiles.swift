import TaksiSchema

/// The files of a screen directory, each parsed once when a phase first asks for it, and the
/// load's findings in the order they were made (a file that does not parse is reported where it
/// is first read). A class: the phases, the string tables and the compiler's fixture reader all
/// ask for files, and each must see the others' parses.
final class DefinitionFiles {
    /// Bytes by path relative to the screens directory (`home.json`, `components/card.json`).
    let bytes: [String: [UInt8]]
    /// The directory as diagnostics name it (`Screens`).
    let root: String
    /// Every path, sorted: the order files are read and reported in.
    let paths: [String]
    /// Every finding of the load so far, in the order found.
    var diagnostics: [Diagnostic] = []
    private var parsed: [String: (SourceFile, JSONNode)] = [:]
    /// Files that exist but could not be read (not UTF-8, or a syntax error), reported once.
    private(set) var unreadable: Set<String> = []
    /// Files' values, made once (fixture files are read by every screen naming them).
    private var values: [String: JSONValue] = [:]

    init(_ bytes: [String: [UInt8]], root: String) {
        self.bytes = bytes
        self.root = root
        self.paths = bytes.keys.sorted()
    }

    /// Whether the directory has this file.
    func contains(_ relative: String) -> Bool { bytes[relative] != nil }

    /// The file's tree, or nil when it does not exist or does not parse (then reported once).
    func parse(_ relative: String) -> (SourceFile, JSONNode)? {
        if let done = parsed[relative] { return done }
        guard var bytes = bytes[relative], !unreadable.contains(relative) else { return nil }
        // A UTF-8 byte order mark (some editors write one) starts the file; it is no part of the
        // first key. YAML and JSON (RFC 8259, 8.1) both let a reader ignore it.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        let file = SourceFile(path: "\(root)/\(relative)", bytes: bytes)
        if let offset = ScreenSetLoader.firstInvalidUTF8Offset(bytes) {
            let isUTF16 = bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF])
            diagnostics.append(
                Diagnostic(
                    code: .syntax, file: file.path, location: file.location(ofOffset: offset),
                    message: isUTF16 ? "the file is UTF-16; save it as UTF-8" : "the file is not valid UTF-8; save it as UTF-8"
                )
            )
            unreadable.insert(relative)
            return nil
        }
        do {
            let isYAML = relative.hasSuffix(".yaml") || relative.hasSuffix(".yml")
            let node = try isYAML ? YAMLReader.parse(file) : JSONParser.parse(bytes)
            parsed[relative] = (file, node)
            return (file, node)
        } catch {
            diagnostics.append(
                Diagnostic(code: .syntax, file: file.path, location: file.location(ofOffset: error.offset), message: error.message))
            unreadable.insert(relative)
            return nil
        }
    }

    /// The file's value, or nil when it does not exist or does not parse.
    func value(of relative: String) -> JSONValue? {
        if let value = values[relative] { return value }
        guard let (_, node) = parse(relative) else { return nil }
        values[relative] = node.value
        return node.value
    }
}
