public import TaksiSchema

/// The values a data request gives its plan, one slot for each parameter the plan reads (see
/// ``DataPlan/RequestSlots``): what a data response is rendered from and kept by. Read from the
/// request with no table of names made (``DataPlan/readRequest(parameter:path:)``).
public struct RequestValues: Hashable, Sendable {
    /// Each slot's value, in the plan's slots' order; nil where the request has no value and the
    /// parameter no default.
    public var values: [JSONValue?]
}

extension DataPlan {
    /// Where each value a data request gives the plan goes: one slot for each query parameter of
    /// the plan's `request` sources and each path parameter of its `path` source, in the sources'
    /// sorted order and, within a source, the parameters'. Made once with the plan.
    public struct RequestSlots: Sendable {
        struct Slot: Sendable {
            var source: String
            var name: String
            var parameter: RequestParameter
            /// A path parameter: its value comes typed from the route, not from the query.
            var isPath: Bool
        }

        let slots: [Slot]
        /// The `request` and `path` sources, sorted: each is an object of its parameters' values,
        /// even one that declares none.
        let sources: [String]

        init(sources: [String: SourceDefinition]) {
            var slots: [Slot] = []
            var names: [String] = []
            for (source, definition) in sources.sorted(by: { $0.key < $1.key }) {
                switch definition {
                case .request(let parameters), .path(let parameters):
                    names.append(source)
                    let isPath = if case .path = definition { true } else { false }
                    for (name, parameter) in parameters.sorted(by: { $0.key < $1.key }) {
                        slots.append(Slot(source: source, name: name, parameter: parameter, isPath: isPath))
                    }
                case .fixture, .http:
                    continue
                }
            }
            self.slots = slots
            self.sources = names
        }

        /// The slot of `path`'s first step (`query.name`'s); nil when the path reads no single
        /// parameter (a whole source, another source).
        func slot(of path: ValuePath) -> Int? {
            guard case .key(let name)? = path.steps.segments.first else { return nil }
            return slots.firstIndex { $0.name == name && $0.source == path.root }
        }

        /// The value of the request or path source `source` as a screen's expressions read it: an
        /// object of its parameters that have a value (`{"name": "Ada"}`); nil for another source.
        func value(of source: String, in request: RequestValues) -> JSONValue? {
            guard sources.contains(source) else { return nil }
            var object: [String: JSONValue] = [:]
            for (slot, value) in zip(slots, request.values) where slot.source == source {
                if let value { object[slot.name] = value }
            }
            return .object(object)
        }

        /// Every request and path source's value by name (``value(of:in:)``).
        func sourceValues(_ request: RequestValues) -> [String: JSONValue] {
            Dictionary(uniqueKeysWithValues: sources.map { ($0, value(of: $0, in: request) ?? .object([:])) })
        }
    }

    /// The request's values in the plan's slots: each query parameter read by `parameter` (its
    /// text, decoded, or nil) and converted to its kind or given its default, each path parameter
    /// from `path` (typed by the route, ``ScreenPattern/values(_:)``).
    /// - Throws: ``DataRequestError`` for the first parameter, in the sources' and parameters'
    ///   sorted order, that is missing or does not convert.
    public func readRequest(
        parameter query: (String) -> String?, path: [String: JSONValue] = [:]
    ) throws(DataRequestError) -> RequestValues {
        let slots = requestSlots.slots
        var values: [JSONValue?] = []
        values.reserveCapacity(slots.count)
        // By index: only what reading a slot needs is copied (its parameter), not the whole slot.
        for index in slots.indices {
            if slots[index].isPath {
                values.append(path[slots[index].name])
            } else {
                values.append(try Self.read(slots[index].name, slots[index].parameter, query: query))
            }
        }
        return RequestValues(values: values)
    }

    /// The values of the plan's request-dependent sources, by source name, as its expressions
    /// read them: a request source's query parameters (or defaults) as an object, the path
    /// source's path parameters.
    public func sourceValues(of request: RequestValues) -> [String: JSONValue] {
        requestSlots.sourceValues(request)
    }
}

/// Where an expression's paths are looked up when it is written as text
/// (``ContentExpression/writeText(in:into:)``): a table of values by source name, or one data
/// request's slots beside its plan's other sources (``PlanValues``).
protocol ValueLookup {
    /// The value at `path`, or why it is missing, as ``ContentExpression/resolve(_:in:)`` says it.
    func resolve(_ path: ValuePath) -> Result<JSONValue, ContentExpression.LookupFailure>
    /// Every source's value by name, for an expression evaluated whole.
    var sourceValues: [String: JSONValue] { get }
}

extension Dictionary: ValueLookup where Key == String, Value == JSONValue {
    func resolve(_ path: ValuePath) -> Result<JSONValue, ContentExpression.LookupFailure> {
        ContentExpression.resolve(path, in: self)
    }

    var sourceValues: [String: JSONValue] { self }
}

/// One data request's values as a plan's expressions read them: a parameter from its slot, any
/// other source from `named` (fixtures, upstream answers). A path that reads a parameter the
/// request left without a value, or a request source whole, is walked from that source's object
/// (made then), so a missing value is explained as it always is.
struct PlanValues: ValueLookup {
    let slots: DataPlan.RequestSlots
    let request: RequestValues
    /// The other sources' values by name.
    let named: [String: JSONValue]

    func resolve(_ path: ValuePath) -> Result<JSONValue, ContentExpression.LookupFailure> {
        if let slot = slots.slot(of: path), let value = request.values[slot] {
            return ContentExpression.walk(path, from: value, at: 1)
        }
        if let source = slots.value(of: path.root, in: request) { return ContentExpression.walk(path, from: source, at: 0) }
        return ContentExpression.resolve(path, in: named)
    }

    var sourceValues: [String: JSONValue] {
        named.merging(slots.sourceValues(request)) { _, request in request }
    }
}
