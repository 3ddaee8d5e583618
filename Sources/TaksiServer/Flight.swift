import NIOConcurrencyHelpers

/// One result that several tasks wait for, made once by the task that started it (single
/// flight): the request that asked first makes the call in its own task, and the requests that
/// ask meanwhile wait for its result here instead of calling again.
package final class Flight<Value: Sendable>: Sendable {
    private let state = NIOLockedValueBox<(result: Value?, waiting: [CheckedContinuation<Value, Never>])>((nil, []))

    package init() {}

    /// The result, once made; at once when it already is.
    package var value: Value {
        get async {
            await withCheckedContinuation { continuation in
                let result = state.withLockedValue { state -> Value? in
                    if let result = state.result { return result }
                    state.waiting.append(continuation)
                    return nil
                }
                if let result { continuation.resume(returning: result) }
            }
        }
    }

    /// Makes the result: every task waiting gets it, and so does every later wait. Called once.
    package func finish(_ result: Value) {
        let waiting = state.withLockedValue { state in
            state.result = result
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume(returning: result) }
    }
}
