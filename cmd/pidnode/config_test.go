package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"pidnode/cluster"
)

func envFrom(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// TestConfigPrecedence: flags beat the environment, which beats the file, which
// beats the defaults (docs/product.md §9.1).
func TestConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pidnode.toml")
	err := os.WriteFile(file, []byte(`
data = "/from/file"
svc = "filesvc"
prefix = "21.111"
cache_entries = 42
dns_zone = ["a.example=21.111"]
shutdown_timeout = "3s"
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	env := envFrom(map[string]string{
		"PIDNODE_CONFIG":   file,
		"PIDNODE_SVC":      "envsvc",
		"PIDNODE_PREFIX":   "21.222",
		"PIDNODE_DNS_ZONE": "b.example=21.222, c.example=21.T222",
	})
	cfg, rest, err := loadConfig("serve", []string{"--prefix", "21.333", "--demo", "extra"}, env, &bytes.Buffer{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"data from file", cfg.Data, "/from/file"},
		{"svc: env beats file", cfg.Svc, "envsvc"},
		{"prefix: flag beats env", cfg.Prefix, "21.333"},
		{"cache entries from file", cfg.CacheEntries, 42},
		{"zones: env list replaces file list", cfg.DNSZone, []string{"b.example=21.222", "c.example=21.T222"}},
		{"demo flag", cfg.Demo, true},
		{"default kept", cfg.TestPrefix, "21.T12345"},
		{"operator key defaults into data", cfg.OperatorKeyFile, filepath.Join("/from/file", "operator.key")},
		{"shutdown timeout", cfg.ShutdownTimeout.String(), "3s"},
		{"positional args", rest, []string{"extra"}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("no_such_setting = 1\n"), 0o600)
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"unknown key in file", []string{"--config", bad}, nil, `unknown setting "no_such_setting"`},
		{"bad integer flag", []string{"--cache-entries", "lots"}, nil, "positive integer"},
		{"bad env bool", nil, map[string]string{"PIDNODE_DEMO": "maybe"}, "PIDNODE_DEMO"},
		{"missing file", []string{"--config", filepath.Join(dir, "nope.toml")}, nil, "nope.toml"},
	}
	for _, c := range cases {
		_, _, err := loadConfig("serve", c.args, envFrom(c.env), &bytes.Buffer{}, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: loadConfig error = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}

// TestREADMEListsEverySetting keeps the README's configuration reference true:
// every flag, its environment variable and its config-file key must appear.
func TestREADMEListsEverySetting(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	cfg := defaultConfig()
	for _, s := range cfg.settings() {
		for _, want := range []string{"`--" + s.name + "`", "`" + s.env() + "`", "`" + strings.ReplaceAll(s.name, "-", "_") + "`"} {
			if !bytes.Contains(readme, []byte(want)) {
				t.Errorf("README.md does not mention %s (setting %s)", want, s.name)
			}
		}
	}
}

// TestConfigEtcdShards: --etcd-shard takes NAME=URL,URL… per flag, the
// environment every shard in one comma-separated list, the file a list of
// entries; etcdShards turns them into cluster shards and refuses bad ones.
func TestConfigEtcdShards(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pidnode.toml")
	os.WriteFile(file, []byte(`etcd_shard = ["reg=http://f:1", "d1=http://f:2,http://f:3"]`+"\n"), 0o600)
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want []cluster.Shard
		err  string
	}{
		{name: "flags", args: []string{"--etcd-shard", "reg=http://a:1,http://b:1", "--etcd-shard", "d1=http://c:1"},
			want: []cluster.Shard{{Name: "reg", Endpoints: []string{"http://a:1", "http://b:1"}}, {Name: "d1", Endpoints: []string{"http://c:1"}}}},
		{name: "env", env: map[string]string{"PIDNODE_ETCD_SHARD": "reg=http://a:1, http://b:1,d1=http://c:1"},
			want: []cluster.Shard{{Name: "reg", Endpoints: []string{"http://a:1", "http://b:1"}}, {Name: "d1", Endpoints: []string{"http://c:1"}}}},
		{name: "file", args: []string{"--config", file},
			want: []cluster.Shard{{Name: "reg", Endpoints: []string{"http://f:1"}}, {Name: "d1", Endpoints: []string{"http://f:2", "http://f:3"}}}},
		{name: "bad name", args: []string{"--etcd-shard", "Reg=http://a:1"}, err: "a-z"},
		{name: "no name", args: []string{"--etcd-shard", "http://a:1"}, err: "NAME=URL"},
		{name: "twice", args: []string{"--etcd-shard", "a=http://a:1", "--etcd-shard", "a=http://b:1"}, err: "named twice"},
		{name: "with endpoints", args: []string{"--etcd-shard", "a=http://a:1", "--etcd-endpoints", "http://b:1"}, err: "both set"},
	}
	for _, c := range cases {
		cfg, _, err := loadConfig("serve", c.args, envFrom(c.env), &bytes.Buffer{}, nil)
		var got []cluster.Shard
		if err == nil {
			got, err = etcdShards(cfg)
		}
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want it to mention %q", c.name, err, c.err)
		case c.err == "" && (err != nil || !reflect.DeepEqual(got, c.want)):
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}
