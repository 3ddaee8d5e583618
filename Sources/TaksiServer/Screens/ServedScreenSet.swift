import Atomics
public import CoreMetrics
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import TaksiSchema
public import TaksiScreens

/// A screen set made ready to serve: every response that does not depend on the request is
/// encoded once, here, with its gzip form, its 304 and its headers, so the hot path only picks
/// one and writes its bytes. Immutable; a reload builds a new one.
public final class ServedScreenSet: Sendable {
    /// How precomputed responses are cached by clients and shared caches.
    public struct Options: Sendable {
        /// Seconds a cache may serve a skeleton without asking again.
        public var skeletonMaxAge: Int
        /// Seconds after that it may still serve it while it revalidates.
        public var skeletonStaleWhileRevalidate: Int

        /// Seconds a shared cache (a CDN) may keep a skeleton, when purges keep it fresh (`s-maxage`).
        public var skeletonSharedMaxAge: Int?
        /// The tags skeletons carry for a CDN's purges, when one is configured.
        public var cacheTags: CacheTags?

        /// The apps the association files name.
        public var appLinks: AppLinks

        public init(
            skeletonMaxAge: Int = 60, skeletonStaleWhileRevalidate: Int = 300, skeletonSharedMaxAge: Int? = nil,
            cacheTags: CacheTags? = nil, appLinks: AppLinks = AppLinks()
        ) {
            self.skeletonMaxAge = skeletonMaxAge
            self.skeletonStaleWhileRevalidate = skeletonStaleWhileRevalidate
            self.skeletonSharedMaxAge = skeletonSharedMaxAge
            self.cacheTags = cacheTags
            self.appLinks = appLinks
        }

        /// Public, so CDNs and shared caches may keep skeletons; a CDN that is purged on every
        /// change may keep them longer than a phone (`s-maxage`).
        var skeletonCacheControl: String {
            "public, max-age=\(skeletonMaxAge)" + (skeletonSharedMaxAge.map { ", s-maxage=\($0)" } ?? "")
                + ", stale-while-revalidate=\(skeletonStaleWhileRevalidate)"
        }

        /// A skeleton that depends on who asks (a running experiment): kept by the app, never by
        /// a shared cache. A CDN would keep one copy per user at best, and one that ignores
        /// `Vary` (most do, beyond `Accept-Encoding`) would give one user's alternative to
        /// everyone; and every user's request must reach a replica to be recorded as an exposure.
        var personalSkeletonCacheControl: String {
            "private, max-age=\(skeletonMaxAge), stale-while-revalidate=\(skeletonStaleWhileRevalidate)"
        }
    }

    /// Data is per request and may hold a user's values: private, and revalidated every time.
    static let dataCacheControl = "private, no-cache"

    /// The header that names a skeleton's revision: sent with every skeleton, data and action
    /// answer, and echoed by apps on the data and action requests of that skeleton.
    public static let skeletonHeader = "X-Taksi-Skeleton"

    /// The screens a skeleton's navigation opens that are known without its data (its buttons'
    /// literal targets), at most this many, as `Link: </screens/login>; rel=prefetch` hints.
    public static let maxPrefetchLinks = 8

    /// The `Link` value naming the screens `compiled`'s skeleton can open (``maxPrefetchLinks`` at
    /// most, in the skeleton's order, itself left out), for an app to fetch their skeletons ahead;
    /// nil when it opens none.
    static func prefetchLink(of compiled: ScreenVariant) -> String? {
        var targets: [String] = []
        func visit(_ value: JSONValue) {
            guard targets.count < maxPrefetchLinks else { return }
            switch value {
            case .object(let members):
                if members["identifier"] == "navigation", case .string(let target)? = members["content"]?["interface_identifier"],
                    !target.isEmpty, !target.contains("{"), target != compiled.name, !targets.contains(target)
                {
                    targets.append(target)
                }
                for key in members.keys.sorted() { visit(members[key]!) }
            case .array(let elements):
                for element in elements { visit(element) }
            default:
                break
            }
        }
        visit(compiled.skeleton.jsonValue)
        guard !targets.isEmpty else { return nil }
        return targets.map { "</screens/\(PercentEncoding.encode($0, allowed: prefetchPathCharacters))>; rel=prefetch" }.joined(
            separator: ", ")
    }

