package redisstore

// LocalRevocations is how many revocations the instance's copy holds
// (browse_revocations.go); 0 before its first sync.
func (s *Store) LocalRevocations() int {
	s.mirror.mu.RLock()
	defer s.mirror.mu.RUnlock()
	if s.mirror.rev == nil {
		return 0
	}
	return len(s.mirror.rev.dl)
}
