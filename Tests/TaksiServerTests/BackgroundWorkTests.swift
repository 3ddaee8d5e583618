import Foundation
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle
import TaksiScreens
import TaksiTestSupport
import Testing

@testable import TaksiServer

/// Work that requests and reloads leave running (refreshes, purges, exposure writes, submit
/// answers recorded again, token fetches, the store's statements): each job a child task of one
/// service's run, drained at graceful shutdown. Gates are streams the test opens; nothing waits on
/// time.
@Suite("Background work")
struct BackgroundWorkTests {
    /// A gate a job waits at until the test opens it.
    final class Gate: Sendable {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        func open() { continuation.finish() }
        func pass() async { for await _ in stream {} }
    }

    /// A count the jobs add to.
    final class Count: Sendable {
        private let value = NIOLockedValueBox(0)
        func add() { value.withLockedValue { $0 += 1 } }
        var total: Int { value.withLockedValue { $0 } }
    }

    @Test("jobs started before any run wait for one; runUntilIdle runs them and those they start, and returns when none is left")
    func runUntilIdle() async throws {
        let work = BackgroundWork("test jobs", logger: testLogger("test"))
        let count = Count()
        for _ in 0..<3 {
            #expect(work.start("a job") { count.add() })
        }
        #expect(
            work.start("a job that starts another") {
                count.add()
                work.start("the job it started") { count.add() }
            })
        #expect(count.total == 0, "nothing runs without a run")
        #expect(work.unfinished == 4)
        await work.runUntilIdle()
        #expect(count.total == 5)
        #expect(work.unfinished == 0)
        // It runs again: a run until idle closes nothing.
        #expect(work.start("a later job") { count.add() })
        await work.runUntilIdle()
        #expect(count.total == 6)
    }

    @Test("at graceful shutdown the service finishes what is under way and what that starts, then refuses new work, saying so")
    func drainsAtShutdown() async throws {
        let log = LogRecorder()
        let work = BackgroundWork("test jobs", logger: log.logger)
        let gate = Gate()
        let count = Count()
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [work], logger: testLogger("group")))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            let running = Gate()
            work.start("a job held at the gate") {
                running.open()
                await gate.pass()
                count.add()
                // Started while the service drains: part of what is under way, so it runs.
                #expect(work.start("a follow-up") { count.add() })
            }
            tasks.addTask { try await group.run() }
            await running.pass()  // the group runs the service
            await group.triggerGracefulShutdown()
            #expect(count.total == 0)
            gate.open()
            try await tasks.waitForAll()
        }
        #expect(count.total == 2, "the held job and its follow-up both ran before the service ended")
        #expect(!work.start("a job after shutdown") { count.add() })
        #expect(count.total == 2)
        let refused = log.lines(atLeast: .warning).map(\.message)
        #expect(refused == ["a job after shutdown was started after shutdown drained the test jobs; it does not run"])
    }

    @Test("whileRunning runs the jobs while its body runs, finishes those left before it returns, and refuses nothing after")
    func whileRunning() async throws {
        let work = BackgroundWork("test jobs", logger: testLogger("test"))
        let gate = Gate()
        let count = Count()
        let ran = Gate()
        let value = await work.whileRunning {
            work.start("a job run during the body") {
                count.add()
                ran.open()
            }
            await ran.pass()  // taken while the body runs
            work.start("a job held past the body's end") {
                await gate.pass()
                count.add()
            }
            gate.open()
            return 7
        }
        #expect(value == 7)
        #expect(count.total == 2, "the held job was finished before it returned")
        #expect(work.start("a job after it") { count.add() }, "taken, for the next run")
        await work.runUntilIdle()
        #expect(count.total == 3)
    }

    @Test("a run cancelled (shutdown's grace over) cancels the jobs running, drops those waiting and names them")
    func cancelled() async throws {
        let log = LogRecorder()
        let work = BackgroundWork("test jobs", logger: log.logger)
        work.start("a queued job") {}
        work.start("another queued job") {}
        let run = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await work.run()
        }
        try await run.value
        #expect(work.unfinished == 0)
        let warning = try #require(log.lines(atLeast: .warning).first)
        #expect(warning.message == "shutdown's grace ended before the test jobs did: 2 did not run")
        #expect(warning.metadata["not_run"] == #"["a queued job", "another queued job"]"#)
        await work.idle()  // nothing is left to wait for

        // A job that runs is cancelled with the run.
        let held = BackgroundWork("held jobs", logger: testLogger("test"))
        let started = Gate()
        let ended = Count()
        held.start("a job that waits for its cancellation") {
            started.open()
            try? await Task.sleep(for: .seconds(3_600))
            if Task.isCancelled { ended.add() }
        }
        let running = Task { try await held.run() }
        await started.pass()
        running.cancel()
        try await running.value
        #expect(ended.total == 1)
    }

    @Test("runs may overlap (two doors of one application): each takes jobs while it runs, and one that ends when idle waits for them all")
    func overlappingRuns() async throws {
        let work = BackgroundWork("test jobs", logger: testLogger("test"))
        let gate = Gate()
        let running = Gate()
        let count = Count()
        work.start("a held job") {
            running.open()
            await gate.pass()
            count.add()
        }
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { await work.runUntilIdle() }
            await running.pass()  // the first run holds it
            tasks.addTask {
                await work.runUntilIdle()
                #expect(count.total == 2, "ended once the other run's job was done too")
            }
            work.start("a second job") { count.add() }
            gate.open()
            try await tasks.waitForAll()
        }
        #expect(work.unfinished == 0)
    }

    @Test("idle() returns once the jobs under way, and those they start, are done")
    func idle() async throws {
        let work = BackgroundWork("test jobs", logger: testLogger("test"))
        let gate = Gate()
        let count = Count()
        work.start("a held job") {
            await gate.pass()
            work.start("its follow-up") { count.add() }
        }
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { await work.runUntilIdle() }
            tasks.addTask {
                await work.idle()
                #expect(count.total == 1, "idle after the follow-up")
            }
            gate.open()
            try await tasks.waitForAll()
        }
    }

    @Test("after shutdown, a stale value's refresh is refused and leaves no call in flight for a later lookup to wait on")
    func refreshAfterShutdown() async throws {
        let clock = ManualClock()
        let log = LogRecorder()
        let cache = UpstreamCache(now: { clock.now }, logger: log.logger)
        let policy = UpstreamCache.Policy(ttl: .seconds(10), staleWhileRevalidate: .seconds(20), staleIfError: .seconds(0))
        let value = { @Sendable (text: String) in UpstreamValue(value: .string(text), bytes: 1) }
        _ = await cache.lookUp("k", policy: policy) { _ in .success(value("first")) }
        // The service ran, and shutdown drained it.
        let run = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await cache.refreshes.run()
        }
        try await run.value
        clock.advance(by: .seconds(15))
        let stale = await cache.lookUp("k", policy: policy) { _ in .success(value("a refresh")) }
        #expect(stale.lookup == .stale(value("first")))
        #expect(cache.call(for: "k") == nil, "nothing in flight")
        #expect(
            log.lines(atLeast: .warning).map(\.message) == [
                "a refresh of a stale upstream value was started after shutdown drained the upstream refreshes; it does not run"
            ])
        clock.advance(by: .seconds(30))
        let fetched = await cache.lookUp("k", policy: policy) { _ in .success(value("second")) }
        #expect(fetched.lookup == .fetched(value("second")), "the lookup made its own call")
    }

    @Test("a flight's result reaches every task waiting for it, and every later wait at once")
    func flight() async throws {
        let flight = Flight<Int>()
        await withTaskGroup(of: Int.self) { group in
            for _ in 0..<5 { group.addTask { await flight.value } }
            flight.finish(42)
            for await value in group { #expect(value == 42) }
        }
        #expect(await flight.value == 42)
    }

    @Test("an application's background services, in the order its group starts them: what stops last goes first")
    func applicationOrder() throws {
        var configuration = ServerConfiguration.forTests()
        configuration.cdn = CDNSettings(targets: [.varnish([URL(string: "http://127.0.0.1:9")!])])
        let screenSet = try #require(
            ScreenSetLoader.load(files: ["home.yaml": Array("name: home\nentry: true\ncomponents: []".utf8)]).screenSet)
        let application = buildApplication(configuration: configuration, screenSet: screenSet, logger: testLogger("test"))
        #expect(
            application.backgroundServices.map { String(describing: $0) } == [
                "exposure writes", "submit answers' recordings", "CDNPurger", "upstream token fetches", "upstream refreshes",
            ])
    }
}
