import Foundation
import TaksiTestSupport
import Testing

@testable import TaksiServerClient

/// Prefetch over a slow link: a skeleton names the screens its buttons open, the library fetches
/// their skeletons in the background, and opening one then costs its data's round trip alone.
@Suite("Client library: prefetch")
struct PrefetchTests {
    @Test("with prefetch on, opening a linked screen costs one request over a 150 ms link instead of two; prefetches say so")
    func linkedScreenInOneRoundTrip() async throws {
        let replica = try await Replica()
        defer { replica.stop() }
        let balancer = try Balancer(replicas: [replica.port]) { _, _ in 0 }
        defer { balancer.stop() }
        balancer.delay(eachWay: 0.15)

        let eager = client(balancer.url, prefetch: true)
        let landing = try await eager.load("landing").get()
        #expect(!landing.isStale)
        await eager.prefetched.finished()
        let prefetches = balancer.passed.filter { $0.header("Sec-Purpose") == "prefetch" }.map(\.line)
        #expect(prefetches.contains { $0.hasPrefix("GET /screens/login ") } && prefetches.contains { $0.hasPrefix("GET /screens/home ") })
        let before = balancer.passed.count
        let start = ContinuousClock.now
        let login = try await eager.load("login").get()
        let withPrefetch = ContinuousClock.now - start
        #expect(login.revision != nil && (try? login.data.get()) != nil)
        // What the person waited for: the data alone (login's own links are fetched ahead after it).
        await eager.prefetched.finished()
        let asked = balancer.passed.dropFirst(before).filter { $0.header("Sec-Purpose") == nil }.map(\.line)
        #expect(asked.count == 1 && asked.first?.hasPrefix("GET /screens/login/data") == true, "\(asked)")

        let plain = client(balancer.url)
        _ = try await plain.load("landing").get()
        let plainBefore = balancer.passed.count
        let plainStart = ContinuousClock.now
        let plainLogin = try await plain.load("login").get()
        let without = ContinuousClock.now - plainStart
        #expect(balancer.passed.count - plainBefore == 2)
        #expect(plainLogin.skeleton == login.skeleton, "the prefetched skeleton is the one a load gets")
        // What it measured (not asserted: a busy machine is slower, never faster).
        print("prefetch: opening login over a link of 150 ms each way took \(withPrefetch) after prefetch, \(without) without")
    }

    @Test("the prefetch hints of a Link value: /screens/ targets with rel=prefetch, as sent")
    func targets() {
        let links =
            #"</screens/login>; rel=prefetch, </screens/restaurants/caf%C3%A9>; rel="prefetch", </other>; rel=prefetch, </screens/x>; rel=next"#
        #expect(ScreenServer.prefetchTargets(in: links) == ["login", "restaurants/caf%C3%A9"])
        #expect(ScreenServer.maxAge("public, max-age=60, stale-while-revalidate=300") == 60)
        #expect(ScreenServer.maxAge("no-store") == nil)
    }
}
