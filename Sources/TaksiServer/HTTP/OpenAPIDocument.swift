// Generated from docs/openapi.yaml by scripts/embed-openapi.sh; edit that file, then run the script.

/// The OpenAPI 3.1 description of the HTTP API, served at `GET /openapi.yaml`.
enum OpenAPIDocument {
    static let yaml = #"""
openapi: 3.1.0
info:
  title: taksi-server
  version: "1.0"
  summary: "Server-driven UI for Taksi clients: screen skeletons and their data."
  description: |
    A skeleton is a screen's layout with typed placeholders; its data fills the dynamic components.
    Screen names may contain `/` (for example `bikes/networks`): the `name` path parameter then
    spans several segments (`/screens/bikes/networks/data`). A screen whose name has parameters
    (`bikes/stations/{network}`) is requested with values in their place, each a percent-encoded
    segment (`/screens/bikes/stations/velib`); `GET /screens` lists each screen's parameters.
    Every `/screens` path is also served under `/interfaces`, the routes of the earlier Ruby server.
  license:
    name: Apache-2.0
servers:
  - url: http://localhost:8080
tags:
  - name: screens
  - name: operations
paths:
  /screens:
    get:
      tags: [screens]
      operationId: listScreens
      summary: Every screen with its variants and experiments.
      responses:
        "200":
          description: The index.
          headers:
            X-Request-Id: {$ref: "#/components/headers/X-Request-Id"}
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Index"}
  /screens/{name}:
    get:
      tags: [screens]
      operationId: getSkeleton
      summary: A screen's skeleton, for the variant the request selects.
      parameters:
        - $ref: "#/components/parameters/name"
        - $ref: "#/components/parameters/X-Taksi-Version"
        - $ref: "#/components/parameters/version"
        - $ref: "#/components/parameters/X-Taksi-Alternative"
        - $ref: "#/components/parameters/X-Taksi-User"
        - $ref: "#/components/parameters/Accept-Language"
        - $ref: "#/components/parameters/If-None-Match"
        - $ref: "#/components/parameters/Accept-Encoding"
        - $ref: "#/components/parameters/X-Request-Id"
      responses:
        "200":
          description: The skeleton. Public and cacheable; gzip when the client accepts it.
          headers:
            ETag: {$ref: "#/components/headers/ETag"}
            Cache-Control: {$ref: "#/components/headers/Cache-Control"}
            Vary: {$ref: "#/components/headers/Vary"}
            Content-Encoding: {$ref: "#/components/headers/Content-Encoding"}
            X-Taksi-Variant: {$ref: "#/components/headers/X-Taksi-Variant"}
            X-Taksi-Skeleton: {$ref: "#/components/headers/X-Taksi-Skeleton"}
            X-Taksi-Screens-Version: {$ref: "#/components/headers/X-Taksi-Screens-Version"}
            X-Request-Id: {$ref: "#/components/headers/X-Request-Id"}
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Skeleton"}
        "304": {$ref: "#/components/responses/NotModified"}
        "400": {$ref: "#/components/responses/BadRequest"}
        "404": {$ref: "#/components/responses/NotFound"}
        "405": {$ref: "#/components/responses/MethodNotAllowed"}
        "408": {$ref: "#/components/responses/BodyTimeout"}
        "413": {$ref: "#/components/responses/BodyTooLarge"}
        "414": {$ref: "#/components/responses/URITooLong"}
        "417": {$ref: "#/components/responses/ExpectationFailed"}
        "431": {$ref: "#/components/responses/HeadersTooLarge"}
        "501": {$ref: "#/components/responses/NotImplemented"}
        "505": {$ref: "#/components/responses/VersionNotSupported"}
  /screens/{name}/data:
    get:
      tags: [screens]
      operationId: getData
      summary: The data of a screen's dynamic components.
      description: |
        Query parameters feed the screen's `request` and `http` sources (their names and types are
        in the screen definition). A failing upstream source degrades only its components: the
        answer is still 200 and names the source in `X-Taksi-Degraded`. Data that is not degraded
        has a strong `ETag` of its bytes (and `If-None-Match` answers 304); data of 512 bytes or
        more that is kept (its inputs asked for a second time) has a gzip form.
      parameters:
        - $ref: "#/components/parameters/name"
        - $ref: "#/components/parameters/X-Taksi-Version"
        - $ref: "#/components/parameters/version"
        - $ref: "#/components/parameters/X-Taksi-Alternative"
        - $ref: "#/components/parameters/X-Taksi-User"
        - $ref: "#/components/parameters/X-Taksi-Skeleton"
        - $ref: "#/components/parameters/Accept-Language"
        - $ref: "#/components/parameters/If-None-Match"
        - $ref: "#/components/parameters/Accept-Encoding"
        - $ref: "#/components/parameters/X-Request-Id"
        - name: only
          in: query
          description: Identifiers of dynamic components, comma-separated; the answer has entries for those only and calls only the sources they read (pull to refresh one list).
          schema: {type: string}
        - name: parameters
          in: query
          description: The screen's own query parameters.
          style: form
          explode: true
          schema:
            type: object
            additionalProperties: {type: string}
      responses:
        "200":
          description: The data entries. Private.
          headers:
            Cache-Control: {$ref: "#/components/headers/Cache-Control"}
            Vary: {$ref: "#/components/headers/Vary"}
            X-Taksi-Variant: {$ref: "#/components/headers/X-Taksi-Variant"}
            X-Taksi-Skeleton: {$ref: "#/components/headers/X-Taksi-Skeleton"}
            X-Taksi-Screens-Version: {$ref: "#/components/headers/X-Taksi-Screens-Version"}
            X-Taksi-Degraded:
              description: The sources that failed, comma-separated; their components got their fallback or no entry.
              schema: {type: string}
            ETag: {$ref: "#/components/headers/ETag"}
            Content-Encoding: {$ref: "#/components/headers/Content-Encoding"}
            X-Request-Id: {$ref: "#/components/headers/X-Request-Id"}
          content:
            application/json:
              schema: {$ref: "#/components/schemas/InterfaceData"}
        "304": {$ref: "#/components/responses/NotModified"}
        "400": {$ref: "#/components/responses/BadRequest"}
        "404": {$ref: "#/components/responses/NotFound"}
        "405": {$ref: "#/components/responses/MethodNotAllowed"}
        "408": {$ref: "#/components/responses/BodyTimeout"}
        "412": {$ref: "#/components/responses/SkeletonOutdated"}
        "413": {$ref: "#/components/responses/BodyTooLarge"}
        "414": {$ref: "#/components/responses/URITooLong"}
        "417": {$ref: "#/components/responses/ExpectationFailed"}
        "431": {$ref: "#/components/responses/HeadersTooLarge"}
        "501": {$ref: "#/components/responses/NotImplemented"}
        "505": {$ref: "#/components/responses/VersionNotSupported"}
  /screens/{name}/actions/{action}:
    post:
      tags: [actions]
      operationId: runAction
      summary: Submits a screen's action; answers a data patch for the screen and the next action.
      description: |
        The inputs go as JSON (`{"inputs": {...}}`) or as a form. They are checked against the
        action's declarations (`GET /screens` lists each variant's actions and inputs; this document,
        as served, has an operation per action too). Invalid inputs answer 422 without calling
        anything. The answer always decodes as the client's data payload: `interface_data` names
        only dynamic components of the variant the request selects (send the same version,
        alternative and user headers as for the skeleton); `then`, when present, is an action in the
        client's shape. With `Idempotency-Key`, a retry of the same request within the window gets
        the first answer again (`Idempotent-Replayed: true`) and the upstream is called once.
      parameters:
        - $ref: "#/components/parameters/name"
        - name: action
          in: path
          required: true
          schema: {type: string, pattern: "^[A-Za-z0-9_]{1,64}$"}
        - $ref: "#/components/parameters/X-Taksi-Version"
        - $ref: "#/components/parameters/X-Taksi-Alternative"
        - $ref: "#/components/parameters/X-Taksi-User"
        - $ref: "#/components/parameters/X-Taksi-Skeleton"
        - $ref: "#/components/parameters/Accept-Language"
        - $ref: "#/components/parameters/Idempotency-Key"
        - $ref: "#/components/parameters/X-Request-Id"
      requestBody:
        required: false
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              properties:
                inputs: {type: object}
          application/x-www-form-urlencoded:
            schema: {type: object, additionalProperties: {type: string}}
      responses:
        "200": {$ref: "#/components/responses/ActionAnswer"}
        "201": {$ref: "#/components/responses/ActionAnswer"}
        "202": {$ref: "#/components/responses/ActionAnswer"}
        "400": {$ref: "#/components/responses/BadRequest"}
        "404": {$ref: "#/components/responses/NotFound"}
        "405": {$ref: "#/components/responses/MethodNotAllowed"}
        "412": {$ref: "#/components/responses/SkeletonOutdated"}
        "413": {$ref: "#/components/responses/BodyTooLarge"}
        "415": {$ref: "#/components/responses/UnsupportedMediaType"}
        "422": {$ref: "#/components/responses/ActionAnswer"}
        "4XX": {$ref: "#/components/responses/ActionAnswer"}
        "5XX": {$ref: "#/components/responses/ActionAnswer"}
  /healthz:
    get:
      tags: [operations]
      operationId: health
      summary: Liveness; answers while the process serves.
      responses:
        "200":
          description: Alive.
          content:
            application/json:
              schema:
                type: object
                required: [status, version]
                properties:
                  status: {const: ok}
                  version: {type: string, description: "The server's release, as `taksi-server --version` prints it."}
  /readyz:
    get:
      tags: [operations]
      operationId: ready
      summary: Readiness; 503 while the server drains for shutdown.
      responses:
        "200":
          description: A valid screen set is served.
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Readiness"}
        "503":
          description: Draining; send new requests elsewhere.
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Readiness"}
  /metrics:
    get:
      tags: [operations]
      operationId: metrics
      summary: Metrics in the Prometheus text format.
      responses:
        "200":
          description: Counters, gauges and histograms.
          content:
            text/plain:
              schema: {type: string}
  /links/resolve:
    get:
      tags: [screens]
      operationId: resolveLink
      summary: The navigation action a deep link opens, from the patterns of links.yaml.
      parameters:
        - name: url
          in: query
          required: true
          description: The link (universal link, custom scheme, notification URL), percent-encoded.
          schema: {type: string}
      responses:
        "200":
          description: "The client's navigation action: `{\"identifier\": \"navigation\", \"content\": {\"interface_identifier\": \"restaurants/la-table\"}}`. `Cache-Control: public, max-age=60`."
          content:
            application/json:
              schema: {$ref: "#/components/schemas/NavigationAction"}
        "400": {$ref: "#/components/responses/BadRequest"}
        "404": {$ref: "#/components/responses/NotFound"}
  /.well-known/apple-app-site-association:
    get:
      tags: [operations]
      operationId: appleAppSiteAssociation
      summary: "Apple's association file: the https links of links.yaml for the configured apps (404 when none is)."
      responses:
        "200":
          description: "The `applinks` details, `components` form. Exactly `application/json`, `Cache-Control: public, max-age=3600`."
          content:
            application/json:
              schema: {type: object, required: [applinks]}
        "404": {$ref: "#/components/responses/NotFound"}
  /.well-known/assetlinks.json:
    get:
      tags: [operations]
      operationId: assetLinks
      summary: "Google's Digital Asset Links statement for the configured Android app (404 when none is)."
      responses:
        "200":
          description: "One `delegate_permission/common.handle_all_urls` statement. Exactly `application/json`."
          content:
            application/json:
              schema: {type: array, items: {type: object, required: [relation, target]}}
        "404": {$ref: "#/components/responses/NotFound"}
  /openapi.yaml:
    get:
      tags: [operations]
      operationId: openAPI
      summary: This document.
      responses:
        "200":
          description: OpenAPI 3.1, YAML.
          content:
            application/yaml:
              schema: {type: object, required: [openapi, info, paths], description: "This document, parsed."}
  /preview:
    get:
      tags: [operations]
      operationId: preview
      summary: The live preview, a page for screen authors (404 unless the preview setting is on).
      description: >-
        Lists the screens; /preview/{name} shows one as an app receives it and redraws on every
        reload. The page's own files and endpoints (catalog.json, exchange.json, events.stream)
        serve the page and are not an API for apps. Off unless configured; never on in production.
      responses:
        "200":
          description: The page (self-contained HTML under a strict Content-Security-Policy).
          content:
            text/html:
              schema: {type: string}
        "404": {$ref: "#/components/responses/NotFound"}
