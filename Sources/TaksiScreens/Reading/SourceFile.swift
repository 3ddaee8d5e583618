/// A file's bytes with the offsets where its lines start, to turn a byte offset into the line and
/// column an editor shows.
public struct SourceFile: Sendable {
    /// The path shown in diagnostics, e.g. `Screens/home.json`.
    public var path: String
    /// The file's bytes.
    public var bytes: [UInt8]
    fileprivate var lineStarts: [Int]

    public init(path: String, bytes: [UInt8]) {
        self.path = path
        self.bytes = bytes
        var starts = [0]
        for (offset, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") {
            starts.append(offset + 1)
        }
        self.lineStarts = starts
    }

    /// The 1-based line and column of a byte offset; the column counts characters (Unicode scalars).
    /// The line and column of a node of this file (origin 0; a fragment's nodes are located by
    /// ``DefinitionReader``, which knows their files).
    public func location(ofOffset offset: SourceOffset) -> SourceLocation {
        location(ofOffset: offset.byte)
    }

    public func location(ofOffset offset: Int) -> SourceLocation {
        let clamped = min(max(0, offset), bytes.count)
        var low = 0
        var high = lineStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if lineStarts[middle] <= clamped { low = middle } else { high = middle - 1 }
        }
        let lineStart = lineStarts[low]
        // Count scalars, not bytes: continuation bytes (10xxxxxx) do not start a character.
        let column = bytes[lineStart..<clamped].reduce(1) { count, byte in byte & 0xC0 == 0x80 ? count : count + 1 }
        return SourceLocation(line: low + 1, column: column)
    }
}

extension SourceFile {
    /// The byte offset of a 1-based line and column (counted in characters), clamped to the file.
    public func offset(ofLine line: Int, column: Int) -> Int {
        guard line >= 1 else { return 0 }
        guard line <= lineStarts.count else { return bytes.count }
        var offset = lineStarts[line - 1]
        var remaining = column - 1
        while remaining > 0, offset < bytes.count, bytes[offset] != UInt8(ascii: "\n") {
            offset += 1
            // Skip continuation bytes: a column is a character, not a byte.
            while offset < bytes.count, bytes[offset] & 0xC0 == 0x80 { offset += 1 }
            remaining -= 1
        }
        return offset
    }
}

/// A 1-based line and column in a file.
public struct SourceLocation: Sendable, Hashable, CustomStringConvertible {
    public var line: Int
    public var column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public var description: String { "\(line):\(column)" }
}
