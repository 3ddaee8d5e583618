import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import TaksiSchema
import TaksiScreens
import TaksiTestSupport
import Testing

@testable import TaksiServer

/// The live preview (`/preview`): off unless configured, a self-contained page under a strict
/// policy, the catalog and exchange the page reads, and the event stream that follows reloads
/// over a real socket. The page itself is checked in a browser by `scripts/check-preview.py`.
@Suite("Preview")
struct PreviewTests {
    /// An application over a fresh copy of the fixture screens, with the preview on.
    static func makeApplication(preview: Bool = true) throws -> (Application, URL) {
        try fixtureCopyApplication(preview: preview, label: "preview")
    }

    static let routes = [
        "/preview", "/preview/", "/preview/home", "/preview/preview.js", "/preview/preview.css", "/preview/catalog.json",
        "/preview/exchange.json?screen=home", "/preview/events.stream",
    ]

    @Test("off unless configured: every preview route answers 404 like an unknown path")
    func offByDefault() async throws {
        #expect(!ServerConfiguration().preview)
        let application = fixtureApplication()
        for route in Self.routes {
            let response = try await application.execute(uri: route)
            #expect(response.status == .notFound, "\(route)")
            #expect(response.json?["error"]?["code"] == "not_found", "\(route)")
        }
        for method in [HTTPMethod.OPTIONS, .POST, .HEAD] {
            #expect(try await application.execute(method, uri: "/preview").status == .notFound, "\(method)")
        }
    }

    @Test("GET / sends a person to the preview when it is on, else says where things are")
    func root() async throws {
        let (application, _) = try Self.makeApplication()
        let toPreview = try await application.execute(uri: "/")
        #expect(toPreview.status == .found)
        #expect(toPreview.header("Location") == "/preview")
        #expect(toPreview.header("Cache-Control") == "no-store")

        let pointer = try await fixtureApplication().execute(uri: "/")
        #expect(pointer.status == .ok)
        #expect(pointer.header("Cache-Control") == "no-store")
        #expect(pointer.json?["screens"] == "/screens")
        #expect(pointer.json?["openapi"] == "/openapi.yaml")
        #expect(pointer.json?["version"] == .string(TaksiServerVersion.current))
        #expect(try await fixtureApplication().execute(.POST, uri: "/").status == .methodNotAllowed)
    }

    @Test("the example configuration turns it on; the container's and the manifest's leave it off")
    func configurations() throws {
        let example = try ServerConfiguration.resolve(file: repositoryRoot.appendingPathComponent("config.json").path, environment: [:])
        #expect(example.preview)
        let container = try ServerConfiguration.resolve(
            file: repositoryRoot.appendingPathComponent("deploy/container-config.json").path, environment: [:]
        )
        #expect(!container.preview)
        var configuration = ServerConfiguration()
        try configuration.apply(key: "preview", value: "true", source: "TAKSI_PREVIEW")
        #expect(configuration.preview)
        #expect(throws: ConfigurationError.self) { try configuration.apply(key: "preview", value: "sometimes", source: "TAKSI_PREVIEW") }
    }

    @Test("the page and its files are self-contained, no-store, under a strict Content-Security-Policy")
    func page() async throws {
        let (application, _) = try Self.makeApplication()
        for uri in ["/preview", "/preview/", "/preview/home", "/preview/bikes/stations/velib"] {
            let page = try await application.execute(uri: uri)
            #expect(page.status == .ok, "\(uri)")
            #expect(page.headers["Content-Type"] == ["text/html; charset=utf-8"])
            #expect(page.headers["Cache-Control"] == ["no-store"])
            #expect(page.headers["X-Content-Type-Options"] == ["nosniff"])
            let policy = try #require(page.headers["Content-Security-Policy"].first)
            for directive in [
                "default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'",
            ] {
                #expect(policy.contains(directive), "\(directive)")
            }
            #expect(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"))
        }
        let html = (try await application.execute(uri: "/preview/home")).text
        // Everything the page loads is this server's, under /preview/.
        let references = html.matches(of: /(?:src|href)="([^"]*)"/).map { String($0.output.1) }
        #expect(references.sorted() == ["/preview", "/preview/preview.css", "/preview/preview.js"])
        #expect(!html.contains("<script>") && !html.contains("style="), "no inline script or style: the policy forbids them")

