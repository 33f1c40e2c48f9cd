package redisstock_test

import (
	"context"
	"strings"
	"testing"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/order/redisdecr/redisstock"
)

// Slot is Redis's own: the values CLUSTER KEYSLOT gives, and the real
// cluster agrees on a bucket's name.
func TestSlot(t *testing.T) {
	for tag, want := range map[string]int{"foo": 12182, "123456789": 12739, "": 0} {
		if got := redisstock.Slot(tag); got != want {
			t.Errorf("Slot(%q) = %d, want %d", tag, got, want)
		}
	}
}

// Each bucket's name lies in the middle quarter of its share of the
// slots, apart from the product's and the other buckets' names, and the
// same name comes back every time.
func TestBucketNames(t *testing.T) {
	for _, k := range []int{2, 3, 4, 16} {
		names := redisstock.Buckets("hot", k)
		seen := map[string]bool{}
		for b, name := range names {
			lo, hi := b*redisstock.Slots/k, (b+1)*redisstock.Slots/k
			if s := redisstock.Slot(name); s < lo+(hi-lo)/4 || s >= hi-(hi-lo)/4 {
				t.Errorf("k=%d: bucket %d %q in slot %d, want the middle of %d..%d", k, b, name, s, lo, hi)
			}
			if !strings.HasPrefix(name, "hot~b") || seen[name] || name != redisstock.Bucket("hot", b, k) {
				t.Errorf("k=%d: bucket %d named %q", k, b, name)
			}
			seen[name] = true
		}
	}
}

// On the real Redis Cluster (three masters, equal runs of slots), a
// product's three buckets have their keys on three different masters, and
// the cluster computes the slots Slot does.
func TestBucketsOnDifferentMasters(t *testing.T) {
	c := testenv.NewRedisCluster(t)
	cl := c.Client()
	ctx := context.Background()
	masters := map[string]bool{}
	for _, name := range redisstock.Buckets(c.Key("hot"), 3) {
		key := redisstock.StockKey(name)
		slot, err := cl.ClusterKeySlot(ctx, key).Result()
		if err != nil || int(slot) != redisstock.Slot(name) {
			t.Errorf("CLUSTER KEYSLOT %s = %d, %v; want %d", key, slot, err, redisstock.Slot(name))
		}
		m, err := cl.MasterForKey(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		masters[m.Options().Addr] = true
	}
	if len(masters) != 3 {
		t.Errorf("three buckets on %d masters (%v), want 3", len(masters), masters)
	}
}
