import Foundation
import Taksi

extension TaksiServerClient {
    /// Submits `action` of the screen at `screen`: the text fields whose identifiers are the
    /// action's inputs (as the screen file declares them; the server refuses any other with 422),
    /// those left empty left out. Applies the answer's patch to `components` through the client's
    /// own data path and returns the next action, if any. On the main actor, with the components
    /// the views show.
    @MainActor
    func submit(
        _ action: String, inputs: Set<String>, on screen: String, components: [any Component], service: TaksiService
    ) async -> (components: [any Component], then: (any Action)?) {
        var values: [String: String] = [:]
        for field in components.compactMap({ $0 as? TextFieldComponent<TextFieldComponentView> })
        where inputs.contains(field.identifier) && !field.content.text.isEmpty {
            values[field.identifier] = field.content.text
        }
        let path = "\(screen)/actions/\(action)"
        // A new key per submit; a retry of this submit would send the same one.
        submits.start(path, inputs: values, idempotencyKey: UUID().uuidString)
        let patched = await service.updateDynamicComponentsData(for: components, fetching: path) ?? components
        // The client asks for data only when the screen has a dynamic component: a form without
        // one is posted here, for its next action (there is nothing to patch).
        if let unsent = submits.take(path) { _ = await post(unsent, to: path, decoder: JSONDecoder()) }
        return (patched, submits.takeNext(path))
    }
}

/// The submits between `submit` and the client's data request for their path, and the next
/// action each answer carried. A lock: the client is called from several tasks at once.
final class PendingSubmits: @unchecked Sendable {
    struct Submit {
        let inputs: [String: String]
        let idempotencyKey: String
    }

    private let lock = NSLock()
    private var waiting: [String: Submit] = [:]
    private var next: [String: any Action] = [:]

    func start(_ path: String, inputs: [String: String], idempotencyKey: String) {
        lock.lock(); defer { lock.unlock() }
        waiting[path] = Submit(inputs: inputs, idempotencyKey: idempotencyKey)
        next[path] = nil
    }

    /// The submit waiting for `path`, if any; taking it makes the data request a POST.
    func take(_ path: String) -> Submit? {
        lock.lock(); defer { lock.unlock() }
        return waiting.removeValue(forKey: path)
    }

    func finish(_ path: String, then action: (any Action)?) {
        lock.lock(); defer { lock.unlock() }
        next[path] = action
    }

    func takeNext(_ path: String) -> (any Action)? {
        lock.lock(); defer { lock.unlock() }
        return next.removeValue(forKey: path)
    }
}
