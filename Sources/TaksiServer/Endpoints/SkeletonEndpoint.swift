import NIOHTTP1

/// `GET /screens/<path>`: the skeleton of the variant the request selects, precomputed (bytes,
/// gzip form, `ETag`, `304`), written as it is.
struct SkeletonEndpoint: Sendable {
    let selector: VariantSelector

    func respond(at path: String, target: RequestTarget, headers: HTTPHeaders) throws(APIError) -> HTTPResponse {
        // The skeleton is the same for every value of a path parameter, but a value that does
        // not fit is refused here already, not only when the app asks for the data.
        let (screen, _) = try selector.store.snapshot.screen(at: path)
        let variant = try selector.select(in: screen, target: target, headers: headers)
        variant.counted.skeleton.increment()
        return variant.skeleton.response(to: headers)
    }
}
