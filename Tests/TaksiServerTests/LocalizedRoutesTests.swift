import Foundation
import Logging
import NIOHTTP1
import TaksiSchema
import TaksiScreens
import TaksiServer
import TaksiTestSupport
import Testing

/// Localized screens over HTTP: the locale `Accept-Language` picks, said in `Content-Language`,
/// and `Vary: Accept-Language` only on screens with localized text.
@Suite("Localized routes")
struct LocalizedRoutesTests {
    static let files = [
        "strings/en.yaml": "hello: \"Hello, {name}!\"\ntitle: Welcome\n",
        "strings/pt.yaml": "hello: \"Olá, {name}!\"\ntitle: Boas-vindas\n",
        "strings/pt-BR.yaml": "hello: \"Oi, {name}!\"\ntitle: Bem-vindo\n",
        "welcome.json": #"""
        {"name": "welcome", "entry": true,
         "sources": {"q": {"type": "request", "parameters": {"name": {"default": "Ana"}}}},
         "components": [
           {"name": "label_component", "identifier": "title", "content": {"value": {"$text": "title"}}},
           {"name": "label_component", "identifier": "hello", "content": {"value": {"$text": "hello", "with": {"name": "q.name"}}}}
         ]}
        """#,
        "plain.json":
            #"{"name": "plain", "entry": true, "components": [{"name": "label_component", "identifier": "x", "content": {"value": "Same in every language"}}]}"#,
    ]

    let application: Application

    init() throws {
        let load = ScreenSetLoader.load(files: Self.files.mapValues { Array($0.utf8) })
        let set = try #require(load.screenSet, "\(load.diagnostics.report)")
        var configuration = ServerConfiguration()
        configuration.port = 0
        application = buildApplication(configuration: configuration, screenSet: set, logger: testLogger("test"))
    }

    @Test("skeleton and data come in the negotiated locale, with Content-Language and Vary: Accept-Language")
    func negotiated() async throws {
        for (header, locale, title, hello) in [
            ("pt-BR,pt;q=0.9", "pt-BR", "Bem-vindo", "Oi, Ana!"), ("pt-PT", "pt", "Boas-vindas", "Olá, Ana!"),
            ("fr, pt;q=0.5", "pt", "Boas-vindas", "Olá, Ana!"), ("fr", "en", "Welcome", "Hello, Ana!"),
            (nil, "en", "Welcome", "Hello, Ana!"),
        ] as [(String?, String, String, String)] {
            let headers = header.map { [("Accept-Language", $0)] } ?? []
            let skeleton = try await application.execute(uri: "/screens/welcome", headers: headers)
            #expect(skeleton.status == .ok)
            #expect(skeleton.headers["Content-Language"] == [locale], "\(header ?? "none")")
            #expect(skeleton.headers["Vary"] == ["Accept-Language, Accept-Encoding"])
            #expect(skeleton.text.contains("\"value\":\"\(title)\""), "\(skeleton.text)")
            let data = try await application.execute(uri: "/screens/welcome/data", headers: headers)
            #expect(data.headers["Content-Language"] == [locale])
            #expect(data.headers["Vary"] == ["Accept-Language, X-Taksi-Skeleton"])
            #expect(data.text.contains("\"value\":\"\(hello)\""), "\(data.text)")
        }
    }

    @Test("each locale's skeleton has its own ETag, so a revalidation never crosses languages")
    func etags() async throws {
        let english = try await application.execute(uri: "/screens/welcome")
        let portuguese = try await application.execute(uri: "/screens/welcome", headers: [("Accept-Language", "pt")])
        let tag = try #require(english.headers.first(name: "ETag"))
        #expect(tag != portuguese.headers.first(name: "ETag"))
        #expect(try await application.execute(uri: "/screens/welcome", headers: [("If-None-Match", tag)]).status == .notModified)
        #expect(
            try await application.execute(uri: "/screens/welcome", headers: [("If-None-Match", tag), ("Accept-Language", "pt")]).status
                == .ok)
    }

    @Test("a screen without localized text varies on nothing and says no language")
    func plainScreen() async throws {
        let skeleton = try await application.execute(uri: "/screens/plain", headers: [("Accept-Language", "pt")])
        #expect(skeleton.status == .ok)
        #expect(skeleton.headers["Content-Language"].isEmpty)
        #expect(skeleton.headers["Vary"] == ["Accept-Encoding"])
        #expect(
            try await application.execute(uri: "/screens/plain/data", headers: [("Accept-Language", "pt")]).headers["Content-Language"]
                .isEmpty)
    }
}
