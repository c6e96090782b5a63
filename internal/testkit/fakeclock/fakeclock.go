// Package fakeclock is a clock a test moves by hand, for code that takes
// a clock (an expiry, a reaper) and must be tested without sleeping: a
// verdict that waited on real time would depend on how busy the machine
// is.
//
//	clk := fakeclock.New(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC))
//	s := containers.New(p, containers.WithClock(clk.Now))
//	clk.Advance(21 * time.Minute) // the store's idle expiry has passed
package fakeclock

import (
	"sync"
	"time"
)

// Clock is a time that moves only when Advance is called. Its methods
// are safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a clock that reads start.
func New(start time.Time) *Clock { return &Clock{now: start} }

// Now reads the clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
