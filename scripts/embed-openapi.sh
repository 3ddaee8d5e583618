#!/usr/bin/env bash
# Embeds docs/openapi.yaml (the source of truth) in the server, which serves it at /openapi.yaml.
# Run after editing the document; a test fails while the two differ.
set -euo pipefail
cd "$(dirname "$0")/.."
{
    echo '// Generated from docs/openapi.yaml by scripts/embed-openapi.sh; edit that file, then run the script.'
    echo
    echo '/// The OpenAPI 3.1 description of the HTTP API, served at `GET /openapi.yaml`.'
    echo 'enum OpenAPIDocument {'
    echo '    static let yaml = #"""'
    cat docs/openapi.yaml
    echo
    echo '"""#'
    echo '}'
} >Sources/TaksiServer/HTTP/OpenAPIDocument.swift