components:
  parameters:
    name:
      name: name
      in: path
      required: true
      description: The screen's path, percent-encoded; may contain `/`, and holds values where the screen's name has parameters.
      schema: {type: string}
    X-Taksi-Version:
      name: X-Taksi-Version
      in: header
      description: The app's version (like 2.3.1); selects among versioned variants.
      schema: {type: string}
    version:
      name: version
      in: query
      description: The app's version, when the header cannot be sent.
      schema: {type: string}
    X-Taksi-Alternative:
      name: X-Taksi-Alternative
      in: header
      description: Asks for a named alternative.
      schema: {type: string}
    X-Taksi-Skeleton:
      name: X-Taksi-Skeleton
      in: header
      description: "The revision of the skeleton the app holds (its response's `X-Taksi-Skeleton`): data and action answers are made for it, from an earlier screen set when the screen changed since, or `412 skeleton_outdated`."
      schema: {type: string}
    X-Taksi-User:
      name: X-Taksi-User
      in: header
      description: An opaque user id; assigns the user to an experiment's alternative.
      schema: {type: string}
    Accept-Language:
      name: Accept-Language
      in: header
      description: "The user's languages, like `pt-BR,pt;q=0.9`; picks the locale of a screen with localized text, which answers with `Content-Language` and `Vary: Accept-Language`."
      schema: {type: string}
    If-None-Match:
      name: If-None-Match
      in: header
      description: ETags the client holds; a match answers 304.
      schema: {type: string}
    Accept-Encoding:
      name: Accept-Encoding
      in: header
      description: "`gzip` gets a gzip body where one was precomputed."
      schema: {type: string}
    Idempotency-Key:
      name: Idempotency-Key
      in: header
      description: A new value (a UUID) per submit, the same for its retries; 1 to 255 visible ASCII characters.
      schema: {type: string, maxLength: 255}
    X-Request-Id:
      name: X-Request-Id
      in: header
      description: Echoed when 1 to 128 visible ASCII characters; otherwise the server makes one.
      schema: {type: string, maxLength: 128}
  headers:
    X-Request-Id:
      description: The request's id, as logged.
      schema: {type: string}
    ETag:
      description: A strong validator of the body's bytes.
      schema: {type: string}
    Cache-Control:
      description: Public with max-age and stale-while-revalidate for skeletons; private for data.
      schema: {type: string}
    Vary:
      description: The request headers that chose this answer (for an error, the header it depends on).
      schema: {type: string}
    NoStore:
      description: "`no-store`: errors are never kept by shared caches."
      schema: {type: string, const: no-store}
    Content-Encoding:
      description: "`gzip` when the body is compressed."
      schema: {type: string}
    X-Taksi-Variant:
      description: The variant served, `name|version requirement|alternative`.
      schema: {type: string}
    X-Taksi-Screens-Version:
      description: A digest of the screen files the answer comes from.
      schema: {type: string}
    X-Taksi-Skeleton:
      description: "The skeleton's revision: what its data must match. Echo it on the skeleton's data requests and action submits."
      schema: {type: string}
  responses:
    SkeletonOutdated:
      description: "`skeleton_outdated`: the skeleton named by `X-Taksi-Skeleton` is no longer served; fetch the skeleton again with `Cache-Control: no-cache`, then its data."
      headers:
        Cache-Control: {$ref: "#/components/headers/NoStore"}
        Vary: {$ref: "#/components/headers/Vary"}
      content:
        application/json:
          schema: {$ref: "#/components/schemas/Error"}
    NotModified:
      description: The client's copy is current; no body.
      headers:
        ETag: {$ref: "#/components/headers/ETag"}
        Cache-Control: {$ref: "#/components/headers/Cache-Control"}
        Vary: {$ref: "#/components/headers/Vary"}
    BadRequest:
      description: "`invalid_query`, `missing_parameter`, `invalid_parameter` (a query or path parameter), `invalid_link`, `invalid_version`, `invalid_host`, `invalid_body` (an action's body), `invalid_idempotency_key`, `invalid_header` (a forwarded header that is not UTF-8) or `malformed_request`. Like every error, `Cache-Control: no-store`, and `Vary` names the request header it depends on."
      headers:
        Cache-Control: {$ref: "#/components/headers/NoStore"}
        Vary: {$ref: "#/components/headers/Vary"}
      content:
        application/json:
          schema: {$ref: "#/components/schemas/Error"}
    NotFound:
      description: "`screen_not_found`, `screen_version_not_found`, `screen_alternative_not_found`, `action_not_found`, `link_not_found` or `not_found`."
      headers:
        Cache-Control: {$ref: "#/components/headers/NoStore"}
        Vary: {$ref: "#/components/headers/Vary"}
      content:
        application/json:
          schema: {$ref: "#/components/schemas/Error"}
    MethodNotAllowed:
      description: "`method_not_allowed`: only GET and HEAD (and OPTIONS), or only POST (and OPTIONS) on an action."
      headers:
        Allow:
          schema: {enum: ["GET, HEAD, OPTIONS", "POST, OPTIONS"]}
      content:
        application/json:
          schema: {$ref: "#/components/schemas/Error"}
    ActionAnswer:
      description: |
        A data patch for the screen (the status is the declared answer's: 200 for success, 422 for
        invalid inputs or an upstream 4xx, 502 or 504 when the upstream failed, unless declared
        otherwise). A 422 with `code` `idempotency_key_reused` is an error body instead.
      headers:
        Cache-Control: {$ref: "#/components/headers/NoStore"}
        X-Taksi-Variant: {$ref: "#/components/headers/X-Taksi-Variant"}
        X-Taksi-Skeleton: {$ref: "#/components/headers/X-Taksi-Skeleton"}
        Idempotent-Replayed:
          description: "`true` when this is the kept answer of an earlier submit with the same Idempotency-Key."
          schema: {type: string, const: "true"}
      content:
        application/json:
          schema:
            oneOf:
              - {$ref: "#/components/schemas/ActionAnswer"}
              - {$ref: "#/components/schemas/Error"}
    UnsupportedMediaType:
      description: "`unsupported_media_type`: the body is neither JSON nor a form (or not UTF-8)."
      headers:
        Accept-Post:
          schema: {type: string, const: "application/json, application/x-www-form-urlencoded"}
      content:
        application/json:
          schema: {$ref: "#/components/schemas/Error"}
    BodyTimeout:
      description: "`body_timeout`: an announced request body did not arrive within `body_timeout`; the connection closes."
      content:
        application/json:
          schema: {$ref: "#/components/schemas/Error"}
    BodyTooLarge:
      description: "`body_too_large`: the request body is over `max_body_bytes` (64 KiB); it is not read, and the connection closes."
      content:
        application/json:
          schema: {$ref: "#/components/schemas/Error"}
    ExpectationFailed:
      description: "`expectation_failed`: an `Expect` other than `100-continue`."
      content:
        application/json:
          schema: {$ref: "#/components/schemas/Error"}
    NotImplemented:
      description: "`method_not_implemented`: a method this server does not know."
      headers:
        Allow:
          schema: {type: string, const: "GET, HEAD, OPTIONS"}
      content:
        application/json:
          schema: {$ref: "#/components/schemas/Error"}
    VersionNotSupported:
      description: "`http_version_not_supported`: HTTP/2 or later spoken in text; terminate HTTP/2 and 3 at a proxy."
      content:
        application/json:
          schema: {$ref: "#/components/schemas/Error"}
    URITooLong:
      description: "`uri_too_long`: the target is over 8 KiB; the connection closes."
      content:
        application/json:
          schema: {$ref: "#/components/schemas/Error"}
    HeadersTooLarge:
      description: "`headers_too_large`: the headers are over 16 KiB; the connection closes."
      content:
        application/json:
          schema: {$ref: "#/components/schemas/Error"}
  schemas:
    Error:
      type: object
      required: [error]
      additionalProperties: false
      properties:
        error:
          type: object
          required: [code, message]
          additionalProperties: false
          properties:
            code: {type: string, description: Stable; clients may branch on it.}
            message: {type: string, description: What went wrong and what to do.}
    Skeleton:
      type: object
      required: [components]
      properties:
        components:
          type: array
          items: {$ref: "#/components/schemas/Component"}
    Component:
      type: object
      required: [name, identifier, requires_data, content]
      properties:
        name: {type: string}
        identifier: {type: string}
        requires_data: {type: boolean}
        content: {type: object}
    InterfaceData:
      type: object
      required: [interface_data]
      additionalProperties: false
      properties:
        interface_data:
          type: array
          items:
            type: object
            required: [identifier, content]
            additionalProperties: false
            properties:
              identifier: {type: string}
              content: {type: object}
    ActionAnswer:
      type: object
      required: [interface_data, outcome]
      properties:
        interface_data:
          description: Entries for dynamic components of the variant, as in a data response; the client applies them.
          type: array
          items:
            type: object
            required: [identifier, content]
            additionalProperties: false
            properties:
              identifier: {type: string}
              content: {type: object}
        outcome: {enum: [success, invalid, rejected, failed, timeout]}
        then:
          description: The next action, in the client's action shape (decode it with the client's action decoder).
          type: object
          required: [identifier, content]
          properties:
            identifier: {type: string}
            content: {type: object}
        errors:
          description: Why the inputs were refused (422).
          type: array
          items:
            type: object
            required: [input, code, message]
            properties:
              input: {type: string}
              code: {enum: [required, invalid, unknown]}
              message: {type: string}
    Index:
      type: object
      required: [screens]
      properties:
        screens:
          type: array
          items:
            type: object
            required: [name, parameters, requires_data, variants, experiments]
            properties:
              name: {type: string, description: "As written, with parameters in braces: `bikes/stations/{network}`."}
              parameters:
                type: object
                description: The path parameters, by name.
                additionalProperties:
                  type: object
                  required: [type]
                  properties:
                    type: {enum: [string, integer, number, bool]}
                    one_of: {type: array}
                    pattern: {type: string}
                    min_length: {type: integer}
                    max_length: {type: integer}
              requires_data: {type: boolean}
              variants:
                type: array
                items:
                  type: object
                  required: [id, version, alternative, requires_data]
                  properties:
                    id: {type: string}
                    version: {type: [string, "null"]}
                    alternative: {type: string}
                    requires_data: {type: boolean}
                    actions:
                      type: array
                      items:
                        type: object
                        required: [name, inputs, answers]
                        properties:
                          name: {type: string}
                          summary: {type: string}
                          inputs: {type: object, description: "By name: type, constraints, required, default, message."}
                          answers: {type: array, items: {type: string}}
              experiments:
                type: array
                items:
                  type: object
                  required: [name, version, weights]
                  properties:
                    name: {type: string}
                    version: {type: [string, "null"]}
                    weights:
                      type: object
                      additionalProperties: {type: integer}
    NavigationAction:
      type: object
      required: [identifier, content]
      properties:
        identifier: {const: navigation}
        content:
          type: object
          required: [interface_identifier]
          properties:
            interface_identifier: {type: string, description: "A screen path, percent-encoded: append it to /screens/."}
    Readiness:
      type: object
      required: [status, screens_version, loaded_at, last_reload_at, pending_errors, revisions, earlier_sets]
      properties:
        status: {enum: [ready, draining]}
        screens_version: {type: string}
        loaded_at: {type: string, format: date-time}
        last_reload_at: {type: [string, "null"], format: date-time}
        pending_errors:
          type: array
          items: {type: string}
        revisions:
          description: Each variant's skeleton revision (X-Taksi-Skeleton), by variant id.
          type: object
          additionalProperties: {type: string}
        earlier_sets:
          description: Screen sets served before, kept for the skeletons cached from them.
          type: integer

"""#
}
