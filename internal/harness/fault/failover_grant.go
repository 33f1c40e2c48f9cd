package fault

import (
	"bytes"
	"strconv"

	"github.com/flashsale/flashsale/internal/faultproxy"
)

// grantCut finds a grant of the lock key in a chunk of what a master sends
// its replica, for the link to be held right there (faultproxy.HoldAt):
// the first command that sets the key. The replica then has everything up
// to the grant, the last holder's release too, and nothing from the grant
// on: its lock is free, as on the master a moment before.
//
// Only a grant sets the lock key: lua's and fenced's SET NX reach the
// replica as a SET (fenced's inside the MULTI ... EXEC of its script),
// naive's as a SETNX; a renewal is a PEXPIREAT, a release a DEL. The
// stream is RESP: "*3\r\n$5\r\nSETNX\r\n$<n>\r\n<key>\r\n...". The cut
// returns the index of the command's first byte, or -1.
//
// Holding the link earlier and waiting for the next grant would not do:
// under load the lock goes from one holder to the next within well under
// a millisecond, so the last holder's release would be held back with the
// grant, and the promoted replica would keep the last holder's key, unable
// to grant the lock again until that key's TTL ran out. Nor can a reader
// hold the link between the release and the grant by watching the master:
// no reader reacts within that fraction of a millisecond every time.
func grantCut(key string) faultproxy.Cut {
	arg := []byte("$" + strconv.Itoa(len(key)) + "\r\n" + key + "\r\n")
	return func(b []byte) int {
		for from := 0; ; {
			i := bytes.Index(b[from:], arg)
			if i < 0 {
				return -1
			}
			i += from
			if start := setStart(b[:i]); start >= 0 {
				return start
			}
			from = i + 1
		}
	}
}

// setStart returns the index where a SET or SETNX command begins if b ends
// with its header and name ("*<n>\r\n$3\r\nSET\r\n"), else -1.
func setStart(b []byte) int {
	for _, name := range []string{"$3\r\nSET\r\n", "$5\r\nSETNX\r\n"} {
		if len(b) < len(name) || !bytes.EqualFold(b[len(b)-len(name):], []byte(name)) {
			continue
		}
		head := b[:len(b)-len(name)]
		j := bytes.LastIndexByte(head, '*')
		if j < 0 || !bytes.HasSuffix(head, []byte("\r\n")) {
			continue
		}
		if _, err := strconv.Atoi(string(head[j+1 : len(head)-2])); err == nil {
			return j
		}
	}
	return -1
}
