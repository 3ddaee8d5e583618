import Logging
import NIOCore
import NIOHTTP1
public import TaksiSchema
public import TaksiScreens

/// The skeletons one app build would get, for the app to ship in its binary: a first launch with
/// no network shows them, placeholders where data goes (`taksi-server bundle`, read by the app
/// library's ``ScreenKeeping`` as the floor of what it keeps).
///
/// Each screen without path parameters, in each alternative the app version can be shown and in
/// each locale asked for, answered by the same code that answers apps (so the bytes, revisions
/// and `ETag`s are the server's own), as one JSON document:
///
/// ```json
/// {"format": 1, "app_version": "2.1.0",
///  "screens": [{"path": "home", "alternative": "default", "language": "en", "variant": "home|>= 2.0|default",
///               "revision": "...", "etag": "...", "skeleton": {"components": [...]}}]}
/// ```
public enum FirstLaunchBundle {
    /// The bundle's document for `appVersion`, in `locales` (none: each screen's default).
    public static func make(_ screenSet: ScreenSet, appVersion: Version, locales: [String] = []) -> JSONValue {
        let store = ScreenStore(screenSet)
        let responder = Responder(
            Responder.Dependencies(store: store, logger: Logger(label: "taksi.bundle") { _ in SwiftLogNoOpLogHandler() }))
        var screens: [JSONValue] = []
        for name in screenSet.names {
            guard let variants = screenSet.screens[name], !variants.pattern.hasParameters else { continue }
            let alternatives = Set(variants.all.map(\.alternative)).sorted()
            for alternative in alternatives {
                for locale in locales.isEmpty ? [nil] : locales.map(Optional.some) {
                    var headers = HTTPHeaders([("X-Taksi-Version", appVersion.description), ("Accept-Encoding", "identity")])
                    if alternative != ScreenVariant.defaultAlternative { headers.add(name: "X-Taksi-Alternative", value: alternative) }
                    if let locale { headers.add(name: "Accept-Language", value: locale) }
                    var request = HTTPRequest(method: .GET, uri: "/screens/" + name, headers: headers)
                    // Made for a file, not shown to anyone: no experiment exposure.
                    request.isPreview = true
                    guard case .ready(let response) = responder.respond(to: request), response.status == .ok,
                        let skeleton = try? JSONParser.parse(Array(response.body.readableBytesView)).value
                    else { continue }
                    let answered = response.headers
                    // An alternative this version is not shown answers the default: listed once.
                    let variant = answered.first(name: "X-Taksi-Variant")
                    let language = answered.first(name: "Content-Language")
                    if screens.contains(where: { $0["variant"]?.stringValue == variant && $0["language"]?.stringValue == language }) {
                        continue
                    }
                    screens.append([
                        "path": .string(name), "alternative": .string(alternative), "language": language.map(JSONValue.string) ?? .null,
                        "variant": variant.map(JSONValue.string) ?? .null,
                        "revision": answered.first(name: ServedScreenSet.skeletonHeader).map(JSONValue.string) ?? .null,
                        "etag": answered.first(name: "ETag").map(JSONValue.string) ?? .null, "skeleton": skeleton,
                    ])
                }
            }
        }
        return ["format": 1, "app_version": .string(appVersion.description), "screens": .array(screens)]
    }
}
