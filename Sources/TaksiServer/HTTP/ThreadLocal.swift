import Atomics
import NIOConcurrencyHelpers
import NIOPosix

/// State of an object's own on each thread, for what a request reads on its event loop: each
/// thread reads and writes only its own, so no lock is shared between loops on a request's way.
/// Made on a thread the first time that thread asks for it (``local``), released with the thread
/// or after its owner (when the thread next makes state for another owner, or reads a
/// ``ReadMostly`` value that changed). Until then what it holds stays, so state that refers to
/// what an owner holds refers to it without keeping it (`unowned` or `weak`).
///
/// Only synchronous code may use it: a task can move between threads at a suspension point.
final class PerThread<Value: AnyObject>: Sendable {
    /// This owner's entries, never another's: ids are not reused.
    private let id = ThreadLocalTable.nextID()
    private let make: @Sendable () -> Value

    /// - Parameter make: the state of a thread that has none yet.
    init(_ make: @escaping @Sendable () -> Value) {
        self.make = make
    }

    /// The calling thread's state, made when it has none.
    var local: Value {
        let table = ThreadLocalTable.current
        if let value = table.value(of: id) { return unsafeDowncast(value, to: Value.self) }
        let value = make()
        table.set(value, of: id, owner: self)
        return value
    }
}

/// Objects each thread keeps for itself by key, and every thread's, for a reader that sums them:
/// counts a thread alone writes (on memory no other loop writes) and `/metrics` reads. A key a
/// thread meets for the first time costs one lock, to enter its object in the list of all.
final class PerThreadTable<Key: Hashable & Sendable, Value: AnyObject & Sendable>: Sendable {
    private final class Table {
        var byKey: [Key: Value] = [:]
    }

    private let tables = PerThread { Table() }
    private let every = NIOLockedValueBox<[Value]>([])

    /// The calling thread's object for `key`, made by `make` the first time.
    func local(_ key: Key, make: () -> Value) -> Value {
        let table = tables.local
        if let found = table.byKey[key] { return found }
        let made = make()
        table.byKey[key] = made
        every.withLockedValue { $0.append(made) }
        return made
    }

    /// Every thread's objects.
    var all: [Value] { every.withLockedValue { $0 } }
}

/// A value written rarely and read on every request (the served screen set), read without a lock:
/// each thread remembers the value it read last with the generation it read, and takes the lock
/// only when the generation has moved (an atomic load, on memory every loop only reads).
///
/// A thread remembers the value without keeping it (a weak reference): a replaced value is freed
/// when its last holder lets it go, whichever threads read it last (an event loop that serves
/// nothing more must not keep a replaced screen set for ever).
final class ReadMostly<Value: AnyObject & Sendable>: Sendable {
    private final class Seen {
        var generation = -1
        weak var value: Value?
    }

    private let box: NIOLockedValueBox<Value>
    private let generation = ManagedAtomic(0)
    private let seen = PerThread { Seen() }

    init(_ value: Value) {
        box = NIOLockedValueBox(value)
    }

    /// The value last stored.
    var value: Value {
        let current = generation.load(ordering: .acquiring)
        let seen = seen.local
        if seen.generation == current, let value = seen.value { return value }
        // Read under the lock: the value stored with `current`, or a newer one (then the next
        // read takes the lock once more). What this thread kept for owners gone goes now.
        let value = box.withLockedValue { $0 }
        seen.generation = current
        seen.value = value
        ThreadLocalTable.current.dropStateOfOwnersGone()
        return value
    }

    /// Stores `value`; every thread reads it from its next read on.
    func store(_ value: Value) {
        box.withLockedValue { stored in
            stored = value
            generation.wrappingIncrement(ordering: .releasing)
        }
    }
}

/// What one thread keeps for ``PerThread`` owners: read and written by that thread alone.
fileprivate final class ThreadLocalTable: @unchecked Sendable {
    private static let variable = ThreadSpecificVariable<ThreadLocalTable>()
    private static let nextIDs = ManagedAtomic(0)

    static func nextID() -> Int { nextIDs.wrappingIncrementThenLoad(ordering: .relaxed) }

    /// The calling thread's table.
    static var current: ThreadLocalTable {
        if let table = variable.currentValue { return table }
        let table = ThreadLocalTable()
        variable.currentValue = table
        return table
    }

    /// A reference that does not keep its object.
    private struct Owner {
        weak var object: AnyObject?
    }

    /// Few: one per owner whose state this thread read (a served set, the memo, the metrics), in
    /// three arrays, so a lookup reads ids alone (a weak reference's copy costs a runtime call).
    private var ids: [Int] = []
    private var values: [AnyObject] = []
    /// The owners, to drop the state of those gone; when it is gone, its state goes too.
    private var owners: [Owner] = []

    func value(of id: Int) -> AnyObject? {
        for index in ids.indices where ids[index] == id { return values[index] }
        return nil
    }

    func set(_ value: AnyObject, of id: Int, owner: AnyObject) {
        drop { $0 == id }
        ids.append(id)
        values.append(value)
        owners.append(Owner(object: owner))
    }

    /// Drops the state of owners that are gone.
    func dropStateOfOwnersGone() {
        drop { _ in false }
    }

    /// Drops the entries whose id `matches`, and those of owners gone.
    private func drop(where matches: (Int) -> Bool) {
        for index in ids.indices.reversed() where matches(ids[index]) || owners[index].object == nil {
            ids.remove(at: index)
            values.remove(at: index)
            owners.remove(at: index)
        }
    }
}
