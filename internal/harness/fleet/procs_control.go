package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/flashsale/flashsale/internal/harness/tally"
	"github.com/flashsale/flashsale/internal/porthold"
)

// ErrNoShops is returned by the shop controls below when the fleet's shops
// are not processes it started (FleetConfig.Processes).
var ErrNoShops = errors.New("fleet: the shops are not processes of this fleet")

// Processes reports whether the fleet's shops are child processes it
// started (FleetConfig.Processes), which KillShop and RestartShop need.
func (f *Fleet) Processes() bool { return f.procs != nil }

// KillShop SIGKILLs shop i (0-based, in Targets' order) by its pid, waits
// until the process is reaped, and keeps its port for RestartShop. It
// returns the pid killed. One shop must not be killed or restarted by two
// callers at once; different shops may.
func (f *Fleet) KillShop(i int) (pid int, err error) {
	if f.procs == nil {
		return 0, ErrNoShops
	}
	s := f.procs.shops[i]
	pid = s.cmd.Process.Pid
	err = s.cmd.Process.Kill() // SIGKILL on Unix: no shutdown, no deferred call, nothing flushed
	<-s.exited
	s.stdin.Close()
	s.log.Close()
	s.hold, _ = porthold.Hold(s.addr)
	if err != nil && !errors.Is(err, os.ErrProcessDone) {
		return pid, fmt.Errorf("fleet: kill shop %d (pid %d): %w", i+1, pid, err)
	}
	return pid, nil
}

// RestartShop starts shop i (0-based) again on its port and returns once
// it answers /readyz (within shopReadyWithin), with its new pid.
func (f *Fleet) RestartShop(ctx context.Context, i int) (pid int, err error) {
	if f.procs == nil {
		return 0, ErrNoShops
	}
	s := f.procs.shops[i]
	if err := f.procs.start(ctx, s); err != nil {
		return 0, err
	}
	return s.cmd.Process.Pid, nil
}

// ShopPIDs are the process ids of the shops, in Targets' order; nil unless
// Processes.
func (f *Fleet) ShopPIDs() []int {
	if f.procs == nil {
		return nil
	}
	pids := make([]int, len(f.procs.shops))
	for i, s := range f.procs.shops {
		pids[i] = s.cmd.Process.Pid
	}
	return pids
}

// cpu is the CPU time the children spent so far: those that exited, as the
// OS counted them, and those running, as their /metrics say.
func (p *shopProcs) cpu(ctx context.Context) (time.Duration, error) {
	live, err := tally.ScrapeCPU{Targets: p.targets(), Client: p.ready}.CPU(ctx)
	if err != nil {
		return 0, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return live + p.reapedCPU, nil
}

// close stops every child that runs: SIGTERM (a graceful shutdown), then,
// after shopStopWithin, SIGKILL, each by its pid, and waits for them.
func (p *shopProcs) close() error {
	var wg sync.WaitGroup
	for _, s := range p.shops {
		if s.cmd == nil || s.cmd.Process == nil {
			s.hold.Release()
			continue
		}
		wg.Go(func() {
			select {
			case <-s.exited:
			default:
				if s.cmd.Process.Signal(syscall.SIGTERM) != nil {
					s.cmd.Process.Kill()
				}
				t := time.NewTimer(shopStopWithin)
				select {
				case <-s.exited:
				case <-t.C:
					s.cmd.Process.Kill()
					<-s.exited
				}
				t.Stop()
			}
			s.stdin.Close()
			s.log.Close()
			s.hold.Release()
		})
	}
	wg.Wait()
	return nil
}

// procsCPU is a process fleet's CPU: the load generator's own process (the
// embedded backends and the attacker) and its child shops.
type procsCPU struct{ p *shopProcs }

func (c procsCPU) CPU(ctx context.Context) (time.Duration, error) {
	own, err := tally.OwnCPU()
	if err != nil {
		return 0, err
	}
	kids, err := c.p.cpu(ctx)
	if err != nil {
		return 0, err
	}
	return own + kids, nil
}

func (c procsCPU) Describe() string {
	return fmt.Sprintf("the load generator's own process (the embedded backends and the attacker) and its %d shop processes (their /metrics while they run, the OS's count once they exited)", len(c.p.shops))
}
