/// Text with `{references}` spliced in, as `$template` values and localized messages write it:
/// `{{` and `}}` are literal braces. One scanner, so both read braces the same way.
enum TemplateText {
    enum Piece: Equatable {
        case text(String)
        /// What stood between the braces, as written.
        case reference(String)
    }

    /// - Returns: the pieces, or why the braces do not balance (in words for a diagnostic).
    static func pieces(of text: String) -> Result<[Piece], Malformed> {
        var pieces: [Piece] = []
        var literal = ""
        var scalars = text.unicodeScalars[...]
        while let scalar = scalars.popFirst() {
            switch scalar {
            case "{" where scalars.first == "{":
                scalars.removeFirst()
                literal.unicodeScalars.append("{")
            case "}" where scalars.first == "}":
                scalars.removeFirst()
                literal.unicodeScalars.append("}")
            case "{":
                guard let close = scalars.firstIndex(of: "}") else { return .failure(.unclosed) }
                if !literal.isEmpty { pieces.append(.text(literal)) }
                literal = ""
                pieces.append(.reference(String(String.UnicodeScalarView(scalars[..<close]))))
                scalars = scalars[scalars.index(after: close)...]
            case "}":
                return .failure(.loneClose)
            default:
                literal.unicodeScalars.append(scalar)
            }
        }
        if !literal.isEmpty { pieces.append(.text(literal)) }
        return .success(pieces)
    }

    /// `pieces` written back as text, literal braces doubled.
    static func text(of pieces: [Piece]) -> String {
        pieces.map { piece in
            switch piece {
            case .text(let text): text.replacingBraces
            case .reference(let reference): "{\(reference)}"
            }
        }.joined()
    }

    enum Malformed: Error {
        case unclosed, loneClose

        /// - Parameter place: where, for the message: `in the template`, or empty.
        func message(_ place: String) -> String {
            let place = place.isEmpty ? "" : " \(place)"
            return switch self {
            case .unclosed: "a '{'\(place) is never closed; write {{ for a literal brace"
            case .loneClose: "a lone '}'\(place); write }} for a literal brace"
            }
        }
    }
}

extension String {
    fileprivate var replacingBraces: String {
        var doubled = ""
        for scalar in unicodeScalars {
            doubled.unicodeScalars.append(scalar)
            if scalar == "{" || scalar == "}" { doubled.unicodeScalars.append(scalar) }
        }
        return doubled
    }
}
