import Testing

@testable import TaksiServer

/// What wakes the store's follower early (a release announced, a first look asked for): a wait
/// ends at a signal, at its time limit, or when its task is cancelled. Each wait here that should
/// end at once waits an hour otherwise: the suite's time limit is the hang guard.
@Suite("Wakeup")
struct WakeupTests {
    @Test("a signal given while nobody waits ends the next wait at once, and only that one")
    func signalKept() async {
        let wakeup = Wakeup()
        wakeup.signal()
        await wakeup.wait(upTo: .seconds(3_600))
        #expect(!wakeup.hasPendingSignal, "the signal was used")
    }

    @Test("a wait ends at a signal given while it waits")
    func signalWhileWaiting() async {
        let wakeup = Wakeup()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await wakeup.wait(upTo: .seconds(3_600)) }
            // Signalled until the wait has taken one: a signal before it starts is kept for it anyway.
            wakeup.signal()
            await group.waitForAll()
        }
    }

    @Test("a wait that reaches its limit, or is cancelled, leaves no signal behind for the next")
    func limitLeavesNothing() async {
        let wakeup = Wakeup()
        await wakeup.wait(upTo: .milliseconds(1))
        #expect(!wakeup.hasPendingSignal)
        let waiting = Task { await wakeup.wait(upTo: .seconds(3_600)) }
        waiting.cancel()
        await waiting.value
        #expect(!wakeup.hasPendingSignal)
    }

    @Test("a wait ends when its task is cancelled")
    func cancelled() async {
        let wakeup = Wakeup()
        let waiting = Task { await wakeup.wait(upTo: .seconds(3_600)) }
        waiting.cancel()
        await waiting.value
    }
}