        let script = try await application.execute(uri: "/preview/preview.js")
        #expect(script.headers["Content-Type"] == ["text/javascript; charset=utf-8"])
        let source = script.text
        for markupSink in ["innerHTML", "outerHTML =", "insertAdjacentHTML", "document.write", "eval("] {
            #expect(!source.contains(markupSink), "values reach the page as text only: \(markupSink)")
        }
        #expect(!source.contains("http://") && !source.contains("https://"), "no fetch leaves this server")
        let style = try await application.execute(uri: "/preview/preview.css")
        #expect(style.headers["Content-Type"] == ["text/css; charset=utf-8"])
        #expect(!style.text.contains("url(") && !style.text.contains("@import"))

        // Parameter values may hold '.' (a repository named swift.org); only the page's own files are taken.
        #expect(try await application.execute(uri: "/preview/repositories/apple/swift.org").status == .ok)
        #expect(try await application.execute(uri: "/previews").status == .notFound)
    }

    @Test("catalog.json: screens, variants with a version that selects each, query parameters, schemas, pending errors")
    func catalog() async throws {
        let (application, directory) = try Self.makeApplication()
        let catalog = try #require((try await application.execute(uri: "/preview/catalog.json")).json)
        #expect(catalog["screens_version"] == .string(application.store.status.version))
        #expect(catalog["pending_errors"] == [])
        let screens = catalog["screens"]?.arrayValue ?? []
        #expect(screens.compactMap { $0["name"]?.stringValue } == application.store.snapshot.screenSet.names)
        let home = try #require(screens.first { $0["name"] == "home" })
        let variants = home["variants"]?.arrayValue ?? []
        let modern = try #require(variants.first { $0["version"] == ">= 2.0" })
        #expect(modern["file"]?.stringValue?.hasSuffix("home.yaml") == true)
        #expect(modern["query"]?["name"]?["default"] == "friend")
        // Each variant's sample version selects it, as the list's links promise.
        for variant in variants {
            let headers = variant["sample_version"]?.stringValue.map { [("X-Taksi-Version", $0)] } ?? []
            let skeleton = try await application.execute(uri: "/screens/home", headers: headers)
            #expect(skeleton.headers["X-Taksi-Variant"] == [variant["id"]?.stringValue ?? "?"])
        }
        #expect(home["parameter_order"] == [])
        let landing = try #require(screens.first { $0["name"] == "landing" })
        #expect(landing["experiments"]?.arrayValue?.count == 1)
        let card = try #require(catalog["components"]?["restaurant_component"])
        #expect(card["built_in"] == false)
        #expect(card["fields"]?.arrayValue?.first { $0["name"] == "icon_url" }?["type"] == "url")
        #expect(catalog["components"]?["label_component"]?["built_in"] == true)

        // A broken edit: the catalog still describes the last good set, and carries the errors.
        let login = directory.appendingPathComponent("login.json")
        let original = try String(contentsOf: login, encoding: .utf8)
        try Data(original.replacingOccurrences(of: #""kind": "title""#, with: #""kind": "titel""#).utf8).write(to: login)
        #expect(application.watcher?.reload() == false)
        let broken = try #require((try await application.execute(uri: "/preview/catalog.json")).json)
        #expect(broken["screens"]?.arrayValue?.count == screens.count)
        let error = try #require(broken["pending_errors"]?.arrayValue?.first)
        #expect(error["file"]?.stringValue?.hasSuffix("login.json") == true)
        #expect(error["line"] == 8 && error["column"] == 46)
        #expect(error["path"] == "components[0].content.kind")
    }

    @Test("a YAML screen that stops parsing is one error with one hint, the same in validate, /readyz and the preview")
    func sameHintEverywhere() async throws {
        let (application, directory) = try Self.makeApplication()
        let home = directory.appendingPathComponent("home.yaml")
        let original = try String(contentsOf: home, encoding: .utf8)
        // An indent error: a key one space off its mapping.
        try Data(original.replacingOccurrences(of: "    type: fixture\n", with: "     type: fixture\n").utf8).write(to: home)
        #expect(application.watcher?.reload() == false)
        // What validate prints: the loader's report, one line per diagnostic.
        let validate = ScreenSetLoader.load(directory: directory.path, upstreams: Set(fixtureUpstreams.keys)).diagnostics
        let errors = validate.filter { $0.severity == .error }
        try #require(errors.count == 1, "\(validate.report)")
        let line = errors[0].description
        #expect(line.contains("YAML"), "\(line)")
        let ready = try #require((try await application.execute(uri: "/readyz")).json)
        #expect(ready["pending_errors"] == [.string(line)])
        let catalog = try #require((try await application.execute(uri: "/preview/catalog.json")).json)
        let shown = try #require(catalog["pending_errors"]?.arrayValue?.first)
        #expect(catalog["pending_errors"]?.arrayValue?.count == 1)
        #expect(shown["text"]?.stringValue == line, "\(shown)")
    }

    @Test("exchange.json answers as the app's request is answered: its headers, the variant, data, gzip decoded")
    func exchange() async throws {
        let (application, _) = try Self.makeApplication()
        let data = try #require(
            (try await application.execute(
                uri: "/preview/exchange.json?screen=home&phase=data&query=name%3DAda&version=2.1&user=alice&language=pt-BR&gzip=0")).json)
        #expect(data["status"] == 200)
        #expect(data["request"]?["target"] == "/screens/home/data?name=Ada")
        let sent = data["request"]?["headers"]?.arrayValue ?? []
        for pair in [
            ["X-Taksi-Version", "2.1"], ["X-Taksi-User", "alice"], ["Accept-Language", "pt-BR"], ["Accept-Encoding", "identity"],
        ] {
            #expect(sent.contains(.array(pair.map(JSONValue.string))), "\(pair)")
        }
        let headers = data["headers"]?.arrayValue ?? []
        #expect(headers.contains(["X-Taksi-Variant", "home|>= 2.0|default"]))
        let body = try JSONDecoder().decode(InterfaceData.self, from: Data((data["body"]?.stringValue ?? "").utf8))
        #expect(body.entries.first { $0.identifier == "greeting" }?.content == ["value": "Hello, Ada!"])

        // gzip as an app that accepts it gets it: the body shown decoded, the bytes as sent.
        let skeleton = try #require(
            (try await application.execute(uri: "/preview/exchange.json?screen=home&version=2.1&gzip=1")).json)
        #expect(skeleton["headers"]?.arrayValue?.contains(["Content-Encoding", "gzip"]) == true)
        let text = skeleton["body"]?.stringValue ?? ""
        let decoded = try JSONDecoder().decode(Skeleton.self, from: Data(text.utf8))
        #expect(decoded.components.first?.identifier == "greeting")
        #expect((skeleton["bytes"]?.numberValue ?? 0) < Double(text.utf8.count))

        // No version: the other variant; an error is described, not raised.
        let classic = try #require((try await application.execute(uri: "/preview/exchange.json?screen=home")).json)
        #expect(classic["headers"]?.arrayValue?.contains(["X-Taksi-Variant", "home|*|default"]) == true)
        let missing = try #require((try await application.execute(uri: "/preview/exchange.json?screen=nowhere")).json)
        #expect(missing["status"] == 404)
        #expect(missing["body"]?.stringValue?.contains("screen_not_found") == true)
    }

    @Test("exchange.json keeps request values in their place: no query or fragment from a screen path, no control characters")
    func exchangeValues() async throws {
        let (application, _) = try Self.makeApplication()
        let injected = try #require(
            (try await application.execute(uri: "/preview/exchange.json?screen=home%3Fname%3DEve%23x&phase=data")).json)
        #expect(injected["request"]?["target"] == "/screens/home%3Fname=Eve%23x/data")
        #expect(injected["status"] == 404)
        let spaced = try #require(
            (try await application.execute(uri: "/preview/exchange.json?screen=home&phase=data&query=name%3DA%20B%23c")).json)
        #expect(spaced["request"]?["target"] == "/screens/home/data?name=A%20B%23c")
        #expect(spaced["body"]?.stringValue?.contains("Hello, A B#c!") == true)

        let control = try await application.execute(uri: "/preview/exchange.json?screen=home&version=2.1%0D%0AX-Evil:%201")
        #expect(control.status == .badRequest)
        #expect(control.json?["error"]?["code"] == "invalid_parameter")
        #expect(try await application.execute(uri: "/preview/exchange.json").status == .badRequest)
        #expect(try await application.execute(uri: "/preview/exchange.json?screen=home&phase=both").status == .badRequest)
    }

    @Test("streams beyond the cap are refused with 503")
    func streamCap() async throws {
        let (application, _) = try Self.makeApplication()
        let full = PreviewEvents(status: application.store.status, maxSubscribers: 0)
        var dependencies = Responder.Dependencies(store: application.store, logger: testLogger("preview"))
        dependencies.previewEvents = full
        // A responder of its own, with no room for a stream (no application: nothing in the background).
        let responder = Responder(dependencies)
        let refused = await RouterClient(responder).respond(uri: "/preview/events.stream")
        #expect(refused.status == .serviceUnavailable)
        #expect(refused.headers["Retry-After"] == ["5"])
        #expect(refused.json?["error"]?["code"] == "preview_streams_exhausted")
        let head = await RouterClient(responder).respond(.HEAD, uri: "/preview")
        #expect(head.status == .ok)
    }
}
