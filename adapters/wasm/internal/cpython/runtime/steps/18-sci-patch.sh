#!/usr/bin/env bash
# sci-patch: wasmpatch rewrites it (out/python-scientific.wasm).
#
# wasmpatch on the scientific reactor, as the patch step on the default one
# (it also adds a dispatcher for each env.invoke_* import of the exception
# lowering).
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=sci-lib.sh
. "$HERE/steps/sci-lib.sh"

step sci-patch
run_logged wasmpatch -in "$WORK_OUT/python-scientific-linked.wasm" -out "$WORK_OUT/python-scientific.wasm"
tail -n 1 "$STEP_LOG" | sed 's/^/    /'
check_module "$WORK_OUT/python-scientific.wasm" codeport_init_data
