package fault

import (
	"strconv"
	"testing"
)

// grantCut finds the first command that sets the lock key in a master's
// replication stream (as redis-server 7 sends it), and nothing else:
// not a release, a renewal, or another key's SET.
func TestGrantCut(t *testing.T) {
	const key = "flashsale:lock:{p}"
	set := func(k string) string {
		return "*5\r\n$3\r\nSET\r\n$" + strconv.Itoa(len(k)) + "\r\n" + k + "\r\n$3\r\ntok\r\n$4\r\nPXAT\r\n$13\r\n1795644490420\r\n"
	}
	del := "*2\r\n$3\r\ndel\r\n$18\r\n" + key + "\r\n"
	renew := "*3\r\n$9\r\nPEXPIREAT\r\n$18\r\n" + key + "\r\n$13\r\n1795644483429\r\n"
	other := set("flashsale:dedupe:{p}:buyer-1")
	for _, c := range []struct {
		name, chunk string
		want        int
	}{
		{"nothing of the key", other + "*1\r\n$4\r\nPING\r\n", -1},
		{"a release and a renewal", del + renew, -1},
		{"lua's grant after a release", other + del + set(key), len(other + del)},
		{"fenced's grant in its script", del + "*1\r\n$5\r\nMULTI\r\n" + set(key) + "*2\r\n$4\r\nINCR\r\n$24\r\n" + key + ":fence\r\n*1\r\n$4\r\nEXEC\r\n", len(del + "*1\r\n$5\r\nMULTI\r\n")},
		{"naive's SETNX, lower case", del + "*3\r\n$5\r\nsetnx\r\n$18\r\n" + key + "\r\n$1\r\n1\r\n", len(del)},
		{"the key as another command's value", "*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$18\r\n" + key + "\r\n", -1},
	} {
		if got := grantCut(key)([]byte(c.chunk)); got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, got, c.want)
		}
	}
}
