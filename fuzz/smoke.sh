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
# libFuzzer prints a line per new input; keep each run's output in a log and show its
# final statistics, or the end of the log when the run fails.
logs=$(mktemp -d)
for target in "${targets[@]}"; do
    echo "smoke.sh: $target for ${seconds}s"
    log="$logs/$target.log"
    if ! cargo +nightly fuzz run --sanitizer none --debug-assertions "$target" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
        >"$log" 2>&1; then
        tail -n 80 "$log"
        echo "smoke.sh: $target failed; the input is in fuzz/artifacts/$target/"
        exit 1
    fi
    grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)|cov: .* ft: ' "$log" | tail -n 4
done
echo "smoke.sh: every target ran ${seconds}s without a finding"
