public import TaksiSchema

/// One problem found in a screen set, in the form compilers use so editors and CI can link it:
///
/// `Screens/home.json:14:9: error: components[2].content.action: navigation target "profil" is not a screen (did you mean "profile"?)`
public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable, Hashable {
        case error, warning
    }

    /// A stable, machine-readable name for the kind of problem. A struct, so new codes never break callers.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let unknownComponent = Code(rawValue: "unknown_component")
        /// A component failed with no reason of its own: a bug of the compiler, never silent.
        public static let uncompiledComponent = Code(rawValue: "uncompiled_component")
        /// An enum value, a custom action or a missing required field some app versions the
        /// variant reaches cannot decode.
        public static let notDecoded = Code(rawValue: "not_decoded")
        /// A field some app versions the variant reaches do not know, and ignore (a warning).
        public static let ignoredField = Code(rawValue: "ignored_field")
        public static let unreadableFile = Code(rawValue: "unreadable_file")
        public static let fileTooLarge = Code(rawValue: "file_too_large")
        public static let syntax = Code(rawValue: "syntax")
        public static let wrongType = Code(rawValue: "wrong_type")
        public static let unknownKey = Code(rawValue: "unknown_key")
        public static let missingKey = Code(rawValue: "missing_key")
        public static let invalidName = Code(rawValue: "invalid_name")
        public static let duplicateScreen = Code(rawValue: "duplicate_screen")
        public static let duplicateIdentifier = Code(rawValue: "duplicate_identifier")
        public static let staticFieldBound = Code(rawValue: "static_field_bound")
        public static let unknownSource = Code(rawValue: "unknown_source")
        public static let invalidBinding = Code(rawValue: "invalid_binding")
        public static let brokenNavigation = Code(rawValue: "broken_navigation")
        public static let invalidSource = Code(rawValue: "invalid_source")
        public static let unknownUpstream = Code(rawValue: "unknown_upstream")
        /// A `file:` upstream's folder, or the file answering a source's path, does not exist.
        public static let missingFixture = Code(rawValue: "missing_fixture")
        /// A binding names a key that what the source answers (its examples, its schema) does not have.
        public static let unknownAnswerField = Code(rawValue: "unknown_answer_field")
        /// A source's path is not an operation of its upstream's OpenAPI document.
        public static let unknownOperation = Code(rawValue: "unknown_operation")
        /// What a binding reads is not of the type its field decodes, as the source's answer is known.
        public static let answerTypeMismatch = Code(rawValue: "answer_type_mismatch")
        /// A binding reads a value its source may leave out, into a field that needs one, with no default.
        public static let optionalAnswerField = Code(rawValue: "optional_answer_field")
        public static let invalidSchema = Code(rawValue: "invalid_schema")
        public static let unresolvedData = Code(rawValue: "unresolved_data")
        public static let noScreens = Code(rawValue: "no_screens")
        public static let invalidVersion = Code(rawValue: "invalid_version")
        public static let overlappingVersions = Code(rawValue: "overlapping_versions")
        public static let missingDefaultAlternative = Code(rawValue: "missing_default_alternative")
        public static let invalidExperiment = Code(rawValue: "invalid_experiment")
        /// A warning: an experiment's weights do not add up to 100 (they are shares of their sum).
        public static let experimentWeights = Code(rawValue: "experiment_weights")
        public static let componentTooNew = Code(rawValue: "component_too_new")
        public static let unusedComponent = Code(rawValue: "unused_component")
        public static let unreachableScreen = Code(rawValue: "unreachable_screen")
        public static let ambiguousScreens = Code(rawValue: "ambiguous_screens")
        public static let invalidLink = Code(rawValue: "invalid_link")
        public static let invalidAction = Code(rawValue: "invalid_action")
        public static let invalidPatch = Code(rawValue: "invalid_patch")
        public static let unknownFragment = Code(rawValue: "unknown_fragment")
        public static let invalidFragment = Code(rawValue: "invalid_fragment")
        public static let fragmentCycle = Code(rawValue: "fragment_cycle")
        public static let fragmentTooLarge = Code(rawValue: "fragment_too_large")
        public static let unusedParameter = Code(rawValue: "unused_parameter")
        public static let unusedFragment = Code(rawValue: "unused_fragment")
        public static let invalidText = Code(rawValue: "invalid_text")
        public static let missingText = Code(rawValue: "missing_text")
        public static let unknownText = Code(rawValue: "unknown_text")
        public static let unusedText = Code(rawValue: "unused_text")

        /// A code for a value the client could not decode, from the schema checker.
        public init(_ code: SchemaViolation.Code) {
            self.rawValue = code.rawValue
        }
    }

    public var severity: Severity
    public var code: Code
    /// The file's path as shown to the author, e.g. `Screens/home.json`.
    public var file: String
    public var location: SourceLocation?
    /// Where in the document, e.g. `components[2].content.action`.
    public var path: JSONPath?
    /// What is wrong and how to fix it.
    public var message: String
    /// When the problem is inside a fragment: the fragments it was reached through, outermost
    /// first. `file` and `location` are then where the screen uses the outermost fragment, and
    /// `path` is a path in the innermost fragment's file.
    public var trace: [Frame] = []

    /// One fragment a diagnostic was reached through, with where in that fragment's file.
    public struct Frame: Sendable, Hashable, CustomStringConvertible {
        public var fragment: String
        public var file: String
        public var location: SourceLocation

        public init(fragment: String, file: String, location: SourceLocation) {
            self.fragment = fragment
            self.file = file
            self.location = location
        }

        /// `in fragment header (Screens/fragments/header.yaml:4:9)`.
        public var description: String { "in fragment \(fragment) (\(file):\(location))" }
    }

    public init(
        severity: Severity = .error, code: Code, file: String, location: SourceLocation? = nil, path: JSONPath? = nil,
        message: String
    ) {
        self.severity = severity
        self.code = code
        self.file = file
        self.location = location
        self.path = path
        self.message = message
    }

    public var description: String {
        var text = file
        if let location { text += ":\(location.line):\(location.column)" }
        return text + ": \(severity.rawValue): " + detail
    }

    /// The message with the fragment chain and the path before it, as ``description`` shows it
    /// after the file, line and column.
    public var detail: String {
        var text = trace.map { "\($0): " }.joined()
        if let path, !path.segments.isEmpty { text += "\(path): " }
        return text + message
    }
}

extension [Diagnostic] {
    /// Whether any diagnostic is an error (warnings alone do not stop a screen set).
    public var containsErrors: Bool { contains { $0.severity == .error } }

    /// The diagnostics in file order, then by position, one per line.
    public var report: String {
        sorted { lhs, rhs in
            if lhs.file != rhs.file { return lhs.file < rhs.file }
            let left = lhs.location ?? SourceLocation(line: 0, column: 0)
            let right = rhs.location ?? SourceLocation(line: 0, column: 0)
            return (left.line, left.column, lhs.message) < (right.line, right.column, rhs.message)
        }
        .map(\.description).joined(separator: "\n")
    }
}
