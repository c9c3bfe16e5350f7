// Command pidnode is the persistent-identifier node: one binary that serves
// public resolution (HTTP, DNS, native Handle protocol) and the keyed admin API
// from one bbolt file, plus the offline tools around it.
//
//	pidnode serve   [--config FILE] [flags]   run every listener
//	pidnode import  --data DIR FILE|-         load JSON Lines of Handle JSON records
//	pidnode export  --data DIR                write every record as JSON Lines
//	pidnode backup  --data DIR FILE           consistent copy of the database
//	pidnode keygen  FILE                      RSA key for --hdl-key
//	pidnode siteinfo [flags]                  this node's HS_SITE as siteinfo.json
//
// This package is wiring only (docs/architecture.md): it reads flags, environment and the
// config file, turns them into each package's Config, binds listeners and handles
// signals. Behaviour lives in the packages it wires.
package main
