package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFromEnv: the settings bench/README.md lists are read from the
// environment, and a value that is not a number is refused naming the
// variable.
func TestFromEnv(t *testing.T) {
	t.Setenv("N", "20000")
	t.Setenv("DUR", "2.5")
	t.Setenv("ROUNDS", "2")
	t.Setenv("EXTRA_ROUNDS", "0")
	t.Setenv("SPREAD_MAX", "7.5")
	t.Setenv("NGINX_WAIT", "1500")
	t.Setenv("HIT_BUDGETS", "1 5")
	t.Setenv("PROFILE", "0")
	t.Setenv("KEEP", "1")
	cfg, err := fromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.N != 20000 || cfg.Dur != 2500*time.Millisecond || cfg.Rounds != 2 || cfg.ExtraRounds != 0 || cfg.SpreadMax != 7.5 ||
		cfg.NginxWait != 1500*time.Second || !slices.Equal(cfg.HitBudgets, []float64{1, 5}) || cfg.Profile || !cfg.Keep {
		t.Errorf("fromEnv = %+v", cfg)
	}
	if cfg.Root == "" || cfg.LoadCPU != 1 || cfg.ServerCPU != 0 {
		t.Errorf("root %q, CPUs %d/%d", cfg.Root, cfg.ServerCPU, cfg.LoadCPU)
	}

	t.Setenv("EXTRA_ROUNDS", "")
	if cfg, _ := fromEnv(); cfg.ExtraRounds != 2 {
		t.Errorf("EXTRA_ROUNDS unset: %d extra rounds, want 2", cfg.ExtraRounds)
	}

	t.Setenv("N", "1e6x")
	t.Setenv("DUR", "-1")
	t.Setenv("HIT_BUDGETS", "1 five")
	_, err = fromEnv()
	for _, want := range []string{`N="1e6x"`, `DUR="-1"`, `HIT_BUDGETS="1 five"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("fromEnv error %v, want it to name %s", err, want)
		}
	}
}

// TestAnswerArgs: the suite runs only without arguments; -h prints the
// usage, and anything else is refused with it instead of starting a run.
func TestAnswerArgs(t *testing.T) {
	var out, errOut strings.Builder
	if code, stop := answerArgs(nil, &out, &errOut); stop || code != 0 || out.Len()+errOut.Len() > 0 {
		t.Errorf("no arguments: code %d, stop %v, output %q %q", code, stop, out.String(), errOut.String())
	}
	for _, h := range []string{"-h", "-help", "--help"} {
		out.Reset()
		errOut.Reset()
		if code, stop := answerArgs([]string{h}, &out, &errOut); !stop || code != 0 || !strings.HasPrefix(out.String(), "usage:") || errOut.Len() > 0 {
			t.Errorf("%s: code %d, stop %v, stdout %q, stderr %q", h, code, stop, out.String(), errOut.String())
		}
	}
	out.Reset()
	errOut.Reset()
	code, stop := answerArgs([]string{"N=1000"}, &out, &errOut)
	if !stop || code != 2 || out.Len() > 0 || !strings.Contains(errOut.String(), `unexpected argument "N=1000"`) || !strings.Contains(errOut.String(), "usage:") {
		t.Errorf("N=1000 as an argument: code %d, stop %v, stdout %q, stderr %q", code, stop, out.String(), errOut.String())
	}
}

// TestProgressOutlivesItsReader runs this test binary again with its
// standard error a pipe whose reader is closed, and has it write progress
// lines: the child must see the writes fail and go on (to its clean-up),
// not be ended by SIGPIPE as a write to descriptor 2 itself would end it.
func TestProgressOutlivesItsReader(t *testing.T) {
	if os.Getenv("SUITE_PROGRESS_CHILD") == "1" {
		w := progressOut()
		var failed int
		for range 3 {
			if _, err := fmt.Fprintln(w, "bench: [+0s] progress"); err != nil {
				failed++
			}
		}
		fmt.Printf("writes failed: %d\n", failed)
		os.Exit(0)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestProgressOutlivesItsReader$")
	cmd.Env = append(os.Environ(), "SUITE_PROGRESS_CHILD=1")
	cmd.Stderr = w
	out, err := cmd.Output()
	w.Close()
	if err != nil {
		t.Fatalf("child: %v (%s); output %q", err, cmd.ProcessState, out)
	}
	if !strings.Contains(string(out), "writes failed: 3") {
		t.Errorf("child's output %q, want every write to the closed pipe to fail", out)
	}
}

// TestHangupStops runs this test binary again as a run that never ends on
// its own, its standard error a pipe whose reader has gone (tee after the
// SSH session dropped), and sends it SIGHUP: the child must run the clean-up
// (here: create a file) and exit 130, not die of the hangup or of SIGPIPE
// while saying it stops.
func TestHangupStops(t *testing.T) {
	if marker := os.Getenv("SUITE_HANGUP_CHILD"); marker != "" {
		_, stopped, _ := runUntilSignal(func() (string, error) {
			fmt.Println("running")
			select {}
		}, func() {
			if err := os.WriteFile(marker, []byte("stopped\n"), 0o644); err != nil {
				os.Exit(3)
			}
		}, progressOut())
		if stopped {
			os.Exit(130)
		}
		os.Exit(4)
	}
	marker := filepath.Join(t.TempDir(), "stopped")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestHangupStops$")
	cmd.Env = append(os.Environ(), "SUITE_HANGUP_CHILD="+marker)
	cmd.Stderr = w
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if line != "running\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child's first line %q (%v)", line, err)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("child after SIGHUP: %v (%s), want exit status 130", err, cmd.ProcessState)
	}
	if b, err := os.ReadFile(marker); err != nil || string(b) != "stopped\n" {
		t.Errorf("clean-up did not run: %q, %v", b, err)
	}
}
