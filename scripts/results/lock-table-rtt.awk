# Reads two of cmd/locktable's reports (loopback first, then with --rtt) and
# writes their tables side by side, for lock-table-rtt.sh. It reads the
# tables by their headings: "## Independent keys", "## One hot key" and
# "## Ratios to single Redis".
function trim(s) { gsub(/^ +| +$/, "", s); return s }
FNR == 1 { run++ }
/^Network: / && match($0, /One round trip \(.*\): [^ ]+ [^ .]+/) {
	trip[run] = substr($0, RSTART, RLENGTH); sub(/.*: /, "", trip[run])
}
/^## / {
	sect = ""
	if ($0 ~ /^## Independent keys/) sect = "indep"
	if ($0 ~ /^## One hot key/) sect = "hot"
	if ($0 ~ /^## Ratios to single Redis/) sect = "ratio"
	next
}
sect != "" && /^\| / {
	n = split($0, f, "|")
	for (i = 2; i < n; i++) f[i] = trim(f[i])
	if (f[2] == "system" || f[2] ~ /^---/) {
		if (sect == "ratio" && f[2] == "system" && run == 1)
			for (i = 4; i < n; i++) ratioCase[i - 3] = f[i]
		if (sect == "ratio") ratioCases = n - 4
		next
	}
	s = f[2]
	if (sect == "indep") {
		if (run == 1) { systems[++nsys] = s; claimedTPS[s] = f[3] }
		ops[run, s, "indep"] = f[5]; p50[run, s, "indep"] = f[7]
	}
	if (sect == "hot") {
		if (run == 1 && !(f[3] in seenHot)) { seenHot[f[3]] = 1; hot[++nhot] = f[3] }
		ops[run, s, f[3]] = f[4]; p50[run, s, f[3]] = f[6]
	}
	if (sect == "ratio") {
		claimedRatio[s] = f[3]
		for (i = 4; i < n; i++) ratio[run, s, i - 3] = f[i]
	}
}
END {
	if (trip[1] != "" && trip[2] != "") {
		print "One round trip, timed before each run (the median of PINGs to the first Redis node): loopback " trip[1] ", rtt " rtt " " trip[2] "."
		print ""
	}
	print "### ops/s"
	print ""
	head = "| system | claimed TPS | independent keys: loopback | rtt " rtt
	sep = "|---|---:|---:|---:"
	for (h = 1; h <= nhot; h++) {
		head = head " | one hot key, " hot[h] ": loopback | rtt " rtt
		sep = sep "|---:|---:"
	}
	print head " |"; print sep "|"
	for (i = 1; i <= nsys; i++) {
		s = systems[i]; line = "| " s " | " claimedTPS[s] " | " ops[1, s, "indep"] " | " ops[2, s, "indep"]
		for (h = 1; h <= nhot; h++) line = line " | " ops[1, s, hot[h]] " | " ops[2, s, hot[h]]
		print line " |"
	}
	print ""
	print "### Ratio to single Redis (how many times single Redis's ops/s each system's is)"
	print ""
	head = "| system | claimed"; sep = "|---|---:"
	for (c = 1; c <= ratioCases; c++) {
		head = head " | " ratioCase[c] ": loopback | rtt " rtt
		sep = sep "|---:|---:"
	}
	print head " |"; print sep "|"
	for (i = 2; i <= nsys; i++) {
		s = systems[i]; line = "| " s " | " claimedRatio[s]
		for (c = 1; c <= ratioCases; c++) line = line " | " ratio[1, s, c] " | " ratio[2, s, c]
		print line " |"
	}
	print ""
	print "### One cycle alone: p50 with one hot key and one contender"
	print ""
	print "Nobody waits for anybody: the cycle's time is its own round trips and the servers' work."
	print ""
	print "| system | loopback | rtt " rtt " | independent keys, p50: loopback | rtt " rtt " |"
	print "|---|---:|---:|---:|---:|"
	for (i = 1; i <= nsys; i++) {
		s = systems[i]
		print "| " s " | " p50[1, s, hot[1]] " | " p50[2, s, hot[1]] " | " p50[1, s, "indep"] " | " p50[2, s, "indep"] " |"
	}
	print ""
}
