package sim

import (
	"bytes"
	"log/slog"
	"sync"
)

// logSink collects every log line of a seed's clients, so that the oracle
// can look for secrets in them.
type logSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *logSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// logger is an instance's logger: everything, debug included, as text.
func (s *logSink) logger(instance string) *slog.Logger {
	return slog.New(slog.NewTextHandler(s, &slog.HandlerOptions{Level: slog.LevelDebug})).With("instance", instance)
}
