#!/usr/bin/env bash
# Prints the sizes of the crate built without `std`, to compare across changes:
#
# * the release `.wasm` of tests/wasm-host: the Core endpoint with its C ABI for a
#   JavaScript host (opt-level "z", LTO, panic = "abort", stripped), as built and
#   in gzip -9;
# * tests/nostd-size: two bare-metal programs for thumbv7em-none-eabihf (Cortex-M4F),
#   one driving the Core and one the Extension endpoint, linked with a bump
#   allocator and a looping panic handler (same profile). "flash" is what the image
#   needs in ROM: .text + .rodata + .ARM.exidx + .data; the 64 KiB of .bss is the
#   allocator's arena, not the crate.
#
# Run from anywhere: tests/wasm-host/sizes.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo build --quiet --release --target wasm32-unknown-unknown \
  --manifest-path tests/wasm-host/Cargo.toml --target-dir target/wasm-host
cargo build --quiet --release --target thumbv7em-none-eabihf \
  --manifest-path tests/nostd-size/Cargo.toml --target-dir target/nostd-size

wasm=target/wasm-host/wasm32-unknown-unknown/release/dhara_wasm_host.wasm
printf '%-46s %8s bytes (gzip -9: %s bytes)\n' \
  "wasm32 Core module (tests/wasm-host)" \
  "$(wc -c <"$wasm")" "$(gzip -9c "$wasm" | wc -c)"

size_tool=$(command -v llvm-size || command -v size || true)
for program in core extension; do
  elf=target/nostd-size/thumbv7em-none-eabihf/release/$program
  if [ -z "$size_tool" ]; then
    printf '%-46s %8s bytes (ELF file; no llvm-size or size for sections)\n' \
      "thumbv7em $program program (tests/nostd-size)" "$(wc -c <"$elf")"
    continue
  fi
  # Berkeley format: text (.text, .rodata, .ARM.exidx), data, bss.
  read -r text data bss _ < <("$size_tool" "$elf" | tail -n 1)
  printf '%-46s %8s bytes flash (text %s + data %s; bss %s)\n' \
    "thumbv7em $program program (tests/nostd-size)" "$((text + data))" "$text" "$data" "$bss"
done
