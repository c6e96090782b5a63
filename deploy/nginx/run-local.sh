#!/bin/sh
# Three codeport nodes and nginx in front of them, on this machine, with
# the shipped configuration as it is: nodes node-a, node-b and node-c on
# 127.0.0.1:8081-8083 (nodes.conf), the router on 127.0.0.1:8080
# (codeport.conf). Ctrl-C stops them all. From the repository root:
#
#   make build && deploy/nginx/run-local.sh
#   bin/codeport conformance --base-url http://127.0.0.1:8080
#
# Needs nginx (Debian: apt-get install nginx); CODEPORT_BIN names
# another codeport binary. Everything the run writes (logs, nginx's pid
# and temporary directories, the nodes' workspaces) goes to a temporary
# directory, removed at the end.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
bin=${CODEPORT_BIN:-$here/../../bin/codeport}
nginx=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}
[ -x "$bin" ] || { echo "run-local.sh: no codeport binary at $bin (make build)" >&2; exit 1; }
[ -x "$nginx" ] || { echo "run-local.sh: nginx is not installed (apt-get install nginx)" >&2; exit 1; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/codeport-nginx.XXXXXX")
pids=""
stop() {
	trap - EXIT INT TERM
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	wait
	rm -rf "$dir"
}
trap stop EXIT INT TERM

cp "$here/nginx.conf" "$here/codeport.conf" "$here/nodes.conf" "$dir/"
for n in a b c; do
	case $n in a) port=8081 ;; b) port=8082 ;; c) port=8083 ;; esac
	"$bin" serve --node-id "node-$n" --listen "127.0.0.1:$port" 2>"$dir/node-$n.log" &
	pids="$pids $!"
done
"$nginx" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" -g 'daemon off;' &
ngx=$!
pids="$pids $ngx"

echo "router on http://127.0.0.1:8080; nodes node-a, node-b, node-c on 127.0.0.1:8081-8083"
echo "logs in $dir; Ctrl-C stops everything"
# Runs until Ctrl-C or until nginx ends. A node may be killed meanwhile
# (kill -9 the codeport serve --node-id node-b, say) to see its sessions
# answered 503 backend_unreachable and new ones go to the other two.
wait "$ngx"
