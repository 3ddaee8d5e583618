/// The apps that may open this server's universal links (iOS) and App Links (Android): the https
/// links of `links.yaml` are published for them in `/.well-known/apple-app-site-association` and
/// `/.well-known/assetlinks.json`. Each file is served only when its app is configured.
public struct AppLinks: Sendable, Equatable {
    /// `TEAMID.bundle.id` of each iOS app.
    public var appleAppIDs: [String] = []
    /// The Android app's package name.
    public var androidPackage: String?
    /// SHA-256 fingerprints of the Android app's signing certificates (`AB:CD:...`, upper case).
    public var androidCertificateFingerprints: [String] = []

    public init(appleAppIDs: [String] = [], androidPackage: String? = nil, androidCertificateFingerprints: [String] = []) {
        self.appleAppIDs = appleAppIDs
        self.androidPackage = androidPackage
        self.androidCertificateFingerprints = androidCertificateFingerprints
    }

    /// A 10-character team ID, a dot, then a bundle ID.
    static func isAppleAppID(_ text: String) -> Bool {
        let parts = text.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, parts[0].count == 10,
            parts[0].unicodeScalars.allSatisfy({ ("A"..."Z").contains($0) || ("0"..."9").contains($0) })
        else {
            return false
        }
        return parts[1].unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "-"
        }
    }

    /// Dot-separated names, each starting with a letter (`com.example.eats`).
    static func isAndroidPackage(_ text: String) -> Bool {
        let names = text.split(separator: ".", omittingEmptySubsequences: false)
        return names.count >= 2
            && names.allSatisfy { name in
                guard let first = name.unicodeScalars.first, ("a"..."z").contains(first) || ("A"..."Z").contains(first) else {
                    return false
                }
                return name.unicodeScalars.allSatisfy {
                    ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
                }
            }
    }

    /// 32 upper-case hexadecimal pairs separated by `:`.
    static func isFingerprint(_ text: String) -> Bool {
        let pairs = text.split(separator: ":", omittingEmptySubsequences: false)
        return pairs.count == 32
            && pairs.allSatisfy { $0.count == 2 && $0.unicodeScalars.allSatisfy { ("0"..."9").contains($0) || ("A"..."F").contains($0) } }
    }
}
