package zklock

import (
	"encoding/binary"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"testing"
	"time"
)

// TestFramesAnyPieces: frames finds every frame and its head, whatever
// pieces the stream arrives in.
func TestFramesAnyPieces(t *testing.T) {
	var stream []byte
	var want [][]byte
	for i, size := range []int{16, 0, 3, 40, 16, 17, 1000, 8} {
		body := make([]byte, size)
		for j := range body {
			body[j] = byte(i*31 + j)
		}
		stream = binary.BigEndian.AppendUint32(stream, uint32(size))
		stream = append(stream, body...)
		want = append(want, body[:min(size, 16)])
	}
	for try := range 200 {
		var f frames
		var got [][]byte
		rest := stream
		for len(rest) > 0 {
			n := 1 + rand.IntN(min(len(rest), 1+try%50))
			f.feed(rest[:n], func(i int, head []byte) {
				if i != len(got) {
					t.Fatalf("frame numbered %d, want %d", i, len(got))
				}
				got = append(got, slices.Clone(head))
			})
			rest = rest[n:]
		}
		if len(got) != len(want) {
			t.Fatalf("try %d: %d frames, want %d", try, len(got), len(want))
		}
		for i := range want {
			if !slices.Equal(got[i], want[i]) {
				t.Fatalf("try %d: frame %d's head %v, want %v", try, i, got[i], want[i])
			}
		}
	}
}

// TestWireConn: what a connection carries tells the tracker the session
// the ensemble granted, heard from when its connect request was sent, and
// then, for each answered request or ping, the time it was sent; watch
// events, requests never answered and answers to nothing move nothing.
// Until the connect answer, a read may wait no longer than the handshake
// allows.
func TestWireConn(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	spy := &deadlineSpy{Conn: client}
	tr := newTracker(300 * time.Millisecond)
	t.Cleanup(tr.close)
	w := tr.wrap(spy)
	defer w.Close()

	for _, asked := range []time.Time{{}, time.Now().Add(time.Hour)} {
		if err := w.SetReadDeadline(asked); err != nil || !spy.read.Equal(w.handshakeBy) {
			t.Errorf("read deadline %v asked during the handshake: set %v, want the handshake's %v", asked, spy.read, w.handshakeBy)
		}
	}
	sooner := time.Now().Add(time.Millisecond)
	if err := w.SetReadDeadline(sooner); err != nil || !spy.read.Equal(sooner) {
		t.Errorf("a deadline before the handshake's was changed to %v", spy.read)
	}

	sentConnect := send(t, w, server, frame(make([]byte, 44)))
	answer(t, w, server, frame(be32(0), be32(3000), be64(0xABC), be32(16), make([]byte, 16)))
	s := tr.current()
	if s == nil || s.id != 0xABC || s.timeout != 3*time.Second {
		t.Fatalf("after the connect answer: %+v, want session 0xabc, 3s", s)
	}
	heardIn(t, tr, "the connect request", sentConnect)
	later := time.Now().Add(time.Hour)
	if err := w.SetReadDeadline(later); err != nil || !spy.read.Equal(later) {
		t.Errorf("after the handshake: read deadline %v set as %v", later, spy.read)
	}

	sent5 := send(t, w, server, frame(be32(5), be32(3), []byte("/a/path")))
	sentPing := send(t, w, server, frame(be32(0xFFFFFFFE), be32(11)))
	send(t, w, server, frame(be32(6), be32(4))) // never answered
	answer(t, w, server, frame(be32(0xFFFFFFFF), be64(0), be32(0), []byte("watch event")))
	answer(t, w, server, frame(be32(77), be64(9), be32(0))) // answers nothing sent
	heardIn(t, tr, "the connect request (nothing answered yet)", sentConnect)
	answer(t, w, server, frame(be32(5), be64(9), be32(0)))
	heardIn(t, tr, "request 5", sent5)
	answer(t, w, server, frame(be32(0xFFFFFFFE), be64(9), be32(0)))
	heardIn(t, tr, "the ping", sentPing)
	answer(t, w, server, frame(be32(5), be64(9), be32(0))) // request 5 again: answered already
	heardIn(t, tr, "the ping", sentPing)
}

// deadlineSpy records the read deadline set on its connection.
type deadlineSpy struct {
	net.Conn
	read time.Time
}

func (d *deadlineSpy) SetReadDeadline(t time.Time) error { d.read = t; return nil }

// span is when a write began and ended.
type span struct{ from, to time.Time }

// send writes b through w, the server reading it, and returns when.
func send(t *testing.T, w *wireConn, server net.Conn, b []byte) span {
	t.Helper()
	go func() { _, _ = io.ReadFull(server, make([]byte, len(b))) }()
	from := time.Now()
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	return span{from, time.Now()}
}

// answer writes b from the server, in two pieces, and reads it through w.
func answer(t *testing.T, w *wireConn, server net.Conn, b []byte) {
	t.Helper()
	go func() {
		_, _ = server.Write(b[:5])
		_, _ = server.Write(b[5:])
	}()
	if _, err := io.ReadFull(w, make([]byte, len(b))); err != nil {
		t.Fatal(err)
	}
}

// heardIn checks that the tracker last heard from the session at a time
// within when, the sending of what.
func heardIn(t *testing.T, tr *tracker, what string, when span) {
	t.Helper()
	tr.mu.Lock()
	heard := tr.cur.heard
	tr.mu.Unlock()
	if heard.Before(when.from) || heard.After(when.to) {
		t.Errorf("heard from at %v, want when %s was sent (%v to %v)", heard, what, when.from, when.to)
	}
}

// frame returns the parts, as one frame's body, after its length.
func frame(parts ...[]byte) []byte {
	body := slices.Concat(parts...)
	return append(be32(uint32(len(body))), body...)
}

func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
func be64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
