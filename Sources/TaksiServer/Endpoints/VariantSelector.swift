import CoreMetrics
import Foundation
import Logging
import NIOHTTP1
import TaksiSchema
import TaksiScreens

/// Which variant of which screen set answers a request: the one its version, alternative, user
/// and language select, the same for skeleton, data and actions, so they always agree.
///
/// Data and actions are answered for the skeleton the app holds. A skeleton may be cached (by the
/// app's URL cache, a CDN, or fetched from another replica during a deploy) while the screen
/// changes; the client drops a whole data payload when one entry does not match its skeleton. So
/// an app echoes the skeleton's `X-Taksi-Skeleton` on its data requests and submits, and they are
/// answered from the set whose variant has that revision: the current one, or one served before
/// and still kept (``ScreenStore/earlierSets``); when none is, `412 skeleton_outdated`, never data
/// the app cannot decode. A request without the header is answered from the current set (apps
/// shipped before the header), and counted.
struct VariantSelector: Sendable {
    let store: ScreenStore
    let logger: Logger
    /// How data requests and submits named their skeleton's revision.
    let revisionCounters: RevisionCounters
    /// Published bundles loaded for earlier revisions (the fleet's), searched after the store's
    /// earlier sets; nil without published screens.
    let kept: KeptBundles?
    /// Where a user shown an experiment's alternative is recorded; nil records nobody.
    let exposures: ExposureRecorder?

    init(store: ScreenStore, logger: Logger, kept: KeptBundles? = nil, exposures: ExposureRecorder? = nil) {
        self.store = store
        self.logger = logger
        self.kept = kept
        self.exposures = exposures
        self.revisionCounters = RevisionCounters(factory: store.metrics)
    }

    /// What answers a data request or a submit: a set, a variant of the screen in it, and the
    /// path's parameter values.
    struct Selection {
        let screens: ServedScreenSet
        let variant: ServedScreenSet.Variant
        let pathValues: [String: JSONValue]
    }

    /// The set, screen and variant to answer a data request or a submit for `path` from, with
    /// the path's parameter values in that set.
    func answering(at path: String, target: RequestTarget, head: RequestHead, revision: String? = nil) throws(APIError) -> Selection {
        try selection(at: path, target: target, head: head, revision: revision).selection
    }

    /// ``answering(at:target:head:)`` for a data request: a user the request's experiment
    /// assigns an alternative is recorded as exposed to it when the data answered is that
    /// alternative's (the app shows it), so an app whose skeleton came from a cache is recorded
    /// by its data request.
    /// - Parameter revision: the skeleton revision the data is for, when the request names it
    ///   otherwise than with `X-Taksi-Skeleton` (a list's page token); it is taken over the header.
    func answering(
        at path: String, target: RequestTarget, exposing request: HTTPRequest, revision: String? = nil
    ) throws(APIError) -> Selection {
        let (selection, exposure) = try selection(at: path, target: target, head: request.head, revision: revision)
        if exposure != nil { record(exposure, of: selection.variant, target: target, request: request) }
        return selection
    }

    /// The selection, and the exposure of its user when the variant is the one the request
    /// selects.
    private func selection(
        at path: String, target: RequestTarget, head: RequestHead, revision: String? = nil
    ) throws(APIError) -> (
        selection: Selection, exposure: Exposure?
    ) {
        let screens = store.snapshot
        let (screen, pathValues) = try screens.screen(at: path)
        let (variant, exposure) = try choose(in: screen, target: target, head: head)
        guard revision != nil || head.fields.revision != nil else {
            revisionCounters.absent.increment()
            return (Selection(screens: screens, variant: variant, pathValues: pathValues), exposure)
        }
        let matches = revision.map { $0 == variant.revision.digest } ?? head.field(head.fields.revision, equals: variant.revision.digest)
        if matches {
            return (Selection(screens: screens, variant: variant, pathValues: pathValues), exposure)
        }
        let held = revision ?? head.text(head.fields.revision) ?? ""
        // Another variant of the screen with that shape: the skeleton was asked for with other
        // variant inputs (a version only on one request); its data follows the skeleton.
        if let other = Self.variant(of: screen, revision: held, head: head) {
            return (Selection(screens: screens, variant: other, pathValues: pathValues), nil)
        }
        // The newest earlier set that has a variant of the screen with that revision.
        for earlier in store.earlierSets + (kept?.sets ?? []) {
            guard let (screen, values) = try? earlier.screen(at: path) else { continue }
            let selected = try? select(in: screen, target: target, head: head)
            guard let found = selected?.revision.digest == held ? selected : Self.variant(of: screen, revision: held, head: head)
            else {
                continue
            }
            revisionCounters.earlier.increment()
            return (Selection(screens: earlier, variant: found, pathValues: values), nil)
        }
        revisionCounters.outdated.increment()
        throw .skeletonOutdated(held: held, screen: screen.variants.name)
    }

