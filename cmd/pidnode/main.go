package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"pidnode/handlev"
	"pidnode/internal/buildinfo"
	"pidnode/store"
	"pidnode/write"
)

func main() {
	steadySysmon(os.Args)
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

const usage = `pidnode — a persistent-identifier node compatible with the Handle System

usage:
  pidnode serve    [--config FILE] [flags]   run every listener
  pidnode import   --data DIR FILE           offline import of JSON Lines ("-" = stdin)
  pidnode export   --data DIR                JSON Lines of every record on stdout
  pidnode backup   --data DIR FILE           consistent copy of the database file
  pidnode keygen   FILE                      create an RSA key for --hdl-key
  pidnode siteinfo [flags]                   print this node's HS_SITE as siteinfo.json
  pidnode cluster seed --data DIR --etcd-endpoints URLS
                                             load a stopped node's database into an empty etcd prefix
  pidnode cluster reclaim --etcd-endpoints URLS
                                             free a full etcd's space (compact, defragment, disarm NOSPACE)
  pidnode cluster move-namespace --namespace NS --to SHARD --etcd-shard NAME=URLS…
                                             move a namespace to another etcd shard while the nodes run
  pidnode version                            module version, VCS revision and time, Go version
  pidnode help     [COMMAND]                 this list, or one command's usage and flags
`

// commandUsage is each subcommand's usage line, and the settings it takes as
// flags (nil: every setting; flagless: none).
var commandUsage = map[string]struct {
	line  string
	flags map[string]bool
}{
	"serve":    {"pidnode serve [--config FILE] [flags]", nil},
	"import":   {"pidnode import --data DIR FILE   (FILE may be - for stdin)", offlineFlags},
	"export":   {"pidnode export --data DIR > records.jsonl", offlineFlags},
	"backup":   {"pidnode backup --data DIR FILE", offlineFlags},
	"keygen":   {"pidnode keygen FILE", flagless},
	"siteinfo": {siteinfoUsage, siteinfoFlags},
	"cluster":  {"pidnode cluster seed --data DIR --etcd-endpoints URLS [--etcd-prefix P] | pidnode cluster reclaim --etcd-endpoints URLS | pidnode cluster move-namespace --namespace NS --to SHARD --etcd-shard NAME=URLS…", clusterSeedFlags},
	"version":  {"pidnode version", flagless},
	"help":     {"pidnode help [COMMAND]", flagless},
}

var flagless = map[string]bool{}

// usageLine is cmd's usage line ("pidnode CMD [flags]" for one missing from commandUsage).
func usageLine(cmd string) string {
	if u := commandUsage[cmd].line; u != "" {
		return u
	}
	return "pidnode " + cmd + " [flags]"
}

// commandHelp prints cmd's usage line and its flags with their environment
// variables and defaults.
func commandHelp(w io.Writer, cmd string) {
	u := commandUsage[cmd]
	fmt.Fprintf(w, "usage: %s\n", usageLine(cmd))
	if u.flags != nil && len(u.flags) == 0 {
		return
	}
	cfg := defaultConfig()
	fs, _, _ := configFlags(cmd, &cfg, u.flags)
	fs.SetOutput(w)
	fmt.Fprintln(w, "\nflags (each also a PIDNODE_* variable and a key of the --config file, - written _):")
	fs.PrintDefaults()
}

// run is main without the process: it returns the exit code, so tests can call it.
func run(args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmd, rest := args[0], args[1:]
	var err error
	switch cmd {
	case "serve":
		err = cmdServe(rest, getenv, stdout, stderr)
	case "import":
		err = cmdImport(rest, getenv, stdin, stdout, stderr)
	case "export":
		err = cmdExport(rest, getenv, stdout, stderr)
	case "backup":
		err = cmdBackup(rest, getenv, stdout, stderr)
	case "keygen":
		err = cmdKeygen(rest, stdout, stderr)
	case "siteinfo":
		err = cmdSiteinfo(rest, getenv, stdout, stderr)
	case "cluster":
		err = cmdCluster(rest, getenv, stdout, stderr)
	case "version":
		if len(rest) != 0 {
			fmt.Fprintln(stderr, "usage: pidnode version")
			return 2
		}
		fmt.Fprintln(stdout, "pidnode", buildinfo.Read())
	case "help", "-h", "--help":
		switch {
		case len(rest) == 0:
			fmt.Fprint(stdout, usage)
		case len(rest) == 1 && commandUsage[rest[0]].line != "":
			commandHelp(stdout, rest[0])
		default:
			fmt.Fprintf(stderr, "pidnode help: unknown command %q\n\n%s", strings.Join(rest, " "), usage)
			return 2
		}
	default:
		fmt.Fprintf(stderr, "pidnode: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "run 'pidnode help %s' for the full help\n", cmd)
		return 2
	default:
		// The one place an error is printed; one line, whatever the cause.
		fmt.Fprintf(stderr, "pidnode %s: %s\n", cmd, oneLine(err.Error()))
		return 1
	}
}

func dbPath(dataDir string) string { return filepath.Join(dataDir, "pidnode.db") }

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

func newNamer(cfg *Config) (*handlev.Namer, error) {
	return handlev.NewNamer(handlev.NamerConfig{
		Prefix:     cfg.Prefix,
		TestPrefix: cfg.TestPrefix,
		Extra:      cfg.ExtraPrefix,
		Svc:        cfg.Svc,
	})
}

var offlineFlags = map[string]bool{"data": true, "model": true, "prefix": true, "test-prefix": true, "extra-prefix": true, "svc": true, "log-level": true}

// cmdImport loads JSON Lines (docs/product.md §9.1) into the database, offline.
func cmdImport(args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, rest, err := loadConfig("import", args, getenv, stderr, offlineFlags)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		fmt.Fprintln(stderr, "usage: pidnode import --data DIR FILE   (FILE may be - for stdin)")
		return errUsage
	}
	namer, err := newNamer(cfg)
	if err != nil {
		return err
	}
	in := stdin
	if rest[0] != "-" {
		f, err := os.Open(rest[0])
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	if err := os.MkdirAll(cfg.Data, 0o750); err != nil {
		return fileError("data directory", cfg.Data, "data", err)
	}
	db, err := openStore(cfg.Data, nil)
	if err != nil {
		return err
	}
	// A cluster node's copy is written only by applying etcd: records
	// imported into it would exist on this node alone.
	if rev, err := db.AppliedRevision(); err != nil || rev > 0 {
		db.Close()
		if err != nil {
			return err
		}
		return &startError{msg: fmt.Sprintf("%s is a cluster node's copy of etcd (applied revision %d)", dbPath(cfg.Data), rev),
			hint: "import into a single node's database and load it with `pidnode cluster seed`, or write through the admin API"}
	}
	n, err := db.Import(in, func(h string) (string, error) {
		k, _, err := namer.Key(h)
		return k, err
	})
	err = prefixHint(err)
	if err == nil {
		// Imported records under our own prefixes become searchable by URL and words
		// (the record indexes); records of other prefixes are not indexed.
		var model []byte
		if model, err = readModel(cfg.Model); err == nil {
			_, err = write.Reindex(db, namer, model)
		}
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	fmt.Fprintf(stdout, "imported %d records into %s\n", n, dbPath(cfg.Data))
	return err
}

// prefixHint adds to an import refused for a prefix the node does not serve
// how to serve it: the flags are known here, not in store or handlev.
func prefixHint(err error) error {
	var pe *handlev.PrefixError
	if !errors.As(err, &pe) {
		return err
	}
	return &startError{msg: err.Error(), err: err, hint: fmt.Sprintf(
		"serve it with --extra-prefix %s (config key extra_prefix, env PIDNODE_EXTRA_PREFIX) or as --prefix or --test-prefix, "+
			"on import and on serve alike", pe.Prefix)}
}

// cmdExport writes every record as JSON Lines on stdout.
func cmdExport(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, rest, err := loadConfig("export", args, getenv, stderr, offlineFlags)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		fmt.Fprintln(stderr, "usage: pidnode export --data DIR > records.jsonl")
		return errUsage
	}
	db, err := openExisting(cfg.Data)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.Export(stdout)
}

// cmdBackup writes a consistent copy of the database file. A running node holds
// the file's lock; its backup goes through the admin API instead.
func cmdBackup(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, rest, err := loadConfig("backup", args, getenv, stderr, offlineFlags)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		fmt.Fprintln(stderr, "usage: pidnode backup --data DIR FILE")
		return errUsage
	}
	db, err := openExisting(cfg.Data)
	if err != nil {
		return err
	}
	defer db.Close()
	tmp := rest[0] + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	n, err := db.Backup(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, rest[0])
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	fmt.Fprintf(stdout, "backup of %s written to %s (%d bytes)\n", dbPath(cfg.Data), rest[0], n)
	return nil
}

// openExisting opens the database of dataDir, refusing to create a new one: an
// export or backup of a mistyped directory should fail, not produce nothing.
func openExisting(dataDir string) (*store.DB, error) {
	p := dbPath(dataDir)
	if _, err := os.Stat(p); err != nil {
		return nil, fmt.Errorf("no database at %s: %w", p, err)
	}
	db, err := store.Open(store.Config{Path: p})
	var le *store.LockedError
	if errors.As(err, &le) {
		who := "a running node"
		if le.PID > 0 {
			who = fmt.Sprintf("a running pidnode (pid %d)", le.PID)
		}
		return nil, &startError{msg: fmt.Sprintf("%s is in use by %s", p, who),
			hint: "take the backup through its admin API (pidctl backup FILE)", err: err}
	}
	return db, err
}

// signalContext is cancelled on SIGINT or SIGTERM, which starts the graceful
// shutdown. A second SIGINT or SIGTERM before the process ends exits at
// once with status 1, after one line on stderr: the operator who presses
// Ctrl-C twice does not want to wait. The database is crash-safe, so this
// loses nothing acknowledged. stop stops listening for both signals.
func signalContext(stderr io.Writer) (ctx context.Context, stop context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	stopped := make(chan struct{})
	go func() {
		select {
		case <-ch:
			cancel()
		case <-stopped:
			return
		}
		select {
		case s := <-ch:
			fmt.Fprintf(stderr, "pidnode: second %v during the shutdown: exiting now\n", s)
			os.Exit(1)
		case <-stopped:
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(stopped)
			cancel()
		})
	}
}
