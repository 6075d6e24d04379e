#!/usr/bin/env bash
# Builds the fuzzing corpora in fuzz/corpus/<target>/ (not committed) from:
#   - the committed seeds in fuzz/seeds/<target>/ (protocol traffic, written by hand);
#   - the conformance data in ../shared/conformance/ beside the crate, when present:
#     every JSONTestSuite parsing file, and each JSON-RPC 2.0 specification example.
# Safe to run again: files are named after their content, so nothing is duplicated.
set -euo pipefail

fuzz_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
crate_dir=$(dirname "$fuzz_dir")
conformance="$crate_dir/../shared/conformance"
targets=(json_parse json_roundtrip frame_chunks rpc_decode core_session extension_session)

# add <target> <file>: copies a file into a corpus under its content hash.
add() {
    local corpus="$fuzz_dir/corpus/$1"
    mkdir -p "$corpus"
    cp "$2" "$corpus/$(sha1sum "$2" | cut -c1-40)"
}

for target in "${targets[@]}"; do
    mkdir -p "$fuzz_dir/corpus/$target"
    for seed in "$fuzz_dir/seeds/$target"/*; do
        [ -f "$seed" ] && add "$target" "$seed"
    done
done

if [ ! -d "$conformance" ]; then
    echo "seed.sh: $conformance not found; corpora hold the committed seeds only" >&2
    exit 0
fi

suite="$conformance/JSONTestSuite/test_parsing"
if [ -d "$suite" ]; then
    for file in "$suite"/*.json; do
        add json_parse "$file"
        add rpc_decode "$file"
    done
fi

examples="$conformance/jsonrpc-2.0-examples.jsonl"
if [ -f "$examples" ]; then
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' EXIT
    # Each example line whole (a JSON object holding the request and response text),
    split -l 1 -d -a 3 "$examples" "$scratch/line-"
    for file in "$scratch"/line-*; do
        add rpc_decode "$file"
        add json_parse "$file"
    done
    # and the whole file as one stream for the line decoder, behind its 6 setting
    # bytes (default limit; chunks of up to 8 bytes), and with a small limit.
    { printf '\000\000\007\001\002\003'; cat "$examples"; } > "$scratch/stream-default"
    { printf '\002\200\037\011\010\007'; cat "$examples"; } > "$scratch/stream-small"
    add frame_chunks "$scratch/stream-default"
    add frame_chunks "$scratch/stream-small"
fi

for target in "${targets[@]}"; do
    echo "seed.sh: $target: $(find "$fuzz_dir/corpus/$target" -type f | wc -l) files"
done