    /// What a screen path keeps as it is in a `Link` target: RFC 3986's path characters, and `/`.
    private static let prefetchPathCharacters = PercentEncoding.unreserved.union(PercentEncoding.ByteSet("/!$&'()*+,;=:@%"))

    /// One variant's precomputed responses and counters. A class: the hot path passes it around
    /// with one reference count instead of one per field.
    final class Variant: Sendable {
        let compiled: ScreenVariant
        /// ``ScreenVariant/variantID``, made once: what every response of it is labelled with.
        let id: String
        /// What its data must match (see ``SkeletonRevision``), sent as `X-Taksi-Skeleton`.
        let revision: SkeletonRevision
        /// Headers every data and action response of this variant carries: the variant, the set
        /// version, the skeleton's revision, `Vary` (with `X-Taksi-Skeleton`, which picks the set
        /// data is answered from).
        let headers: [(String, String)]
        let skeleton: Representations
        /// The headers of its skeleton (`Cache-Control`, `Vary`), for one made per URL when
        /// static fields are built from the path (``ScreenVariant/pathFields``).
        let skeletonHeads: ResponseHeads
        /// The headers of data rendered from fixtures and request values alone: ``headers`` and
        /// `Cache-Control` (data with upstream values has its own, by their answers).
        let dataHeads: ResponseHeads
        /// Present when every source is a fixture.
        let staticData: Representations?
        /// Counts skeleton and data responses of this variant, for experiment exposure.
        private let metrics: any MetricsFactory
        /// Names this variant in ``ResponseMemo`` keys: unique to this object, so a response kept
        /// for a variant of an earlier screen set is never served for one of a later set.
        let memoID: Int
        /// Whether its data depends on the moment (a relative time): then it is never kept.
        let dataDependsOnTime: Bool
        /// Whether a list of it continues (``DataPlan/pagedLists``): only then is a data request's
        /// `?page=` read, with no walk into the compiled screen on any other.
        let hasPagedLists: Bool
        private static let created = ManagedAtomic<Int>(0)
        private let counters = ManagedAtomicLazyReference<Counters>()

        /// Counts skeleton and data responses of this variant, for experiment exposure.
        final class Counters: Sendable {
            let skeleton: Counter
            let data: Counter

            init(skeleton: Counter, data: Counter) {
                self.skeleton = skeleton
                self.data = data
            }
        }

        /// The same variant in each other locale, for a screen with localized text.
        let translations: [String: Variant]

        init(
            compiled: ScreenVariant, revision: SkeletonRevision, headers: [(String, String)], skeleton: Representations,
            skeletonHeaders: [(String, String)] = [], staticData: Representations?, metrics: any MetricsFactory,
            translations: [String: Variant] = [:]
        ) {
            self.compiled = compiled
            self.id = compiled.variantID
            self.revision = revision
            self.translations = translations
            self.headers = headers
            self.skeleton = skeleton
            self.skeletonHeads = ResponseHeads(skeletonHeaders)
            self.dataHeads = ResponseHeads(headers + [("Cache-Control", ServedScreenSet.dataCacheControl)])
            self.staticData = staticData
            self.metrics = metrics
            self.memoID = Self.created.wrappingIncrementThenLoad(ordering: .relaxed)
            self.dataDependsOnTime = compiled.dataPlan.dependsOnTime
            self.hasPagedLists = !compiled.dataPlan.pagedLists.isEmpty
        }

        /// Made on first use, without a lock: registering two labelled series per variant at load
        /// made loading 10,000 screens quadratic (swift-prometheus copies a metric family to add a
        /// series), and most variants of a large set are rarely asked for.
        var counted: Counters {
            if let counters = counters.load() { return counters }
            let dimensions = [("screen", compiled.name), ("variant", id)]
            return counters.storeIfNilThenLoad(
                Counters(
                    skeleton: Counter(label: "taksi_variant_skeletons_total", dimensions: dimensions, factory: metrics),
                    data: Counter(label: "taksi_variant_data_total", dimensions: dimensions, factory: metrics)
                )
            )
        }
    }

