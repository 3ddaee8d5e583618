import NIOHTTP1
import TaksiSchema
import TaksiScreens

/// `GET /screens/<path>`: the skeleton of the variant the request selects, precomputed (bytes,
/// gzip form, `ETag`, `304`), written as it is. A screen whose static fields are built from its
/// path (a button opening `products/{path.id}/review`) has a skeleton per URL: made from the path
/// parameters' values and kept like a data response (``ResponseMemo``), with the same validators.
struct SkeletonEndpoint: Sendable {
    let selector: VariantSelector
    /// Keeps the skeletons made per URL; nil makes every one.
    let memo: ResponseMemo?

    func respond(at path: String, target: RequestTarget, request: HTTPRequest) throws(APIError) -> HTTPResponse {
        // The skeleton is the same for every value of a path parameter (unless a static field is
        // built from it), but a value that does not fit is refused here already, not only when
        // the app asks for the data.
        let snapshot = selector.store.snapshot
        let (screen, pathValues) = try snapshot.screen(at: path)
        let variant = try selector.select(in: screen, target: target, exposing: request)
        variant.counted.skeleton.increment()
        guard !variant.compiled.pathFields.isEmpty else { return variant.skeleton.response(to: request.head) }
        return try skeleton(of: variant, path: pathValues, catalog: snapshot.screenSet.catalog, request: request)
    }

    /// The skeleton of one URL: kept for its path values, or made now.
    private func skeleton(
        of variant: ServedScreenSet.Variant, path values: [String: JSONValue], catalog: ComponentCatalog, request: HTTPRequest
    ) throws(APIError) -> HTTPResponse {
        let head = request.head
        let key = ResponseMemo.Key.skeleton(of: variant.memoID, path: values)
        let memo = self.memo.flatMap { $0.isEnabled ? $0 : nil }
        if let kept = memo?.entry(for: key) {
            request.note("taksi.memo", "hit")
            return kept.response(to: head)
        }
        if memo != nil { request.note("taksi.memo", "miss") }
        let skeleton: Skeleton
        switch variant.compiled.skeleton(path: values, catalog: catalog) {
        case .success(let made): skeleton = made
        case .failure(let error):
            throw APIError(.invalidParameter, message: "screen \(variant.compiled.name): \(error)")
        }
        let body = JSONWriter.bytes(skeleton.jsonValue)
        let id = variant.id
        guard let memo else {
            return ResponseMemo.response(notKept: body, heads: variant.skeletonHeads, variant: id, to: head, label: .skeleton)
        }
        return memo.keep(
            body, for: key, heads: variant.skeletonHeads, variant: id, request: head, label: .skeleton)
    }
}
