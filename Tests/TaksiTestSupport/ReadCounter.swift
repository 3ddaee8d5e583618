package import NIOCore

/// Counts the reads the handlers after it ask the channel for.
package final class ReadCounter: ChannelOutboundHandler, @unchecked Sendable {
    // Unchecked: touched only on the testing channel's event loop and, once it is idle, by the test.
    package typealias OutboundIn = Any
    package private(set) var count = 0

    package init() {}

    package func read(context: ChannelHandlerContext) {
        count += 1
        context.read()
    }
}