    /// All variants of one screen name, and the request headers that choose between them.
    ///
    /// A class: a request finds its screen in a dictionary (or a head's target), and a copy of a
    /// struct this size retained and released each of its parts there and again where it was passed.
    final class Screen: Sendable {
        let variants: ScreenVariants
        /// By the file that defines the variant (one file is one variant).
        let served: [String: Variant]
        /// The `Vary` value for this screen's responses, or nil when nothing in the request matters.
        let vary: String?
        /// Whether ``vary`` names `Accept-Language` (a localized screen, or an experiment whose
        /// audience names languages), found once: a search of the text per request cost a data
        /// request more than a microsecond.
        let variesByLanguage: Bool
        /// The variant when there is exactly one, for any app version: no selection is needed.
        let onlyVariant: Variant?
        /// Whether the name holds parameters, so a request path is matched, not looked up.
        let hasParameters: Bool
        /// How `Accept-Language` picks a locale, when a variant of this screen has localized text.
        let locales: LocaleNegotiator?

        /// Whether the app's version and language alone pick the variant: no alternatives nor
        /// experiment (see ``variant(version:language:)``).
        let isPickedByVersionAndLanguage: Bool
        /// The variant for a request that says no version, when ``isPickedByVersionAndLanguage``
        /// and one serves it.
        let unversioned: Variant?

