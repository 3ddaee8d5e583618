public import CoreMetrics
import NIOCore
import TaksiSchema
public import TaksiScreens

/// A screen set made ready to serve: every body that does not depend on the request is encoded
/// once, here, so the hot path only writes bytes. Immutable; a reload builds a new one.
public final class ServedScreenSet: Sendable {
    /// One variant's precomputed responses and counters.
    struct Variant: Sendable {
        let compiled: CompiledScreen
        /// The version of the set the variant belongs to, sent with every response of it.
        let setVersion: String
        let skeletonBody: ByteBuffer
        /// A strong validator of the skeleton's bytes, for `If-None-Match`.
        let skeletonETag: String
        /// Present when every source is a fixture.
        let staticDataBody: ByteBuffer?
        /// A strong validator of the static data's bytes.
        let staticDataETag: String?
        /// Counts skeleton and data responses of this variant, for experiment exposure.
        let skeletonCounter: Counter
        let dataCounter: Counter
    }

    /// All variants of one screen name, and the request headers that choose between them.
    struct Screen: Sendable {
        let variants: ScreenVariants
        let served: [String: Variant]
        /// The `Vary` value for this screen's responses, or nil when nothing in the request matters.
        let vary: String?
    }

    /// The compiled screens and their catalog.
    public let screenSet: ScreenSet
    let screens: [String: Screen]
    let indexBody: ByteBuffer

    /// - Parameter metrics: where variant counters are created (the global metrics system by default).
    public init(_ screenSet: ScreenSet, metrics: any MetricsFactory = MetricsSystem.factory) {
        self.screenSet = screenSet
        var screens: [String: Screen] = [:]
        var index: [JSONValue] = []
        for name in screenSet.names {
            guard let variants = screenSet.screens[name] else { continue }
            var served: [String: Variant] = [:]
            for compiled in variants.all {
                let dimensions = [("screen", name), ("variant", compiled.variantID)]
                let skeleton = JSONWriter.bytes(compiled.skeleton.jsonValue)
                let staticData = compiled.staticData.map { JSONWriter.bytes($0.jsonValue) }
                served[compiled.variantID] = Variant(
                    compiled: compiled,
                    setVersion: screenSet.version,
                    skeletonBody: ByteBuffer(bytes: skeleton),
                    skeletonETag: Self.entityTag(skeleton),
                    staticDataBody: staticData.map { ByteBuffer(bytes: $0) },
                    staticDataETag: staticData.map(Self.entityTag),
                    skeletonCounter: Counter(label: "taksi_variant_skeletons_total", dimensions: dimensions, factory: metrics),
                    dataCounter: Counter(label: "taksi_variant_data_total", dimensions: dimensions, factory: metrics)
                )
            }
            let varied = [
                variants.isVersioned ? "X-Taksi-Version" : nil, variants.hasAlternatives ? "X-Taksi-Alternative" : nil,
                variants.hasExperiment ? "X-Taksi-User" : nil,
            ].compactMap { $0 }
            screens[name] = Screen(variants: variants, served: served, vary: varied.isEmpty ? nil : varied.joined(separator: ", "))
            index.append(Self.indexEntry(variants))
        }
        self.screens = screens
        self.indexBody = ByteBuffer(bytes: JSONWriter.bytes(["screens": .array(index)]))
    }

    /// `"<16 hex digits>"`: a digest of the body, so equal bytes get equal tags on every replica.
    static func entityTag(_ bytes: [UInt8]) -> String {
        var digest = FNV1a()
        digest.combine(bytes)
        return "\"\(digest.hexDigest)\""
    }

    private static func indexEntry(_ variants: ScreenVariants) -> JSONValue {
        let all = variants.all
        let experiments: [JSONValue] = variants.versions.compactMap { version in
            guard let experiment = version.experiment else { return nil }
            return [
                "name": .string(experiment.name),
                "version": version.requirement.map { .string($0.description) } ?? .null,
                "weights": .object(Dictionary(uniqueKeysWithValues: experiment.weights.map { ($0.alternative, .number(Double($0.weight))) })),
            ]
        }
        return [
            "name": .string(variants.name),
            "requires_data": .bool(all.contains(where: \.requiresData)),
            "variants": .array(
                all.map {
                    [
                        "id": .string($0.variantID), "version": $0.requirement.map { .string($0.description) } ?? .null,
                        "alternative": .string($0.alternative), "requires_data": .bool($0.requiresData),
                    ]
                }
            ),
            "experiments": .array(experiments),
        ]
    }
}
