package zklock_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/zklock"
)

// The ZooKeeper lock as a shop takes it: one Locker (one session) for the
// process, a handle per acquisition, the work done under the handle's
// Context, the grant's fence and epoch sent to the store with the writes.
// A second buyer waits in the queue behind the first and is woken by its
// release.
//
// It needs an ensemble, the one FLASHSALE_TEST_ZOOKEEPER names (.ci/run
// starts one; so does go run ./cmd/zkensemble). go test runs
// it through TestExample, where that variable is set.
func Example() {
	servers := strings.Split(os.Getenv(testenv.EnvZooKeeper), ",")
	ctx := context.Background()
	locker, err := zklock.New(ctx, servers, zklock.Options{Root: "/flashsale-example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer locker.Close()

	const key = "flashsale:lock:{p1}"
	first, err := locker.Lock(ctx, key, time.Second, 5*time.Second) // the first call also makes the root and the epoch
	if err != nil {
		fmt.Println(err)
		return
	}
	next := make(chan *dlock.Lock)
	go func() {
		l, err := locker.Lock(ctx, key, time.Second, 5*time.Second)
		if err != nil {
			fmt.Println(err)
		}
		next <- l
	}()

	// The work: stop if the session is lost (the Context ends).
	select {
	case <-first.Context().Done():
		fmt.Println("lost:", context.Cause(first.Context()))
	case <-time.After(10 * time.Millisecond):
	}
	if err := first.Release(ctx); err != nil {
		fmt.Println(err)
	}

	second := <-next
	if second == nil {
		return
	}
	fmt.Println("the second buyer's fence is larger:", second.Fence() > first.Fence())
	fmt.Println("from the same ensemble:", second.Epoch() == first.Epoch())
	_ = second.Release(ctx)
}

// TestExample runs Example against the ensemble and checks what it says.
func TestExample(t *testing.T) {
	testenv.NewZooKeeper(t) // skips without an ensemble
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	Example()
	os.Stdout = stdout
	w.Close()
	out, _ := io.ReadAll(r)
	want := "the second buyer's fence is larger: true\nfrom the same ensemble: true\n"
	if string(out) != want {
		t.Errorf("Example printed:\n%s\nwant:\n%s", out, want)
	}
}
