#!/usr/bin/env bash
# Fuzzes the server's request parser with libFuzzer (and AddressSanitizer) for a while:
#   Tests/Fuzz/run.sh [seconds, default 60] [more libFuzzer flags]
# Built from the parser's one source file and the harness; starts from the corpus in
# Tests/Fuzz/corpus (new finds go to .build/fuzz/found, not into the repository). A crash stops it
# with the input saved as .build/fuzz/crash-*; run the binary on that file to see it again.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-60}"
shift || true
mkdir -p .build/fuzz/found
swiftc -O -parse-as-library -sanitize=fuzzer,address \
    Sources/TaksiServer/HTTP/Connection/HTTPRequestParser.swift Tests/Fuzz/RequestParserFuzz.swift \
    -o .build/fuzz/request-parser
.build/fuzz/request-parser -max_total_time="$seconds" -max_len=4096 -dict=Tests/Fuzz/http.dict \
    -artifact_prefix=.build/fuzz/ -print_final_stats=1 "$@" .build/fuzz/found Tests/Fuzz/corpus
