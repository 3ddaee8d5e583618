public import TaksiScreens

/// The tags a cached skeleton carries, naming what it was built from, so that a CDN can drop
/// exactly the answers a change made stale (see ``CDNPurger``): the screen, each fragment it places,
/// each catalog component type it uses, the catalog, its locale's string table, the screen set's
/// version, and one tag every answer of this server carries.
///
/// Within the strictest CDN's limits (CloudFront): at most 50 tags, each at most 256 visible
/// ASCII characters; a screen that places more fragments and components than fit names them by
/// their kind instead (`taksi:fragments`), which a change to any of them purges. The same on every
/// replica and after every restart: made from names only.
public struct CacheTags: Sendable, Equatable {
    /// The response header the CDN reads (`Surrogate-Key`, `Cache-Tag`, `Edge-Cache-Tag`, `xkey`).
    public var header: String
    /// What every tag starts with, so that several services can share one CDN's tags.
    public var prefix: String

    public static let maxCount = 50
    public static let maxLength = 256

    public init(header: String = "Surrogate-Key", prefix: String = "taksi") {
        self.header = header
        self.prefix = prefix
    }

    /// Spaces between tags in Fastly's `Surrogate-Key` and Varnish's `xkey`; commas in the others
    /// (Cloudflare's `Cache-Tag`, Akamai's `Edge-Cache-Tag`, CloudFront's).
    public var separator: String {
        ["surrogate-key", "xkey"].contains(header.lowercased()) ? " " : ","
    }

    /// The tag of everything this server answers.
    public var all: String { prefix }

    /// `taksi:screen:bikes/stations/{network}`.
    public func screen(_ name: String) -> String { tag("screen", name) }

    /// The tags of a variant (a translation passes the variant it translates as `sources`).
    public func tags(of compiled: ScreenVariant, sources: ScreenVariant? = nil, screensVersion: String) -> [String] {
        let sources = sources ?? compiled
        var tags = [all, tag("version", screensVersion), screen(compiled.name)]
        if let locale = compiled.locale { tags.append(tag("strings", locale)) }
        if !sources.componentTypes.isEmpty { tags.append(tag("catalog")) }
        let fragments = sources.fragmentsUsed.map { tag("fragment", $0) }
        let components = sources.componentTypes.map { tag("component", $0) }
        if tags.count + fragments.count + components.count <= Self.maxCount {
            return tags + fragments + components
        }
        // Too many to name: the components by their kind, and the fragments too when still too many.
        if tags.count + fragments.count + 1 <= Self.maxCount { return tags + fragments + [tag("components")] }
        return tags + (fragments.isEmpty ? [] : [tag("fragments")]) + (components.isEmpty ? [] : [tag("components")])
    }

    /// The header's value for `tags`.
    public func value(_ tags: [String]) -> String { tags.joined(separator: separator) }

    /// `prefix:kind:name`, with anything but letters, digits and `-._~:/@{}()[]!$*+;=` percent-encoded
    /// (never a space or a comma, which separate tags), and a name too long for 256 characters cut,
    /// with a digest of the whole so that two long names stay two tags.
    public func tag(_ kind: String, _ name: String? = nil) -> String {
        var tag = prefix + ":" + kind
        guard let name else { return tag }
        tag += ":"
        let encoded = PercentEncoding.encode(name, allowed: Self.plain)
        guard tag.utf8.count + encoded.utf8.count > Self.maxLength else { return tag + encoded }
        var hash = FNV1a()
        hash.combine(name.utf8)
        let suffix = "~" + hash.hexDigest
        var cut = Substring(encoded).prefix(Self.maxLength - tag.utf8.count - suffix.utf8.count)
        // Not inside an escape.
        while let percent = cut.lastIndex(of: "%"), cut.distance(from: percent, to: cut.endIndex) < 3 { cut = cut[..<percent] }
        return tag + cut + suffix
    }

    private static let plain = PercentEncoding.ByteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/@{}()[]!$*+;=")
}
