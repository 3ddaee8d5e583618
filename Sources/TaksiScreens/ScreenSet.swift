public import TaksiSchema

/// One screen, compiled: its skeleton (ready to send) and the plan for its data.
public struct CompiledScreen: Sendable {
    /// The screen's name, as clients ask for it (`home`, `bikes/stations`).
    public var name: String
    /// The file that defines it, as shown in diagnostics.
    public var file: String
    /// The layout with typed placeholders; `requires_data` set exactly on dynamic components.
    public var skeleton: Skeleton
    /// How to build the data response.
    public var dataPlan: DataPlan
    /// The data response, when every source is a fixture: computed and checked once at load.
    public var staticData: InterfaceData?

    /// Whether the client will ask for data.
    public var requiresData: Bool { skeleton.requiresData }
}

/// A whole validated screen set: every screen compiled, plus what the app knows (the catalog).
/// Immutable; a reload builds a new one.
public struct ScreenSet: Sendable {
    /// Screens by name.
    public var screens: [String: CompiledScreen]
    /// The component types and custom actions the screens were checked against.
    public var catalog: ComponentCatalog
    /// Problems that do not stop the set from being served.
    public var warnings: [Diagnostic]

    /// The screen names in sorted order.
    public var names: [String] { screens.keys.sorted() }
}

/// The outcome of loading a screen directory: a screen set when there are no errors, and every
/// diagnostic found (all at once, not just the first).
public struct ScreenSetLoad: Sendable {
    public var screenSet: ScreenSet?
    public var diagnostics: [Diagnostic]
}

extension ScreenSetLoad {
    /// One line for the end of a report: `3 screens are valid (1 warning)` or `2 errors, 1 warning`.
    public var summary: String {
        let errors = diagnostics.filter { $0.severity == .error }.count
        let warnings = diagnostics.count - errors
        let warningText = warnings == 1 ? "1 warning" : "\(warnings) warnings"
        if let screenSet, errors == 0 {
            let count = screenSet.screens.count
            let screens = count == 1 ? "1 screen is" : "\(count) screens are"
            return "\(screens) valid" + (warnings > 0 ? " (\(warningText))" : "")
        }
        return (errors == 1 ? "1 error" : "\(errors) errors") + ", \(warningText); nothing can be served until the errors are fixed"
    }
}
