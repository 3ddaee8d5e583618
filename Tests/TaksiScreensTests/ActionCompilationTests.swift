import TaksiSchema
import TaksiScreens
import Testing

/// Actions declared in screen files: what compiles, and each mistake at its file, line and column.
@Suite("Action declarations")
struct ActionCompilationTests {
    /// A form with a label to patch, a button, and one action; `actions` replaces the action block.
    static func screen(actions: String) -> String {
        """
        name: form/{id}
        entry: true
        parameters: {id: {type: integer}}
        components:
          - {name: label_component, identifier: error, content: {value: " "}}
          - {name: text_field_component, identifier: email, content: {placeholder: Email}}
          - {name: button_component, identifier: send, content: {title: Send, action: {identifier: executable, content: {name: send}}}}
          - name: collection_component
            identifier: list
            content: {component_name: label_component, values: []}
        actions:
        \(actions)
        """
    }

    static func load(_ actions: String) -> ScreenSetLoad {
        ScreenSetLoader.load(
            files: ["form.yaml": Array(screen(actions: actions).utf8), "done.yaml": Array("name: done\nentry: true\ncomponents: []".utf8)],
            upstreams: ["api"]
        )
    }

    static let valid = """
              send:
                summary: Sends the email.
                inputs:
                  email: {type: string, required: true, max_length: 20, message: Enter an email.}
                  count: {type: integer, default: 1}
                call:
                  upstream: api
                  method: PUT
                  path: /forms/{id}/emails/{email}
                  query: {n: "{count}"}
                  body: {email: {$bind: inputs.email}, form: {$bind: path.id}}
                  headers: [Authorization]
                  timeout: 3
                answers:
                  success:
                    status: 201
                    then: {identifier: navigation, content: {interface_identifier: done}}
                    data:
                      - {identifier: error, content: {value: {$template: "Sent to {inputs.email}"}}}
                      - identifier: list
                        content: {values: {$each: response.items, as: item, template: {value: {$bind: item.name}}}}
                  "409": {data: [{identifier: error, content: {value: {$bind: response.message, default: Taken}}}]}
                  4xx: {data: [{identifier: error, content: {value: Refused}}]}
                  invalid: {data: [{identifier: error, content: {value: {$bind: errors.email, default: " "}}}]}
                  timeout: {data: [{identifier: error, content: {value: Too slow}}]}
                  failure: {then: {identifier: navigation, content: {interface_identifier: {$template: "form/{path.id}"}}}}
        """

    @Test("a complete action compiles: inputs in order, the call, every answer")
    func compiles() throws {
        let load = Self.load(Self.valid)
        #expect(!load.diagnostics.containsErrors, "\(load.diagnostics.report)")
        let screen = try #require(load.screenSet?.screens["form/{id}"]?.all.first)
        let action = try #require(screen.actions.first)
        #expect(action.name == "send")
        #expect(action.inputs.map(\.name) == ["email", "count"])
        #expect(action.inputs.first?.message == "Enter an email.")
        #expect(action.call?.method == .PUT)
        #expect(action.call?.request.forwardedHeaders == ["Authorization"])
        #expect(action.answers.keys.sorted().map(\.description) == ["success", "invalid", "409", "4xx", "timeout", "failure"])
        #expect(action.answers[.success]?.status == 201)
        #expect(action.answers[.success]?.patch.entries.map(\.identifier) == ["error", "list"])
    }