        init(variants: ScreenVariants, served: [String: Variant], vary: String?, locales: LocaleNegotiator? = nil) {
            self.variants = variants
            self.locales = locales
            self.served = served
            self.vary = vary
            self.variesByLanguage =
                vary?.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == "Accept-Language" } ?? false
            self.onlyVariant = served.count == 1 && !variants.isVersioned ? served.values.first : nil
            self.hasParameters = variants.pattern.hasParameters
            self.isPickedByVersionAndLanguage = !variants.hasAlternatives && !variants.hasExperiment
            self.unversioned =
                isPickedByVersionAndLanguage
                ? (try? variants.selection(ScreenVariants.Request()).get()).flatMap { served[$0.variant.file] } : nil
        }
    }

    /// The compiled screens and their catalog.
    public let screenSet: ScreenSet
    /// The tags skeletons carry for a CDN, when one is configured.
    let cacheTags: CacheTags?
    /// By name as written (`bikes/stations/{network}`).
    let screens: [String: Screen]
    let index: HTTPResponse
    /// `/openapi.yaml`: `docs/openapi.yaml` with an operation for each screen's actions.
    let openAPI: HTTPResponse
    /// `/.well-known/apple-app-site-association`, when iOS apps are configured.
    let appleAssociation: HTTPResponse?
    /// `/.well-known/assetlinks.json`, when an Android app is configured.
    let androidAssociation: HTTPResponse?
    /// About what the precomputed responses take in memory: their bodies (identity and gzip) and
    /// heads. For the bound on the earlier sets a store keeps (see ``ScreenStore``).
    let approximateBytes: Int
    /// Every screen's variants' revisions: what skeletons this set can answer data and submits for.
    let revisions: Set<NamedRevision>

    /// A revision of a screen's skeleton (``SkeletonRevision``), by the screen's name.
    struct NamedRevision: Hashable {
        let screen: String
        let digest: String
    }

    /// The screen a request path names (`home`, `bikes/stations/velib`, still percent-encoded),
    /// with its path parameters' typed values: a literal name first, then the one pattern.
    /// - Throws: ``APIError`` 404 `screen_not_found`, or 400 `invalid_parameter` for a value
    ///   that does not fit its parameter.
    ///
    /// A path matched to a pattern is kept, with its values, for the next request for it (a
    /// match cut the path in segments, decoded and checked each value, and cost a skeleton a
    /// tenth of its time), by the thread that matched it; a thread forgets its kept paths when it
    /// keeps ``maxMatchedPaths``.
    func screen(at path: String) throws(APIError) -> (Screen, [String: JSONValue]) {
        if let screen = screens[path], !screen.hasParameters { return (screen, [:]) }
        let matchedPaths = matchedPaths.local
        if let matched = matchedPaths.paths[path] { return (matched.screen, matched.values) }
        guard let match = screenSet.routes.matchParameterised(path[...]), let screen = screens[match.pattern.name] else {
            throw .screenNotFound(path)
        }
        let values: [String: JSONValue]
        do {
            values = try match.pattern.values(match.segments)
        } catch {
            throw .badParameters(error)
        }
        if matchedPaths.paths.count >= Self.maxMatchedPaths { matchedPaths.paths.removeAll(keepingCapacity: true) }
        matchedPaths.paths[path] = MatchedPath(screen: screen, values: values)
        return (screen, values)
    }

    /// Paths matched to a screen's pattern (``screen(at:)``), with their values: each thread's own,
    /// so a lookup takes no lock another event loop takes.
    private let matchedPaths = PerThread { MatchedPaths() }

    private final class MatchedPaths {
        var paths: [String: MatchedPath] = [:]
    }

    /// Paths matched kept at most, on each thread (each a few hundred bytes).
    static let maxMatchedPaths = 4096

    /// A class: a lookup is one reference count, not one for the screen and one for the values.
    /// Its screen is not kept by it: the set keeps its screens, and a thread's table of matched
    /// paths may outlive the set until that thread drops it (``PerThread``).
    private final class MatchedPath: Sendable {
        unowned let screen: Screen
        let values: [String: JSONValue]

        init(screen: Screen, values: [String: JSONValue]) {
            self.screen = screen
            self.values = values
        }
    }

    /// - Parameters:
    ///   - options: caching headers of precomputed responses.
    ///   - metrics: where variant counters are created (the global metrics system by default).
    public init(_ screenSet: ScreenSet, options: Options = Options(), metrics: any MetricsFactory = MetricsSystem.factory) {
        self.screenSet = screenSet
        self.cacheTags = options.cacheTags
        var screens: [String: Screen] = [:]
        var index: [JSONValue] = []
        var approximateBytes = 0
        // One for the whole set: every localized screen negotiates the same way.
        let negotiator = screenSet.localization.map(LocaleNegotiator.init)
        for name in screenSet.names {
            guard let variants = screenSet.screens[name] else { continue }
            // Only a screen with localized text answers by Accept-Language, so only its responses say so.
            let isLocalized = variants.all.contains { $0.locale != nil }
            // A running experiment's answer depends on the user id and on its audience's headers.
            var varied = [variants.isVersioned ? "X-Taksi-Version" : nil, variants.hasAlternatives ? "X-Taksi-Alternative" : nil]
                .compactMap { $0 }
            for header in variants.experimentHeaders + (isLocalized ? ["Accept-Language"] : []) where !varied.contains(header) {
                varied.append(header)
            }
            // Data and actions are answered from the set of the skeleton the app names, and when
            // the catalog differs by app version, checked against the requesting version's.
            // (Unless the version already varies it, by a requirement or an experiment's audience.)
            let byVersion = screenSet.epochs.count > 1 && !varied.contains("X-Taksi-Version") ? ["X-Taksi-Version"] : []
            let dataVaried = varied + byVersion + [Self.skeletonHeader]
            // Every response, skeleton and data, is precomputed per locale like it is per variant.
            func served(_ compiled: ScreenVariant, translating sources: ScreenVariant? = nil) -> Variant {
                let revision = SkeletonRevision(skeleton: compiled.skeleton, actions: compiled.actions, catalog: screenSet.catalog)
                var headers = [
                    ("X-Taksi-Variant", compiled.variantID), ("X-Taksi-Screens-Version", screenSet.version),
                    (Self.skeletonHeader, revision.digest),
                ]
                if let locale = compiled.locale { headers.append(("Content-Language", locale)) }
                let skeletonBody = JSONWriter.bytes(compiled.skeleton.jsonValue)
                let dataBody = compiled.staticData.map { JSONWriter.bytes($0.jsonValue) }
                // Identity and gzip bodies (gzip at most as large) and four heads of about 512 bytes.
                approximateBytes += 2 * (skeletonBody.count + (dataBody?.count ?? 0)) + 2048
                let cacheControl = variants.experimentHeaders.isEmpty ? options.skeletonCacheControl : options.personalSkeletonCacheControl
                var skeletonHeaders = headers + [("Cache-Control", cacheControl)]
                if let tags = options.cacheTags {
                    let names = tags.tags(of: compiled, sources: sources, screensVersion: screenSet.version)
                    skeletonHeaders.append((tags.header, tags.value(names)))
                }
                if let prefetch = Self.prefetchLink(of: compiled) { skeletonHeaders.append(("Link", prefetch)) }
                return Variant(
                    compiled: compiled, revision: revision,
                    headers: headers + [("Vary", dataVaried.joined(separator: ", "))],
                    skeleton: Representations(
                        body: skeletonBody, label: .skeleton, variant: compiled.variantID, headers: skeletonHeaders, vary: varied
                    ),
                    skeletonHeaders: skeletonHeaders + (varied.isEmpty ? [] : [("Vary", varied.joined(separator: ", "))]),
                    staticData: dataBody.map {
                        Representations(
                            body: $0, label: .data, variant: compiled.variantID,
                            headers: headers + [("Cache-Control", Self.dataCacheControl)], vary: dataVaried
                        )
                    },
                    metrics: metrics, translations: compiled.translations.mapValues { served($0, translating: compiled) }
                )
            }
            var servedVariants: [String: Variant] = [:]
            for compiled in variants.all { servedVariants[compiled.file] = served(compiled) }
            screens[name] = Screen(
                variants: variants, served: servedVariants, vary: varied.isEmpty ? nil : varied.joined(separator: ", "),
                locales: isLocalized ? negotiator : nil
            )
            index.append(ScreenIndex.entry(variants, revisions: servedVariants.mapValues(\.revision.digest)))
        }
        self.screens = screens
        self.approximateBytes = approximateBytes
        self.revisions = Set(
            screens.flatMap { name, screen in screen.served.values.map { NamedRevision(screen: name, digest: $0.revision.digest) } })
        self.openAPI = OpenAPIDescription.response(for: screenSet)
        // The index changes with every reload and is for people and tools, not for caches.
        var indexResponse = HTTPResponse(
            json: ByteBuffer(bytes: JSONWriter.bytes(["screens": .array(index)])), headers: [("Cache-Control", "no-store")]
        )
        indexResponse.metricsLabel = .index
        self.index = indexResponse.precomputed()
        self.appleAssociation = AppLinkAssociations.apple(screenSet.links, appLinks: options.appLinks)
        self.androidAssociation = AppLinkAssociations.android(appLinks: options.appLinks)
    }

    /// The variants (by file; their translations share their revision) whose revision differs
    /// between two sets, with what changed.
    static func shapeChanges(
        from old: ServedScreenSet, to new: ServedScreenSet
    ) -> [(variant: String, old: String, new: String, changes: [String])] {
        var result: [(variant: String, old: String, new: String, changes: [String])] = []
        for name in new.screenSet.names {
            guard let screen = new.screens[name], let earlier = old.screens[name] else { continue }
            for (file, variant) in screen.served.sorted(by: { $0.key < $1.key }) {
                guard let was = earlier.served[file], was.revision.digest != variant.revision.digest else { continue }
                result.append(
                    (
                        variant.compiled.variantID, was.revision.digest, variant.revision.digest,
                        SkeletonRevision.changes(from: was.revision, to: variant.revision)
                    ))
            }
        }
        return result
    }
}

