package containers

// SessionOf is the port session that holds container id ("" if none).
func (s *Store) SessionOf(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.byID[id]; e != nil {
		return e.session
	}
	return ""
}

// Sweep ends every expired container now, as the sweeper does.
func (s *Store) Sweep() { s.sweep() }
