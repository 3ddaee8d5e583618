package import TaksiServer

extension ConnectionLimits {
    /// The defaults with `change` made: `.with { $0.maxBodyBytes = 10 }`.
    package static func with(_ change: (inout ConnectionLimits) -> Void) -> ConnectionLimits {
        var limits = ConnectionLimits()
        change(&limits)
        return limits
    }
}