extension ServedScreenSet.Screen {
    /// The variant for a request whose head says `version` (`X-Taksi-Version`'s value) and
    /// `language` (`Accept-Language`'s), or neither, read where they lie: by version, then in the
    /// negotiated locale. Nil when they do not pick it alone (``isPickedByVersionAndLanguage``),
    /// or the version does not parse or no variant serves it (``VariantSelector`` says why).
    func variant(version: UnsafeBufferPointer<UInt8>?, language: UnsafeBufferPointer<UInt8>?) -> ServedScreenSet.Variant? {
        guard isPickedByVersionAndLanguage, let variant = versioned(version) else { return nil }
        guard let locales, !variant.translations.isEmpty else { return variant }
        // As text: the negotiator remembers each value's locale.
        return variant.translations[locales.locale(for: language.map { String(decoding: $0, as: UTF8.self) })] ?? variant
    }

    private func versioned(_ version: UnsafeBufferPointer<UInt8>?) -> ServedScreenSet.Variant? {
        guard let version else { return unversioned }
        guard let parsed = Version(String(decoding: HeaderList.trimmed(version), as: UTF8.self)) else { return nil }
        if let onlyVariant { return onlyVariant }
        guard case .success(let selection) = variants.selection(ScreenVariants.Request(version: parsed)) else { return nil }
        return served[selection.variant.file]
    }
}
