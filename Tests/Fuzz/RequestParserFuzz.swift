// The libFuzzer harness of `HTTPRequestParser`, compiled with the parser alone (it imports
// nothing): `Tests/Fuzz/run.sh [seconds]`. Beside "no crash, no out-of-bounds access" (ASan), it
// checks what the parser promises for any bytes:
//
// - the same events whatever the split of the bytes into reads (the split is taken from the input);
// - every range it gives is inside the bytes it was given, and never consumes more than them;
// - what it accepts is what it checks: methods and field names are tokens, values hold no CR, LF
//   or NUL, a target is visible ASCII;
// - a request it read, written out again plainly, reads back as the same request.
// The differential test against llhttp is `RequestReaderDifferentialTests`.

/// One request as the harness saw it.
struct FuzzedMessage: Equatable {
    var method: String
    var target: [UInt8]
    var minorVersion: Int
    var fields: [[UInt8]]
    var chunked: Bool
    var body: [UInt8] = []
    var ended = false
}

/// Reads `input` in pieces ending at `cuts`, as the server's reader does: bytes not consumed are
/// given again with the next piece.
func read(_ input: [UInt8], cuts: [Int]) -> (messages: [FuzzedMessage], failure: HTTPRequestParser.Failure?) {
    var parser = HTTPRequestParser(limits: .init(maxTargetLength: 8192, maxFieldBytes: 20480))
    var kept: [UInt8] = []
    var messages: [FuzzedMessage] = []
    var start = 0
    for end in cuts + [input.count] where end >= start && end <= input.count {
        kept += input[start..<end]
        start = end
        do {
            let consumed = try kept.withUnsafeBytes { bytes in
                try parser.parse(bytes) { event in
                    switch event {
                    case .head(let head, let headBytes):
                        precondition(headBytes.count <= bytes.count)
                        precondition(head.target.upperBound <= headBytes.count && !head.target.isEmpty)
                        let target = Array(headBytes[head.target])
                        precondition(target.allSatisfy { (0x21...0x7E).contains($0) })
                        var fields: [[UInt8]] = []
                        for field in head.fields {
                            precondition(field.name.upperBound <= headBytes.count && field.value.upperBound <= headBytes.count)
                            let name = Array(headBytes[field.name])
                            let value = Array(headBytes[field.value])
                            precondition(!name.isEmpty && name.allSatisfy(HTTPRequestParser.isTokenByte))
                            precondition(!value.contains(13) && !value.contains(10) && !value.contains(0))
                            fields.append(name + Array(": ".utf8) + value)
                        }
                        messages.append(
                            FuzzedMessage(
                                method: head.method.rawValue, target: target, minorVersion: head.minorVersion, fields: fields,
                                chunked: head.body == .chunked))
                    case .body(let range):
                        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count && !range.isEmpty)
                        precondition(!messages.isEmpty && !messages[messages.count - 1].ended)
                        messages[messages.count - 1].body += bytes[range]
                    case .end:
                        precondition(!messages.isEmpty && !messages[messages.count - 1].ended)
                        messages[messages.count - 1].ended = true
                    }
                    return true
                }
            }
            precondition(consumed >= 0 && consumed <= kept.count)
            kept.removeFirst(consumed)
        } catch {
            return (messages, error as? HTTPRequestParser.Failure ?? .malformed)
        }
    }
    return (messages, nil)
}

/// A request written out plainly: the form the parser must read back as the same request.
func plainly(_ message: FuzzedMessage) -> [UInt8] {
    var bytes = Array("\(message.method) ".utf8) + message.target + Array(" HTTP/1.\(message.minorVersion)\r\n".utf8)
    for field in message.fields { bytes += field + [13, 10] }
    bytes += [13, 10]
    if message.chunked {
        if !message.body.isEmpty { bytes += Array(String(message.body.count, radix: 16).utf8) + [13, 10] + message.body + [13, 10] }
        bytes += Array("0\r\n\r\n".utf8)
    } else {
        bytes += message.body
    }
    return bytes
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let whole = read(input, cuts: [])
    // Splits from the input itself, so libFuzzer explores them too.
    var cuts: [Int] = []
    var position = 0
    for byte in input.prefix(8) where input.count > 0 {
        position = (position + Int(byte) % 64 + 1) % (input.count + 1)
        cuts.append(position)
    }
    let pieces = read(input, cuts: cuts.sorted())
    precondition(pieces.messages == whole.messages && pieces.failure == whole.failure, "a split changed what was read")
    let byteAtATime = read(input, cuts: Array(0..<input.count))
    precondition(byteAtATime.messages == whole.messages && byteAtATime.failure == whole.failure, "reading a byte at a time changed it")
    for message in whole.messages where message.ended {
        let again = read(plainly(message), cuts: [])
        precondition(again.failure == nil && again.messages == [message], "a request written out plainly read differently")
    }
    return 0
}
