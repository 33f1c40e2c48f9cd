package zklock

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Where things live, under the Locker's root:
//
//	root/epoch                                the ensemble's mark (epoch.go)
//	root/locks/<key>/_c_<id>-lock-0000000042  a queue node; <key>/ is a container
//
// "_c_" and <id> (a fresh UUID) are Curator's protected create; the
// ensemble appends the ten digits that order the queue.

const (
	protected = "_c_"
	lockWord  = "-lock-"
	seqDigits = 10
)

func (m *Locker) epochPath() string     { return m.root + "/epoch" }
func (m *Locker) dir(key string) string { return m.root + "/locks/" + escapeKey(key) }

// escapeKey makes key one znode name, the same for the same key and
// different for different keys: '%', '/' and every byte outside printable
// ASCII become %XX (a znode name may not hold '/', and the ensemble
// refuses some unicode), and the names ZooKeeper reserves ("", ".", "..")
// are escaped whole.
func escapeKey(key string) string {
	switch key {
	case "":
		return "%"
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c == '%' || c == '/' || c < 0x21 || c > 0x7e {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// nodePrefix is what an acquisition with id asks the ensemble to create:
// the ensemble appends the sequence number.
func nodePrefix(dir, id string) string { return dir + "/" + protected + id + lockWord }

// queued is one node of a queue, as its name says.
type queued struct {
	name string
	id   string // the acquisition's id
	seq  int64
}

// parseNode reads a queue node's name; false for a name that is not one
// (a node something else put there, which the queue ignores).
func parseNode(name string) (queued, bool) {
	rest, ok := strings.CutPrefix(name, protected)
	if !ok || len(rest) < len(lockWord)+seqDigits {
		return queued{}, false
	}
	id, digits, ok := strings.Cut(rest, lockWord)
	if !ok || len(digits) != seqDigits {
		return queued{}, false
	}
	seq, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return queued{}, false
	}
	return queued{name: name, id: id, seq: seq}, true
}

// queue returns the queue nodes among names, in queue order.
func queue(names []string) []queued {
	var q []queued
	for _, n := range names {
		if node, ok := parseNode(n); ok {
			q = append(q, node)
		}
	}
	slices.SortFunc(q, func(a, b queued) int { return cmp.Compare(a.seq, b.seq) })
	return q
}

// base returns the last element of a znode path.
func base(path string) string { return path[strings.LastIndexByte(path, '/')+1:] }
