#!/usr/bin/env bash
# The fuzzing smoke run for CI: builds the fuzz crate on nightly and runs every target
# for a short while (30 s each by default; FUZZ_SECONDS overrides), starting from the
# corpora that seed.sh builds. Exits non-zero on the first target that finds a crash;
# libFuzzer then leaves the input in fuzz/artifacts/<target>/.
#
# Needs: rustup toolchain install nightly --profile minimal
#        cargo install cargo-fuzz --locked
set -euo pipefail

fuzz_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$(dirname "$fuzz_dir")"
seconds=${FUZZ_SECONDS:-30}
targets=(json_parse json_roundtrip frame_chunks rpc_decode core_session extension_session)

bash "$fuzz_dir/seed.sh"
# No sanitizer: the crate forbids unsafe code, and without one each target runs several
# times as many inputs. Debug assertions stay on, so the decoders check themselves too.
cargo +nightly fuzz build --sanitizer none --debug-assertions
for target in "${targets[@]}"; do
    echo "smoke.sh: $target for ${seconds}s"
    cargo +nightly fuzz run --sanitizer none --debug-assertions "$target" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1
done
echo "smoke.sh: every target ran ${seconds}s without a finding"
