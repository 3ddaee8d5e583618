import NIOCore
import TaksiSchema
public import TaksiScreens

/// A screen set made ready to serve: every body that does not depend on the request is encoded
/// once, here, so the hot path only writes bytes. Immutable; a reload builds a new one.
public final class ServedScreenSet: Sendable {
    /// A screen's precomputed responses.
    struct Screen: Sendable {
        let compiled: CompiledScreen
        let skeletonBody: ByteBuffer
        /// Present when every source is a fixture.
        let staticDataBody: ByteBuffer?
    }

    /// The compiled screens and their catalog.
    public let screenSet: ScreenSet
    let screens: [String: Screen]
    let indexBody: ByteBuffer

    public init(_ screenSet: ScreenSet) {
        self.screenSet = screenSet
        var screens: [String: Screen] = [:]
        var index: [JSONValue] = []
        for name in screenSet.names {
            guard let compiled = screenSet.screens[name] else { continue }
            screens[name] = Screen(
                compiled: compiled,
                skeletonBody: ByteBuffer(bytes: JSONWriter.bytes(compiled.skeleton.jsonValue)),
                staticDataBody: compiled.staticData.map { ByteBuffer(bytes: JSONWriter.bytes($0.jsonValue)) }
            )
            index.append(["name": .string(name), "requires_data": .bool(compiled.requiresData)])
        }
        self.screens = screens
        self.indexBody = ByteBuffer(bytes: JSONWriter.bytes(["screens": .array(index)]))
    }
}
