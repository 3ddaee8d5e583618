// swift-tools-version:6.1
// The tutorial's shop as an iPhone app: open this folder in Xcode 16 or later (or Swift Playgrounds)
// and run it on a simulator while `taksi-server serve` runs in the shop's folder. See README.md.
import Foundation
import PackageDescription

// This repository, two folders up. A local package is named by its folder, which is whatever the
// clone or download was called (a ZIP from GitHub unpacks as taksi-server-main), so the name is
// read here rather than written.
let server = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

#if canImport(AppleProductTypes)
import AppleProductTypes

let products: [Product] = [
    .iOSApplication(
        name: "Shop",
        targets: ["ShopApp"],
        bundleIdentifier: "com.example.taksi.shop",
        displayVersion: "1.0.0",
        bundleVersion: "1",
        appIcon: .placeholder(icon: .bag),
        accentColor: .presetColor(.blue),
        supportedDeviceFamilies: [.phone, .pad],
        supportedInterfaceOrientations: [.portrait, .landscapeRight, .landscapeLeft]
    )
]
#else
// Elsewhere (Linux) there is no app to make; the repository's own package compiles these sources.
let products: [Product] = []
#endif

let package = Package(
    name: "ShopApp",
    platforms: [.iOS("17.0")],
    products: products,
    dependencies: [
        // The Taksi client, at the revision docs/client.md pins.
        .package(url: "https://github.com/taksi-br/taksi-swift", revision: "3159c19c7a96b5ae263c4df90fa4c91ef91dab41"),
        // This repository (whatever its folder is called): its TaksiServerClient library.
        .package(path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "ShopApp",
            dependencies: [
                .product(name: "Taksi", package: "taksi-swift"),
                .product(name: "TaksiServerClient", package: server.lastPathComponent),
            ],
            path: "Sources/ShopApp"
        )
    ]
)