    /// Each mistake: the action block, and what the one error says (prefix `line:column: error: path:`).
    @Test(
        "each mistake is an error at its line and column, with the fix",
        arguments: [
            (
                "  send:\n    answers: {success: {data: [{identifier: eror, content: {value: x}}]}}",
                #"13:45: error: actions.send.answers.success.data[0].identifier: "eror" is not a component of this screen"#,
                #"(did you mean "error"?)"#
            ),
            (
                "  send:\n    answers: {success: {data: [{identifier: send, content: {value: x}}]}}",
                "13:45: error: actions.send.answers.success.data[0].identifier: \"send\" is a button_component, which takes no data", ""
            ),
            (
                "  send:\n    answers: {success: {data: [{identifier: error, content: {value: 3}}]}}",
                "13:69: error: actions.send.answers.success.data[0].content.value: expected a string, found number 3", ""
            ),
            (
                "  send:\n    answers: {success: {data: [{identifier: error, content: {kind: title}}]}}",
                "13:62: error: actions.send.answers.success.data[0].content.kind: \"kind\" is static", ""
            ),
            (
                "  send:\n    answers: {success: {data: [{identifier: error, content: {}}]}}",
                "13:61: error: actions.send.answers.success.data[0].content.value: required field \"value\" (string) is missing", ""
            ),
            (
                "  send:\n    answers: {success: {data: [{identifier: error, content: {value: {$bind: inputs.emial}}}]}}",
                "", ""  // a key the inputs do not have is not known at load for every input: see the next case for roots
            ),
            (
                "  send:\n    answers: {success: {data: [{identifier: error, content: {value: {$bind: imputs.email}}}]}}",
                "13:77: error: actions.send.answers.success.data[0].content.value.$bind: \"imputs\" is not a value the success answer of action send reads",
                #"(did you mean "inputs"?)"#
            ),
            (
                "  send:\n    inputs: {email: {}}\n    answers: {invalid: {data: [{identifier: error, content: {value: {$bind: response.message}}}]}}",
                "14:77: error: actions.send.answers.invalid.data[0].content.value.$bind: \"response\" is not a value the invalid answer of action send reads",
                ""
            ),
            (
                "  send:\n    answers: {success: {then: {identifier: navigation, content: {interface_identifier: dnoe}}}}",
                "13:88: error: actions.send.answers.success.then.content.interface_identifier: navigation target \"dnoe\" is not a screen",
                #"(did you mean "done"?)"#
            ),
            (
                "  send:\n    answers: {timeout: {data: []}}",
                "13:15: error: actions.send.answers.timeout: this action calls no upstream, so it never has a \"timeout\" outcome", ""
            ),
            (
                "  send:\n    answers: {sucess: {data: []}}",
                "13:15: error: actions.send.answers.sucess: \"sucess\" is not an outcome", #"(did you mean "success"?)"#
            ),
            (
                "  send:\n    call: {upstream: api, path: \"/x/{emial}\"}\n    inputs: {email: {}}\n    answers: {}",
                "13:33: error: actions.send.call.path: {emial} is not an input of this action or a parameter of the screen's path",
                #"(did you mean "email"?)"#
            ),
            (
                "  send:\n    call: {upstream: api, path: /x, method: post}\n    answers: {}",
                "13:45: error: actions.send.call.method: method \"post\" is not one a call makes", "(upper case)"
            ),
            (
                "  send:\n    call: {upstream: api, path: /x, method: GET, body: {}}\n    answers: {}",
                "13:56: error: actions.send.call.body: a GET sends no body", ""
            ),
            (
                "  send:\n    call: {upstream: apu, path: /x}\n    answers: {}",
                "13:22: error: actions.send.call.upstream: upstream \"apu\" is not configured", ""
            ),
            (
                "  send:\n    call: {upstream: api, path: /x, body: {a: {$bind: inputs.a}, b: {$bind: response.b}}}\n    answers: {}",
                "13:77: error: actions.send.call.body.b.$bind: \"response\" is not a value a call's body reads", ""
            ),
            (
                "  send:\n    inputs: {id: {}}\n    answers: {}",
                "13:14: error: actions.send.inputs.id: \"id\" is a path parameter of this screen", ""
            ),
            (
                "  send:\n    inputs: {email: {type: text}}\n    answers: {}",
                "13:28: error: actions.send.inputs.email.type: unknown parameter type \"text\"", ""
            ),
            (
                "  send:\n    answers: {success: {status: 204}}",
                "13:33: error: actions.send.answers.success.status: status is the HTTP status of the answer", ""
            ),
            (
                "  send:\n    answers: {success: {data: [{identifier: error, content: {value: a}}, {identifier: error, content: {value: b}}]}}",
                "13:87: error: actions.send.answers.success.data[1].identifier: \"error\" is already patched", ""
            ),
            (
                "  send:\n    answers: {}\n  send:\n    answers: {}",
                "12:3: error: duplicate key \"send\"", ""
            ),
            (
                "  send-it:\n    answers: {}",
                "12:3: error: actions.send-it: an action's name is 1 to 64 letters, digits and '_'", ""
            ),
        ]
    )
    func mistakes(actions: String, expected: String, hint: String) throws {
        let load = Self.load(actions)
        if expected.isEmpty {
            // Keys inside a source are read at request time, like every binding's.
            #expect(!load.diagnostics.containsErrors, "\(load.diagnostics.report)")
            return
        }
        let error = try #require(onlyError(load))
        #expect(error.description.hasPrefix("Screens/form.yaml:" + expected), "\(error.description)")
        #expect(hint.isEmpty || error.description.contains(hint), "\(error.description)")
    }

