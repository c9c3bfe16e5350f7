package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer the node's goroutines may log into.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServeWarmsDatabase: once serving, the node warms its database file in
// the background.
func TestServeWarmsDatabase(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--data", dir, "--resolver-addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0",
		"--dns-addr", "127.0.0.1:0", "--hdl-addr", "127.0.0.1:0", "--ready-file", filepath.Join(dir, "ready"),
		"--shutdown-delay", "0", "--linkcheck-interval", "0"}
	cfg, _, err := loadConfig("serve", args, func(string) string { return "" }, io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	n, err := startNode(ctx, cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- n.run(ctx) }()
	defer stopTestNode(t, cancel, done)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		out := logs.String()
		if i := strings.Index(out, "database file warmed"); i >= 0 {
			if !strings.Contains(out[i:], "bytes=") || strings.Contains(out[i:], "bytes=0 ") {
				t.Errorf("warm-up log line without the bytes brought in:\n%s", out[i:])
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no warm-up within 5 s of start:\n%s", out)
		}
	}
}
