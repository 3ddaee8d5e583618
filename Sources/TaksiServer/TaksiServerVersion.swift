/// The release of taksi-server this code is: printed by `taksi-server --version`, answered by
/// `GET /healthz`, and logged at start-up. Follows Semantic Versioning; see CHANGELOG.md.
public enum TaksiServerVersion {
    /// The version, like `1.0.0`.
    public static let current = "1.0.0"
}
