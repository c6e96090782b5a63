package subprocess

import "github.com/codeport/codeport/port"

// WorkerPIDs lists the process ids of the live workers, for the tests.
func WorkerPIDs(p *port.Port) []int {
	a := p.Driver().(*adapter)
	a.mu.Lock()
	defer a.mu.Unlock()
	var pids []int
	for _, w := range a.workers {
		if w.pid != 0 && !w.ending {
			pids = append(pids, w.pid)
		}
	}
	return pids
}

// SessionPID is the process id of the worker hosting a session, 0 if the
// session is unknown.
func SessionPID(p *port.Port, id string) int {
	a := p.Driver().(*adapter)
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.sessions[id]; ok {
		return s.w.pid
	}
	return 0
}

// Warming is how many workers the filler is starting, for the tests.
func Warming(p *port.Port) int {
	a := p.Driver().(*adapter)
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.warming
}
