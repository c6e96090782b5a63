#!/usr/bin/env bash
# patch: wasmpatch rewrites it (out/python.wasm), checked again.
#
# wasmpatch (adapters/wasm/internal/wasmpatch) rewrites the module for the
# host: interrupt checks at loop headers, mutable globals exported, data
# segments made passive (restored by codeport_init_data). Its output is what
# gets committed, so SHA256SUMS covers the patcher's version too.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

step patch
run_logged wasmpatch -in "$WORK_OUT/python-linked.wasm" -out "$WORK_OUT/python.wasm"
tail -n 1 "$STEP_LOG" | sed 's/^/    /'
check_module "$WORK_OUT/python.wasm" codeport_init_data
