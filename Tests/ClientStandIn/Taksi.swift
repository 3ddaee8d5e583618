// A stand-in for the public API of the Taksi client (taksi-br/taksi-swift at 3159c19, the
// revision docs/client.md pins), written from its published declarations so that the code
// docs/client.md gives app teams compiles in this repository's CI. Only what that code uses is
// declared, with the same names, generic shapes, optionality and class-ness; nothing behaves like the
// client (the bodies do the least that type-checks), and none of the client's code is copied.
// Views are SwiftUI views: on Linux, which has no SwiftUI, the stand-in of Tests/SwiftUIStandIn.

@_exported import Foundation
public import SwiftUI

#if canImport(FoundationNetworking)
// URLSession lives here on Linux; on iOS it is part of Foundation.
@_exported import FoundationNetworking
#endif

/// `TaksiAPIClient`: how the client fetches a skeleton and its data; the app implements it.
public protocol TaksiAPIClient {
    func fetchInterface(for path: String) async -> Interface?
    func fetchInterfaceData(for path: String, using decoder: JSONDecoder) async -> InterfaceData?
}

/// `TaksiService`: an open class over an API client.
open class TaksiService {
    private let apiClient: any TaksiAPIClient

    public init(apiClient: any TaksiAPIClient) {
        self.apiClient = apiClient
    }

    open func fetchInitialComponents(for path: String) async -> [any Component]? {
        await apiClient.fetchInterface(for: path)?.components.map(\.component)
    }

    open func updateDynamicComponentsData(for components: [any Component], fetching path: String) async -> [any Component]? {
        _ = await apiClient.fetchInterfaceData(for: path, using: JSONDecoder())
        return components
    }
}

/// A skeleton: `{"components": [...]}`.
public struct Interface: Decodable {
    public let components: [AnyComponent]
}

/// A data payload: `{"interface_data": [...]}`.
public struct InterfaceData: Decodable {
    public let values: [ComponentData]

    private enum CodingKeys: String, CodingKey {
        case values = "interface_data"
    }
}

/// One data entry.
public struct ComponentData: Decodable {}

/// A decoded component of any type.
public final class AnyComponent: Decodable {
    public let component: any Component

    public init(component: any Component) {
        self.component = component
    }

    public required init(from decoder: any Decoder) throws {
        throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "stand-in"))
    }
}

/// What a view of a component is: a SwiftUI view (or a UIKit one), which `asView()` wraps.
public protocol ViewRepresentable {}

extension ViewRepresentable {
    public func asView() -> AnyView? {
        guard let view = self as? any View else { return nil }
        return AnyView(view)
    }
}

public protocol ComponentContent: AnyObject {}

public protocol Component: AnyObject {
    associatedtype Content: ComponentContent
    associatedtype View: ViewRepresentable
    var identifier: String { get }
    var requiresData: Bool { get set }
    var content: Content { get }
    func view(onAction: @escaping (any Action) -> Void) -> View?
}

open class BaseComponent<Content: ComponentContent, View: ViewRepresentable>: Component {
    public let identifier: String
    public var requiresData: Bool
    public var content: Content

    public init(identifier: String, requiresData: Bool, content: Content) {
        self.identifier = identifier
        self.requiresData = requiresData
        self.content = content
    }

    open func view(onAction: @escaping (any Action) -> Void) -> View? { nil }
}

/// A component decoded from its JSON object (`identifier`, `requires_data`, `content`).
public protocol DecodableComponent: Component, Decodable where Content: Decodable {}

/// The base class of the app's own components: decodes the component object, `Content` from its `content`.
open class DecodableBaseComponent<Content: ComponentContent & Decodable, View: ViewRepresentable>: BaseComponent<Content, View>,
    DecodableComponent
{
    public required init(from decoder: any Decoder) throws {
        throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "stand-in"))
    }
}

/// A component whose content the data request updates.
public protocol DynamicComponent: Component where Content: DynamicComponentContent {
    var content: Content { get set }
}

/// A content with dynamic fields: `DynamicData` decodes a data entry's `content`.
public protocol DynamicComponentContent: ComponentContent {
    associatedtype DynamicData: DynamicComponentData
    var dynamicData: DynamicData { get set }
    func update(using dynamicData: DynamicData)
}

public protocol DynamicComponentData: Decodable {}

/// The built-in text field, generic over its view as in the client.
public class TextFieldComponent<ComponentView: ViewRepresentable>: BaseComponent<TextFieldComponent.Content, ComponentView> {
    public final class Content: ComponentContent {
        public let placeholder: String
        public let isSecure: Bool
        /// What the user typed (`@Published` in the client).
        public var text: String = ""

        public init(placeholder: String, isSecure: Bool) {
            self.placeholder = placeholder
            self.isSecure = isSecure
        }
    }
}

/// The client's text field view.
public struct TextFieldComponentView: View, ViewRepresentable {
    public var body: some View { EmptyView() }
}

/// An action: a class-bound protocol.
public protocol Action: AnyObject {}

/// A decoded action of any identifier.
public final class AnyAction: Decodable {
    public let action: any Action

    public init(action: any Action) {
        self.action = action
    }

    public required init(from decoder: any Decoder) throws {
        throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "stand-in"))
    }
}

/// `executable`: an app-side action by name.
open class ExecutableAction: Action {
    public let name: String

    public init(name: String) {
        self.name = name
    }
}

/// `navigation`: the app's feature answers it with a view.
public protocol NavigationAction: Action {
    func view() -> any ViewRepresentable
}

/// An app's own action, decoded from the action's `content`.
public protocol DecodableAction: Action, Decodable {}

/// What an app registers: its components and actions by name.
public protocol FeatureProtocol {
    func action(from decoder: any Decoder, withIdentifier identifier: String) -> (any Action)?
    func component(from decoder: any Decoder, withName name: String) -> (any Component)?
}

/// A feature that also answers navigation targets.
public protocol NavigableFeatureProtocol: FeatureProtocol {
    func navigationAction(from decoder: any Decoder, withInterfaceIdentifier interfaceIdentifier: String) -> (any NavigationAction)?
}

/// Installs the features the decoders use; keep it alive.
public final class FeatureBuilder {
    private let features: [any FeatureProtocol]

    public init(features: [any FeatureProtocol]) {
        self.features = features
    }
}