    @Test("inputs convert like parameters; missing, mistyped, too long, blank and undeclared inputs are field errors")
    func validation() throws {
        let load = Self.load(Self.valid)
        let action = try #require(load.screenSet?.screens["form/{id}"]?.all.first?.actions.first)
        let ok = action.validate(.form(["email": "ada@example.com", "count": "3"]))
        #expect(ok.errors.isEmpty)
        #expect(ok.values == ["email": "ada@example.com", "count": 3])
        #expect(action.validate(.json(["email": "a@b.c", "count": 2])).values == ["email": "a@b.c", "count": 2])
        // Text that converts is taken from JSON too: apps send a field's text as it is.
        #expect(action.validate(.json(["email": "a@b.c", "count": "2"])).values["count"] == 2)
        #expect(action.validate(.form(["email": "a@b.c"])).values["count"] == 1, "the default")
        #expect(action.validate(.form(["email": "a@b.c", "count": ""])).values["count"] == 1, "a blank field is left out")

        func errors(_ submitted: ScreenAction.Submitted) -> [String] {
            action.validate(submitted).errors.map { "\($0.input) \($0.code): \($0.message)" }
        }
        #expect(errors(.form([:])) == ["email required: Enter an email."])
        #expect(errors(.form(["email": ""])) == ["email required: Enter an email."])
        #expect(errors(.form(["email": String(repeating: "a", count: 21)])) == ["email invalid: Enter an email."])
        #expect(errors(.json(["email": 3])) == ["email invalid: Enter an email."])
        #expect(errors(.form(["email": "a", "count": "two"])) == ["count invalid: count must be an integer"])
        #expect(errors(.json(["email": "a", "count": 1.5])) == ["count invalid: count must be an integer"])
        // An input the action does not declare is ignored (an app newer than the screens), and named.
        let extra = action.validate(.form(["email": "ada@example.com", "theme": "dark", "emial": "b"]))
        #expect(extra.errors.isEmpty)
        #expect(extra.values == ["email": "ada@example.com", "count": 1])
        #expect(extra.ignored == ["emial", "theme"])
    }

    @Test("answers: the declared one for the outcome, most specific first, with the defaults' statuses")
    func answers() throws {
        let load = Self.load(Self.valid)
        let action = try #require(load.screenSet?.screens["form/{id}"]?.all.first?.actions.first)
        let catalog = try #require(load.screenSet?.catalog)
        func answer(_ result: ScreenAction.Result) -> (Int, JSONValue) {
            let (status, body, _) = action.answer(to: result, inputs: ["email": "ada@example.com"], path: ["id": 7], catalog: catalog)
            return (status, body)
        }
        let success = answer(.answered(status: 200, body: ["items": [["name": "a"], ["name": "b"]]]))
        #expect(success.0 == 201)
        #expect(
            success.1 == [
                "outcome": "success", "then": ["identifier": "navigation", "content": ["interface_identifier": "done"]],
                "interface_data": [
                    ["identifier": "error", "content": ["value": "Sent to ada@example.com"]],
                    ["identifier": "list", "content": ["values": [["value": "a"], ["value": "b"]]]],
                ],
            ]
        )
        #expect(
            answer(.answered(status: 409, body: ["message": "In use"])).1["interface_data"] == [
                ["identifier": "error", "content": ["value": "In use"]]
            ])
        let conflict = answer(.answered(status: 409, body: nil))
        #expect(conflict.0 == 422)
        #expect(conflict.1["interface_data"] == [["identifier": "error", "content": ["value": "Taken"]]])
        #expect(conflict.1["outcome"] == "rejected")
        #expect(
            answer(.answered(status: 404, body: nil)).1["interface_data"] == [["identifier": "error", "content": ["value": "Refused"]]])
        let timeout = answer(.timedOut)
        #expect(timeout.0 == 504)
        #expect(timeout.1["interface_data"] == [["identifier": "error", "content": ["value": "Too slow"]]])
        let failed = answer(.answered(status: 503, body: nil))
        #expect(failed.0 == 502)
        #expect(
            failed.1 == [
                "outcome": "failed", "interface_data": [],
                "then": ["identifier": "navigation", "content": ["interface_identifier": "form/7"]],
            ])
        let invalid = answer(.invalid(action.validate(.form([:])).errors))
        #expect(invalid.0 == 422)
        #expect(invalid.1["interface_data"] == [["identifier": "error", "content": ["value": "Enter an email."]]])
        #expect(invalid.1["errors"] == [["input": "email", "code": "required", "message": "Enter an email."]])
        // An upstream answer without what the success patch binds: the entry is left out, the rest is sent.
        let partial = answer(.answered(status: 200, body: ["items": "not a list"]))
        #expect(partial.1["interface_data"] == [["identifier": "error", "content": ["value": "Sent to ada@example.com"]]])
    }
}