    /// The app version the request says (`X-Taksi-Version`, else `?version=`); nil when it says
    /// none or one that does not parse (variant selection refuses that one).
    static func appVersion(target: RequestTarget, head: RequestHead) -> Version? {
        (head.text(head.fields.version) ?? target.value(of: "version")).flatMap { Version($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// The variant for the request, in the locale `Accept-Language` asks for when the screen has
    /// localized text: the same function for skeleton, data and actions, so they always agree.
    func select(in screen: ServedScreenSet.Screen, target: RequestTarget, head: RequestHead) throws(APIError) -> ServedScreenSet.Variant {
        try choose(in: screen, target: target, head: head).0
    }

    /// ``select(in:target:head:)`` for a skeleton: a user the screen's experiment assigns an
    /// alternative is recorded as exposed to it (not for a submit, which shows nothing new).
    func select(
        in screen: ServedScreenSet.Screen, target: RequestTarget, exposing request: HTTPRequest
    ) throws(APIError)
        -> ServedScreenSet.Variant
    {
        let (variant, exposure) = try choose(in: screen, target: target, head: request.head)
        if exposure != nil { record(exposure, of: variant, target: target, request: request) }
        return variant
    }

    /// The variant in the request's locale, and the experiment and alternative its user is
    /// exposed to, if any. A screen whose variant the version and the language alone pick
    /// (``ServedScreenSet/Screen/isPickedByVersionAndLanguage``) is picked from the head's bytes, when the
    /// request names no alternative and no version in its query; a version that does not parse,
    /// or that no variant serves, is refused below.
    private func choose(
        in screen: ServedScreenSet.Screen, target: RequestTarget, head: RequestHead
    ) throws(APIError) -> (ServedScreenSet.Variant, Exposure?) {
        let fields = head.fields
        if screen.isPickedByVersionAndLanguage, fields.alternative == nil, fields.version != nil || target.value(of: "version") == nil,
            let variant = head.withBytes({ bytes in
                screen.variant(
                    version: fields.version.map { UnsafeBufferPointer(rebasing: bytes[$0]) },
                    language: fields.language.map { UnsafeBufferPointer(rebasing: bytes[$0]) })
            })
        {
            return (variant, nil)
        }
        let (variant, exposure) = try selectVariant(in: screen, target: target, head: head)
        guard let locales = screen.locales, !variant.translations.isEmpty else { return (variant, exposure) }
        return (variant.translations[locales.locale(for: head.text(fields.language))] ?? variant, exposure)
    }

    /// An experiment the request's user is exposed to, with the alternative and the request's inputs.
    struct Exposure {
        var experiment: String
        var alternative: String
        var user: String
        var platform: String?
    }

    /// Records `exposure` (of the request that was answered `variant`) when there is one and
    /// recording is on.
    private func record(_ exposure: Exposure?, of variant: ServedScreenSet.Variant, target: RequestTarget, request: HTTPRequest) {
        guard let exposure, let exposures, !request.isPreview, !request.isPrefetch else { return }
        exposures.record(
            ExposureRecorder.Record(
                experiment: exposure.experiment, alternative: exposure.alternative, user: exposure.user,
                appVersion: request.head.text(request.head.fields.version) ?? target.value(of: "version"), platform: exposure.platform,
                screen: variant.compiled.name, variant: variant.compiled.variantID, time: 0, requestID: request.correlation.requestID
            )
        )
    }

    private func selectVariant(
        in screen: ServedScreenSet.Screen, target: RequestTarget, head: RequestHead
    ) throws(APIError) -> (ServedScreenSet.Variant, Exposure?) {
        let versionText = head.text(head.fields.version) ?? target.value(of: "version")
        let alternative = head.text(head.fields.alternative)
        // One variant, and nothing in the request that could be refused: no selection to make.
        if versionText == nil, alternative == nil, let only = screen.onlyVariant { return (only, nil) }
        var request = ScreenVariants.Request()
        // An error here depends on a header even where the screen's answers do not (a screen
        // without alternatives refuses any asked for): its Vary names that header too, so a
        // shared cache never serves it for the plain URL (and errors are `no-store` anyway).
        func vary(_ header: String) -> [(String, String)] {
            let names = (screen.vary.map { $0.components(separatedBy: ", ") } ?? [])
            return [("Vary", (names.contains(header) ? names : names + [header]).joined(separator: ", "))]
        }
        if let text = versionText {
            guard let version = Version(text.trimmingCharacters(in: .whitespaces)) else {
                throw APIError(
                    .invalidVersion,
                    message: "\"\(text)\" is not an app version; send numbers separated by dots, like 2.3.1 or 2.3.1-beta.2",
                    headers: head.fields.version != nil ? vary("X-Taksi-Version") : screen.vary.map { [("Vary", $0)] } ?? []
                )
            }
            request.version = version
        }
        request.alternative = alternative
        // Read only for a screen with an experiment, whose audience and assignment they are.
        if screen.variants.hasExperiment {
            let headers = head.headers
            request.user = headers.first(name: "X-Taksi-User")
            request.platform = headers.first(name: "X-Taksi-Platform")
        }
        // Read only for a screen that depends on it (an experiment's audience naming locales).
        if screen.variesByLanguage {
            request.language = Localization.languageRanges(head.text(head.fields.language)).first
        }
        // The chosen variant's file and exposure, not a copy of the compiled variant.
        let selection = screen.variants.selection(request) { variant, experiment, assignment in
            (file: variant.file, exposure: ScreenVariants.Selection.exposure(experiment: experiment, assignment: assignment))
        }
        switch selection {
        case .success(let selection):
            guard let variant = screen.served[selection.file] else { throw .screenNotFound(screen.variants.name) }
            logger.debug("variant selected", metadata: ["screen": .string(screen.variants.name), "variant": .string(variant.id)])
            let exposure = selection.exposure.flatMap { experiment, alternative in
                request.user.map {
                    Exposure(experiment: experiment.name, alternative: alternative, user: $0, platform: request.platform)
                }
            }
            return (variant, exposure)
        case .failure(let error):
            switch error {
            case .versionNotFound:
                throw APIError(.screenVersionNotFound, message: error.description, headers: vary("X-Taksi-Version"))
            case .alternativeNotFound:
                throw APIError(
                    .screenAlternativeNotFound, message: error.description, headers: vary("X-Taksi-Alternative")
                )
            }
        }
    }

    /// A variant of `screen` whose skeleton has `revision`, in the locale the request negotiates.
    private static func variant(of screen: ServedScreenSet.Screen, revision: String, head: RequestHead) -> ServedScreenSet.Variant? {
        guard
            let found = screen.served.values.sorted(by: { $0.compiled.file < $1.compiled.file }).first(where: {
                $0.revision.digest == revision
            })
        else { return nil }
        guard let locales = screen.locales, !found.translations.isEmpty else { return found }
        return found.translations[locales.locale(for: head.text(head.fields.language))] ?? found
    }
}

/// How data requests and submits named the skeleton they are for: `taksi_skeleton_revisions_total`
/// with `result` `earlier` (answered from a kept set), `outdated` (412) or `absent` (no header:
/// an app that does not send it yet). One that matches the current set is not counted: it is the
/// common case, and the hot path pays nothing for it.
final class RevisionCounters: Sendable {
    let earlier: Counter
    let outdated: Counter
    let absent: Counter

    init(factory: any MetricsFactory) {
        func counter(_ result: String) -> Counter {
            Counter(label: "taksi_skeleton_revisions_total", dimensions: [("result", result)], factory: factory)
        }
        earlier = counter("earlier")
        outdated = counter("outdated")
        absent = counter("absent")
    }
}

extension APIError {
    /// 412: the skeleton the app holds is not served any more (a deploy, or kept longer than the
    /// server keeps earlier sets). The app fetches the skeleton again, past its caches, then its data.
    static func skeletonOutdated(held: String, screen: String) -> APIError {
        // Echoed only when it looks like a revision (a client's header goes into no message unchecked).
        let isRevision =
            (1...32).contains(held.utf8.count) && held.utf8.allSatisfy { (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "\"") }
        return APIError(
            .skeletonOutdated,
            message:
                "the skeleton of \(screen) this app holds\(isRevision ? " (revision \(held))" : "") is no longer served, so its data cannot be answered; fetch the skeleton again with Cache-Control: no-cache, then its data with the new X-Taksi-Skeleton",
            headers: [("Vary", ServedScreenSet.skeletonHeader)]
        )
    }
}
