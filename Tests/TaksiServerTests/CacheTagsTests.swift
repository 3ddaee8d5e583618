import Foundation
import TaksiScreens
import TaksiServer
import TaksiTestSupport
import Testing

/// The tags cached skeletons carry for a CDN's purges, and config.json's `cdn`.
@Suite("Cache tags")
struct CacheTagsTests {
    /// A screen placing `fragments` fragments, each with one label, and a screen placing none.
    static func screens(fragments: Int, name: String = "home") -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        var uses = ""
        for index in 0..<fragments {
            files["fragments/part\(index).yaml"] = Array(
                "description: Part \(index).\ncomponents:\n  - {name: label_component, identifier: part\(index), content: {value: P}}\n"
                    .utf8)
            uses += "  - $fragment: part\(index)\n"
        }
        files["\(name.replacingOccurrences(of: "/", with: "_")).yaml"] = Array(
            "name: \(name)\nentry: true\ncomponents:\n\(uses)  - {name: label_component, identifier: title, content: {value: T}}\n".utf8)
        files["plain.yaml"] = Array("name: plain\nentry: true\ncomponents: []\n".utf8)
        return files
    }

    static func skeleton(_ set: ScreenSet, _ uri: String, options: ServedScreenSet.Options) async -> TestResponse {
        let store = ScreenStore(set, options: options)
        return await RouterClient(Responder(store: store, logger: testLogger("test"))).respond(uri: uri)
    }

    @Test("a skeleton names its screen, fragments, the server and the set's version; shared caches keep it for s-maxage")
    func skeletonTags() async throws {
        let set = try #require(ScreenSetLoader.load(files: Self.screens(fragments: 2)).screenSet)
        let options = ServedScreenSet.Options(skeletonSharedMaxAge: 3600, cacheTags: CacheTags())
        let response = await Self.skeleton(set, "/screens/home", options: options)
        #expect(
            response.header("Surrogate-Key")
                == "taksi taksi:version:\(set.version) taksi:screen:home taksi:fragment:part0 taksi:fragment:part1")
        #expect(response.header("Cache-Control") == "public, max-age=60, s-maxage=3600, stale-while-revalidate=300")
        // Cloudflare's header takes commas; without a CDN, no tags and no s-maxage.
        let cloudflare = await Self.skeleton(set, "/screens/plain", options: .init(cacheTags: CacheTags(header: "Cache-Tag")))
        #expect(cloudflare.header("Cache-Tag") == "taksi,taksi:version:\(set.version),taksi:screen:plain")
        let plain = await Self.skeleton(set, "/screens/plain", options: .init())
        #expect(plain.header("Surrogate-Key") == nil)
        #expect(plain.header("Cache-Control") == "public, max-age=60, stale-while-revalidate=300")
        // The same on every replica and after every restart: made from names only.
        let again = try #require(ScreenSetLoader.load(files: Self.screens(fragments: 2)).screenSet)
        #expect(await Self.skeleton(again, "/screens/home", options: options).header("Surrogate-Key") == response.header("Surrogate-Key"))
    }

    @Test("a screen placing 80 fragments still sends at most 50 tags: the fragments are then named by their kind")
    func atMostFifty() async throws {
        let set = try #require(ScreenSetLoader.load(files: Self.screens(fragments: 80)).screenSet)
        let response = await Self.skeleton(set, "/screens/home", options: .init(cacheTags: CacheTags()))
        let tags = try #require(response.header("Surrogate-Key")).split(separator: " ").map(String.init)
        #expect(tags.count <= CacheTags.maxCount)
        #expect(tags.contains("taksi:fragments") && tags.contains("taksi:screen:home"))
        #expect(!tags.contains { $0.hasPrefix("taksi:fragment:") })
        let fortySix = try #require(ScreenSetLoader.load(files: Self.screens(fragments: 46)).screenSet)
        let named = await Self.skeleton(fortySix, "/screens/home", options: .init(cacheTags: CacheTags()))
        #expect(named.header("Surrogate-Key")?.split(separator: " ").count == 49, "46 fragments and 3 tags fit: each named")
    }

    @Test("a tag is visible ASCII without spaces or commas, at most 256 characters, and two long names stay two tags")
    func tagCharacters() {
        let tags = CacheTags()
        #expect(tags.screen("bikes/stations/{network}") == "taksi:screen:bikes/stations/{network}")
        #expect(tags.screen("café, menu") == "taksi:screen:caf%C3%A9%2C%20menu")
        let long = String(repeating: "é", count: 200)
        let first = tags.screen(long + "a")
        let second = tags.screen(long + "b")
        for tag in [first, second] {
            #expect(tag.utf8.count <= CacheTags.maxLength)
            #expect(tag.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F && $0 != "," })
            #expect(tag.range(of: "%(?![0-9A-F]{2})", options: .regularExpression) == nil, "never cut inside an escape")
        }
        #expect(first != second)
        #expect(CacheTags(header: "Cache-Tag").separator == "," && CacheTags(header: "xkey").separator == " ")
    }

    @Test("what a change purges: the screens whose skeletons differ, and those removed; not the others")
    func changedScreens() throws {
        var files = Self.screens(fragments: 1)
        files["other.yaml"] = Array("name: other\nentry: true\ncomponents:\n  - $fragment: part0\n".utf8)
        let before = ServedScreenSet(try #require(ScreenSetLoader.load(files: files).screenSet))
        // The fragment's text changes: the two screens that place it.
        var edited = files
        edited["fragments/part0.yaml"] = Array(
            "description: Part 0.\ncomponents:\n  - {name: label_component, identifier: part0, content: {value: Q}}\n".utf8)
        let after = ServedScreenSet(try #require(ScreenSetLoader.load(files: edited).screenSet))
        #expect(CDNPurger.changedScreens(from: before, to: after) == ["home", "other"])
        // Nothing changed (a reload of the same files): nothing to purge.
        let same = ServedScreenSet(try #require(ScreenSetLoader.load(files: files).screenSet))
        #expect(CDNPurger.changedScreens(from: before, to: same).isEmpty)
        // A screen removed, and one added: the removed one only.
        var removed = files
        removed["plain.yaml"] = nil
        removed["new.yaml"] = Array("name: new\nentry: true\ncomponents: []\n".utf8)
        let later = ServedScreenSet(try #require(ScreenSetLoader.load(files: removed).screenSet))
        #expect(CDNPurger.changedScreens(from: before, to: later) == ["plain"])
    }
}
