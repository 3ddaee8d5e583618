import Testing

@testable import TaksiServer

/// Which endpoint a request path names, read from its bytes: every route, the trailing slash, the
/// prefixes' edges, and names that hold `/`, `data`, `actions` or bytes beyond ASCII.
@Suite("Routes")
struct RouteTests {
    @Test(
        "every path names its endpoint",
        arguments: [
            ("/", Route.root),
            ("/healthz", .health),
            ("/healthz/", .health),
            ("/readyz", .ready),
            ("/metrics", .metrics),
            ("/openapi.yaml", .openAPI),
            ("/links/resolve", .resolveLink),
            ("/.well-known/apple-app-site-association", .appleAppSiteAssociation),
            ("/.well-known/assetlinks.json", .assetLinks),
            ("/screens", .index),
            ("/screens/", .index),
            ("/interfaces", .index),
            ("/screens/home", .skeleton("home")),
            ("/screens/home/", .skeleton("home")),
            ("/interfaces/home", .skeleton("home")),
            ("/screens/bikes/stations/velib", .skeleton("bikes/stations/velib")),
            ("/screens/home/data", .data("home")),
            ("/interfaces/bikes/stations/velib/data", .data("bikes/stations/velib")),
            ("/screens/data", .skeleton("data")),
            ("/screens/home/actions/send", .action("home", "send")),
            ("/screens/a/b/actions/log_out", .action("a/b", "log_out")),
            ("/screens/actions/send", .skeleton("actions/send")),
            ("/screens/café/data", .data("café")),
            ("/screens/caf%C3%A9", .skeleton("caf%C3%A9")),
            ("/preview", .preview(.list)),
            ("/preview/", .preview(.list)),
            ("/preview/catalog.json", .preview(.catalog)),
            ("/preview/exchange.json", .preview(.exchange)),
            ("/preview/events.stream", .preview(.events)),
            ("/preview/preview.js", .preview(.asset("preview.js"))),
            ("/preview/home", .preview(.screen)),
            ("/previews", .notFound),
            ("/screensaver", .notFound),
            ("/screen/home", .notFound),
            ("", .notFound),
            ("/nowhere", .notFound),
        ] as [(String, Route)]
    )
    func route(_ path: String, _ expected: Route) {
        #expect(Route(path: path[...]) == expected)
    }

    @Test("a path cut from a longer target is read within its bounds")
    func substring() {
        let target = "/screens/home/data?name=Ada"
        let path = target[..<target.firstIndex(of: "?")!]
        #expect(Route(path: path) == .data("home"))
        #expect(Route(path: target.dropFirst(8).prefix(5)) == .notFound)
    }
}
