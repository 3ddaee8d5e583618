import TaksiSchema

/// A reusable piece of screen definition in its own file under `fragments/`: a run of components
/// (a header, a footer) or one content value (a card's content, an action), with typed
/// parameters. A screen uses it by name with arguments, and it is expanded there before the screen
/// is compiled, so every use is checked like components written in place.
///
/// ```yaml
/// # Screens/fragments/greeting.yaml, used as  - {$fragment: greeting, with: {name: query.name}}
/// parameters:
///   name: {type: data}                  # a value of the using screen: a binding path
///   kind: {type: enum, values: [title, subtitle], default: title}
/// components:
///   - name: label_component
///     identifier: greeting
///     content:
///       value: {$template: "Hello, {name}!"}
///       kind: {$param: kind}
/// ```
struct Fragment: Sendable {
    /// What a fragment holds, which decides where it may be used.
    enum Kind: Sendable {
        /// Components, used as an element of a `components` list.
        case components
        /// One value, used wherever a value goes.
        case content
    }

    /// One declared parameter.
    struct Parameter: Sendable {
        enum Kind: Sendable {
            /// A value of the using screen, given as a binding path (`feed.restaurants`); the
            /// fragment's bindings read it like a source.
            case data
            /// A literal of this type, or a binding of the using screen, placed with `{$param: name}`.
            case value(FieldType)
        }

        var name: String
        var kind: Kind
        /// Used when a use leaves the parameter out; a parameter without one is required.
        var defaultValue: JSONNode?
    }

    /// The folder of fragments in a screens directory.
    static let folder = "fragments"
    static let keys = ["description", "parameters", "components", "content"]
    static let parameterKeys = ["type", "values", "items", "fields", "default", "summary"]
    /// The key of a use: `{$fragment: header, with: {...}}`.
    static let useKey = "$fragment"
    static let argumentsKey = "with"
    /// The key that places a value parameter: `{$param: title}`.
    static let parameterKey = "$param"
    /// The longest chain of fragments inside fragments.
    static let maximumDepth = 16

    /// Its path under `fragments/` without the extension: `header`, `cards/restaurant`.
    var name: String
    var file: SourceFile
    /// The whole file, as parsed; each use copies it.
    var root: JSONNode
    var kind: Kind
    /// Where the components or the content are in the file.
    var bodyPath: JSONPath
    /// In the order the file declares them.
    var parameters: [Parameter]
    /// The path of every node in the file, by offset, for diagnostics.
    var paths: [Int: JSONPath]

    func parameter(named name: String) -> Parameter? {
        parameters.first { $0.name == name }
    }

    /// The fragment's name for a file under `fragments/`: `fragments/cards/restaurant.yaml` is `cards/restaurant`.
    static func name(ofFile relativePath: String) -> String {
        let inside = relativePath.dropFirst(folder.count + 1)
        guard let dot = inside.lastIndex(of: ".") else { return String(inside) }
        return String(inside[..<dot])
    }
}

extension Fragment.Parameter {
    var isData: Bool {
        if case .data = kind { return true }
        return false
    }
}
