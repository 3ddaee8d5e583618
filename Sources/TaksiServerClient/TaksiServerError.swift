import Foundation

/// Why a request to taksi-server gave no usable answer. Every call of ``ScreenServer`` returns one
/// of these as a value; none throws or traps.
public enum TaksiServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No answer: the connection failed, timed out or was cancelled (`URLError`'s code, and its
    /// description).
    case transport(code: Int, message: String)
    /// An answer other than the one asked for: its status and the error body's stable `code` and
    /// `message` (`{"error": {"code", "message"}}`, see docs/http-api.md), when it had one.
    case status(Int, code: String?, message: String?)
    /// The server no longer had the skeleton the request was made for (`412 skeleton_outdated`),
    /// and asking again as many times as ``ScreenServer/Retry`` allows did not change that.
    case skeletonOutdated
    /// The screen changed on the server before a submit ran (`412`) and the new one lacks some of
    /// the inputs sent: nothing was submitted. Show the new screen and ask the person to check
    /// the form and send it again.
    indirect case screenChanged(LoadedScreen)
    /// The base URL and path made no URL (a base URL with no scheme or host, say).
    case invalidRequest(String)

    /// The error body's `code`, for ``status(_:code:message:)``: `screen_not_found`,
    /// `action_not_found`, `link_not_found`...
    public var code: String? {
        if case .status(_, let code, _) = self { return code }
        return nil
    }

    /// The task was cancelled before an answer came.
    static let cancelled = TaksiServerError.transport(code: URLError.Code.cancelled.rawValue, message: "cancelled")

    /// A path that names no screen (`""`, `"?q=1"`).
    static let noScreen = TaksiServerError.invalidRequest("the path names no screen; give one like \"home\" or \"products/espresso-cups\"")

    public var description: String {
        switch self {
        case .transport(let code, let message): "no answer from taksi-server (URLError \(code)): \(message)"
        case .status(let status, let code, let message):
            "taksi-server answered \(status)" + (code.map { " \($0)" } ?? "") + (message.map { ": \($0)" } ?? "")
        case .skeletonOutdated: "taksi-server no longer serves the skeleton shown, and a fresh one did not help (412 skeleton_outdated)"
        case .screenChanged(let screen): "the screen \(screen.path) changed before the submit ran; nothing was sent"
        case .invalidRequest(let reason): "no request could be made: \(reason)"
        }
    }
}
