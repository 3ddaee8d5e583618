public import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the server answered a submit: a patch for the screen, and the next action.
///
/// Every answer of an action is a patch, whatever its status: `200` or `201` when it ran, `422`
/// when an input was refused (the error labels filled), `502` or `504` when its upstream failed.
public struct Submission: Sendable, Equatable {
    /// The answer's status.
    public let status: Int
    /// The answer's body, `{"interface_data": [...], "then": {...}}`: decode it as the Taksi
    /// client's `InterfaceData` to patch the screen.
    public let patch: Data
    /// The next action's JSON (`then`), for the client's action decoder, when the answer has one:
    /// a navigation after a login, say.
    public let then: Data?
    /// The screen the patch is for: the one submitted from, or the one loaded again when it had
    /// changed on the server (`412`) and still had every input sent.
    public let screen: LoadedScreen
    /// The inputs the action does not declare, which the server ignored (`X-Taksi-Ignored-Inputs`):
    /// at most ten names.
    public let ignoredInputs: [String]
    /// How many more inputs were ignored than ``ignoredInputs`` names.
    public let moreIgnoredInputs: Int
    /// The key the submit was sent with, every time.
    public let idempotencyKey: String
}

extension ScreenServer {
    /// Submits the screen's action `action` with `inputs` (a form's fields by identifier):
    /// `POST <base>/screens/<screen>/actions/<action>` with `{"inputs": {...}}`.
    ///
    /// - The submit carries an `Idempotency-Key` (`key`, a new UUID by default) and is sent again
    ///   with the same key when no answer came back, up to ``Retry/submits`` times: the server
    ///   runs it once however often it arrives, on any replica of a fleet with a shared store.
    /// - It names the revision of `screen`'s skeleton. When the server no longer has it (`412`:
    ///   the screen changed, nothing ran), the screen is loaded again; when the new one still
    ///   has a component for every input, the submit is sent again, once, with the same key, and
    ///   the ``Submission/screen`` is the new one; otherwise the answer is
    ///   ``TaksiServerError/screenChanged(_:)`` with the new screen to show. Never a silent drop.
    /// - An input the action does not declare is ignored by the server and named in
    ///   ``Submission/ignoredInputs``: send the form's fields, all of them.
    ///
    /// - Returns: the answer (a patch, whatever its status), or the error: `404 action_not_found`
    ///   for an action the screen does not have (an app's own executable, say), no answer...
    public func submit(
        _ action: String, inputs: [String: String], on screen: LoadedScreen, key: String = UUID().uuidString
    ) async -> Result<Submission, TaksiServerError> {
        var target = screen
        var sends = 0
        var reloaded = false
        while true {
            sends += 1
            switch await post(action, inputs: inputs, on: target, key: key) {
            case .failure(.transport) where sends < retry.submits && !Task.isCancelled:
                continue
            case .failure(let error):
                return .failure(error)
            case .success(let answer) where answer.status == 412:
                memory.markOutdated(target.path.screen)
                guard !reloaded else { return .failure(.skeletonOutdated) }
                reloaded = true
                switch await load(target.path.description) {
                case .failure(let error): return .failure(error)
                case .success(let fresh):
                    guard Set(inputs.keys).isSubset(of: fresh.identifiers) else { return .failure(.screenChanged(fresh)) }
                    target = fresh
                    sends = 0
                }
            case .success(let answer):
                let body = (try? JSONSerialization.jsonObject(with: answer.body)) as? [String: Any]
                guard let body, body["interface_data"] != nil else { return .failure(answer.error) }
                let then = body["then"].flatMap { try? JSONSerialization.data(withJSONObject: $0) }
                // "a, b, and 3 more": the names are percent-encoded, the count is not.
                var ignored = (answer.header("X-Taksi-Ignored-Inputs") ?? "").split(separator: ",").map {
                    $0.trimmingCharacters(in: .whitespaces)
                }.filter { !$0.isEmpty }
                var more = 0
                if let last = ignored.last, last.hasPrefix("and "), last.hasSuffix(" more"),
                    let count = Int(last.dropFirst(4).dropLast(5))
                {
                    more = count
                    ignored.removeLast()
                }
                return .success(
                    Submission(
                        status: answer.status, patch: answer.body, then: then, screen: target,
                        ignoredInputs: ignored.map { $0.removingPercentEncoding ?? $0 }, moreIgnoredInputs: more,
                        idempotencyKey: key))
            }
        }
    }

    private func post(
        _ action: String, inputs: [String: String], on screen: LoadedScreen, key: String
    ) async -> Result<
        Answer, TaksiServerError
    > {
        let name = ScreenPath.encoded(action, allowing: ScreenPath.valueAllowed)
        var request: URLRequest
        switch self.request("screens/" + screen.path.screen + "/actions/" + name) {
        case .success(let made): request = made
        case .failure(let error): return .failure(error)
        }
        request.httpMethod = "POST"
        request.httpBody = try? JSONSerialization.data(withJSONObject: ["inputs": inputs], options: [.sortedKeys])
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(key, forHTTPHeaderField: "Idempotency-Key")
        if let revision = screen.revision { request.setValue(revision, forHTTPHeaderField: "X-Taksi-Skeleton") }
        return await send(request)
    }
}
