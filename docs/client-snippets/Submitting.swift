import Foundation
import Taksi

extension TaksiServerClient {
    /// What came of a submit.
    struct Submitted {
        /// The screen to show: patched by the answer (error labels filled, or cleared).
        var components: [any Component]
        /// The answer's next action, if any.
        var then: (any Action)?
        /// The screen changed on the server before the submit ran (`412`), and the new one no
        /// longer has the inputs typed: `components` is the new screen, nothing was sent. Tell
        /// the person to check the form and send it again; never drop the tap silently.
        var screenChanged = false
    }

    /// Submits `action` of the screen at `screen`: the text fields whose identifiers are the
    /// action's inputs (as the screen file declares them; the server ignores any other),
    /// those left empty left out. Applies the answer's patch to `components` through the client's
    /// own data path. When the server no longer has the skeleton shown (`412`: a deploy under
    /// way), the submit did not run: the screen is loaded again and, when it still has those
    /// inputs, the submit is sent again with the same key, else `screenChanged` says so. On the
    /// main actor, with the components the views show.
    @MainActor
    func submit(
        _ action: String, inputs: Set<String>, on screen: String, components: [any Component], service: TaksiService
    ) async -> Submitted {
        var values: [String: String] = [:]
        for field in textFields(of: components) where inputs.contains(field.identifier) && !field.content.text.isEmpty {
            values[field.identifier] = field.content.text
        }
        // A new key per submit; a retry of this submit sends the same one.
        let key = UUID().uuidString
        var shown = components
        for attempt in 0..<2 {
            let patched = await send(action, values: values, key: key, on: screen, components: shown, service: service)
            guard revisions.isOutdated(screen) else { return Submitted(components: patched, then: submits.takeNext("\(screen)/actions/\(action)")) }
            // 412: not run. The screen as the server has it now, and the submit again if it fits.
            shown = await load(screen, service: service, client: self)
            let fields = Set(textFields(of: shown).map(\.identifier))
            guard attempt == 0, values.keys.allSatisfy(fields.contains) else { break }
        }
        return Submitted(components: shown, then: nil, screenChanged: true)
    }

    @MainActor
    private func send(
        _ action: String, values: [String: String], key: String, on screen: String, components: [any Component], service: TaksiService
    ) async -> [any Component] {
        let path = "\(screen)/actions/\(action)"
        submits.start(path, inputs: values, idempotencyKey: key)
        let patched = await service.updateDynamicComponentsData(for: components, fetching: path) ?? components
        // The client asks for data only when the screen has a dynamic component: a form without
        // one is posted here, for its next action (there is nothing to patch).
        if let unsent = submits.take(path) { _ = await post(unsent, to: path, decoder: JSONDecoder()) }
        return patched
    }

    private func textFields(of components: [any Component]) -> [TextFieldComponent<TextFieldComponentView>] {
        components.compactMap { $0 as? TextFieldComponent<TextFieldComponentView> }
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
