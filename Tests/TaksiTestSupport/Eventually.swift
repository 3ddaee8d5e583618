/// Waits, yielding to other tasks, until `condition` holds: for a state another task reaches
/// without telling anyone (a request that has joined a call in flight). Returns false only if
/// five minutes go by first, a hang guard, so a test fails instead of hanging; a slow machine
/// only takes longer (a minute was not enough under a parallel release build: the watcher's first
/// look came after 80 s).
package func eventually(_ condition: () -> Bool) async -> Bool {
    let guardTime = ContinuousClock.now + .seconds(300)
    while !condition() {
        if ContinuousClock.now > guardTime { return false }
        await Task.yield()
    }
    return true
}
