import NIOCore
import TaksiSchema
import TaksiScreens

/// The files the platforms read to open the app for the set's web links, precomputed per set:
/// Apple's `apple-app-site-association` and Google's Digital Asset Links `assetlinks.json`.
enum AppLinkAssociations {
    /// Apple's file: the paths of the https links, for each configured app (the `components`
    /// form, iOS 13 and later). `application/json` at the exact path, no redirect, as Apple requires.
    static func apple(_ links: DeepLinks, appLinks: AppLinks) -> HTTPResponse? {
        guard !appLinks.appleAppIDs.isEmpty else { return nil }
        let components: [JSONValue] = links.links.filter(\.isWeb).map { link in
            ["/": .string(link.applePath), "comment": .string("\(link.written) opens \(link.target.name)")]
        }
        let body: JSONValue = [
            "applinks": ["details": [["appIDs": .array(appLinks.appleAppIDs.map(JSONValue.string)), "components": .array(components)]]]
        ]
        return associationResponse(body, label: .appleAppSiteAssociation)
    }

    /// Google's Digital Asset Links statement that the Android app handles this site's links.
    static func android(appLinks: AppLinks) -> HTTPResponse? {
        guard let package = appLinks.androidPackage, !appLinks.androidCertificateFingerprints.isEmpty else { return nil }
        let body: JSONValue = [
            [
                "relation": ["delegate_permission/common.handle_all_urls"],
                "target": [
                    "namespace": "android_app", "package_name": .string(package),
                    "sha256_cert_fingerprints": .array(appLinks.androidCertificateFingerprints.map(JSONValue.string)),
                ],
            ]
        ]
        return associationResponse(body, label: .assetLinks)
    }

    /// Exactly `application/json`, the type both platforms' verifiers ask for.
    private static func associationResponse(_ body: JSONValue, label: MetricsLabel) -> HTTPResponse {
        let bytes = ByteBuffer(bytes: JSONWriter.bytes(body))
        var response = HTTPResponse(body: bytes, type: "application/json", headers: [("Cache-Control", "public, max-age=3600")])
        response.metricsLabel = label
        return response.precomputed()
    }
}
