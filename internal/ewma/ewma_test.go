package ewma_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/ewma"
)

// TestDuration: the first duration is the average; each next one moves it
// an eighth of the way.
func TestDuration(t *testing.T) {
	var a ewma.Duration
	if got := a.Get(); got != 0 {
		t.Errorf("empty average = %v, want 0", got)
	}
	a.Add(8 * time.Millisecond)
	a.Add(16 * time.Millisecond)
	if got, want := a.Get(), 9*time.Millisecond; got != want {
		t.Errorf("average of 8ms then 16ms = %v, want %v", got, want)
	}
	a.Add(time.Millisecond) // down as well as up: 9 - 8/8
	if got, want := a.Get(), 8*time.Millisecond; got != want {
		t.Errorf("then 1ms: %v, want %v", got, want)
	}
}

// TestDurationConcurrent: adds from many goroutines are none of them lost
// to a race; samples all alike leave the average where they are.
func TestDurationConcurrent(t *testing.T) {
	var a ewma.Duration
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				a.Add(5 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	if got := a.Get(); got != 5*time.Millisecond {
		t.Errorf("after 8000 samples of 5ms: %v", got)
	}
}

func ExampleDuration() {
	var hold ewma.Duration
	hold.Add(100 * time.Millisecond) // the first sample is the average
	for range 20 {
		hold.Add(20 * time.Millisecond) // orders got faster
	}
	fmt.Println(hold.Get().Round(time.Millisecond))
	// Output: 26ms
}
