#!/usr/bin/env bash
# Writes docs/live.png, the picture in docs/watching.md: the live page
# (loadgen --live) at the end of a sale of off, lua, sql-atomic and
# redis-decr on the embedded backends, in a headless Chromium 1,280 pixels
# wide. The browser opens the page as the sale starts; its virtual time
# (--virtual-time-budget) stands still while the page's event stream is
# open, so the picture is taken once the run has sent its last figures,
# those of report.json, and closed the stream. Writes no results file.
# Needs chromium; about half a minute on a 2-core machine.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
unset LOADGEN_MYSQL_DSN LOADGEN_REDIS LOADGEN_ETCD LOADGEN_REDIS_CLUSTER
png=docs/live.png
browser=$(results_browser)
if [ -z "$browser" ]; then
	echo "no chromium: $png left as it was" >&2
	exit 0
fi
go build -o "$results_work/loadgen" ./cmd/loadgen

"$results_work/loadgen" --live --strategies off,lua,sql-atomic,redis-decr \
	--out "$results_work/report" >"$results_work/stdout" &
loadgen=$!
url=
for _ in $(seq 600); do # the page's address, printed before the first row starts
	url=$(sed -n 's/^Live: \(http[^ ]*\).*/\1/p' "$results_work/stdout")
	[ -z "$url" ] && kill -0 "$loadgen" 2>/dev/null || break
	sleep 0.1
done
if [ -z "$url" ]; then
	kill "$loadgen" 2>/dev/null || true
	cat "$results_work/stdout" >&2
	echo "loadgen printed no Live: address; $png left as it was" >&2
	exit 1
fi
# Bounded: a browser that never takes the picture ends the script with its log.
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,1200 \
	--virtual-time-budget=3000 --enable-logging=stderr --screenshot="$results_work/live.png" "$url" \
	>"$results_work/chromium.log" 2>&1 || {
	rc=$?
	tail -n 20 "$results_work/chromium.log" >&2
	echo "chromium ended with $rc (124: still no picture after 120 s); $png left as it was" >&2
	wait "$loadgen" || true
	exit 1
}
wait "$loadgen" || {
	cat "$results_work/stdout" >&2
	exit 1
}
mv "$results_work/live.png" "$png"
echo "wrote $png" >&2
