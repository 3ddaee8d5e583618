/// A dictionary that keeps its keys in the order they were last used, so the least recently used
/// one is found at once.
///
/// Entries live in an array of slots linked from the least to the most recently used, with a
/// dictionary from each key to its slot; a removed entry's slot is reused. Looking a key up, using
/// it, storing, removing and removing the least recently used entry each take one hash lookup and a
/// few index updates, whatever the size: a cache at capacity evicts one entry per insertion, and
/// finding the oldest by scanning every entry made each insertion cost as much as the cache is large.
struct RecencyDictionary<Key: Hashable, Value> {
    fileprivate struct Slot {
        var key: Key
        var value: Value
        /// The slot used just before this one (towards the least recent), or -1.
        var older: Int
        /// The slot used just after this one (towards the most recent), or -1.
        var newer: Int
    }

    private var slots: [Slot?] = []
    private var positions: [Key: Int] = [:]
    private var vacant: [Int] = []
    private var oldest = -1
    private var newest = -1

    init() {}

    var count: Int { positions.count }
    var isEmpty: Bool { positions.isEmpty }

    /// The value for `key`, leaving its place in the order alone.
    func peek(_ key: Key) -> Value? {
        positions[key].flatMap { slots[$0]?.value }
    }

    /// The value for `key`, which becomes the most recently used.
    mutating func use(_ key: Key) -> Value? {
        use(key) { $0 }
    }

    /// Marks `key`'s value the most recently used and returns what `read` makes of it (a part
    /// of it, without the whole value handed out); nil when there is none.
    mutating func use<Result>(_ key: Key, reading read: (Value) -> Result) -> Result? {
        guard let position = positions[key] else { return nil }
        moveToNewest(position)
        return slots[position].map { read($0.value) }
    }

    /// Stores `value` for `key` as the most recently used; returns the value it replaced.
    @discardableResult
    mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        if let position = positions[key] {
            let old = slots[position]?.value
            slots[position]?.value = value
            moveToNewest(position)
            return old
        }
        let slot = Slot(key: key, value: value, older: newest, newer: -1)
        let position: Int
        if let reused = vacant.popLast() {
            position = reused
            slots[position] = slot
        } else {
            position = slots.count
            slots.append(slot)
        }
        positions[key] = position
        link(asNewest: position)
        return nil
    }

    /// Removes `key`; returns its value.
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        guard let position = positions.removeValue(forKey: key) else { return nil }
        return vacate(position).value
    }

    /// Removes the least recently used entry and returns it; nil when empty.
    mutating func removeLeastRecent() -> (key: Key, value: Value)? {
        guard oldest >= 0 else { return nil }
        let slot = vacate(oldest)
        positions[slot.key] = nil
        return (slot.key, slot.value)
    }

    /// The keys from the least to the most recently used.
    var keysByRecency: [Key] {
        var keys: [Key] = []
        keys.reserveCapacity(count)
        var position = oldest
        while position >= 0, let slot = slots[position] {
            keys.append(slot.key)
            position = slot.newer
        }
        return keys
    }

    private mutating func vacate(_ position: Int) -> Slot {
        unlink(position)
        let slot = slots[position]!
        slots[position] = nil
        vacant.append(position)
        return slot
    }

    private mutating func moveToNewest(_ position: Int) {
        guard position != newest else { return }
        unlink(position)
        link(asNewest: position)
    }

    private mutating func unlink(_ position: Int) {
        let (older, newer) = (slots[position]!.older, slots[position]!.newer)
        if older >= 0 { slots[older]!.newer = newer } else { oldest = newer }
        if newer >= 0 { slots[newer]!.older = older } else { newest = older }
    }

    private mutating func link(asNewest position: Int) {
        slots[position]!.older = newest
        slots[position]!.newer = -1
        if newest >= 0 { slots[newest]!.newer = position } else { oldest = position }
        newest = position
    }
}

extension RecencyDictionary: Sendable where Key: Sendable, Value: Sendable {}

extension RecencyDictionary.Slot: Sendable where Key: Sendable, Value: Sendable {}
