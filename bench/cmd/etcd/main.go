// Command etcd is etcd's own server (go.etcd.io/etcd/server/v3/etcdmain),
// built from the module pidnode already pins, for `make cluster` and
// `make bench-cluster`: no separate etcd download. It takes etcd's flags.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
